//! Erasing customers (`POST /customer/erase`, docs/customers.md): a write like a delete,
//! serialized with the merchant's other writes. Each customer named becomes anonymous and
//! deleted in the cached state and the database; the cached orders naming it lose the contact
//! details they copied, and storage scrubs the rest (stored orders, event payloads, logs,
//! stored answers) in the same transaction. The event is `customer.erased`.

use std::collections::BTreeSet;
use std::time::Instant;

use crate::merchant::job::{
    record_events, replay_methods, send_answer, Answer, DeleteOutcome, Job, Replay,
};
use crate::merchant::ports::{Registered, WriteStep};
use crate::merchant::render::Render;
use crate::merchant::resource::Resource;
use crate::merchant::state::MerchantState;
use domain::batch::{Change, Idempotency, StoredAnswer};
use domain::customers::customer::CustomerRecord;
use domain::event::NewEvent;
use domain::sales::order::OrderRecord;
use domain::Failure;

/// One customer made anonymous by the job: the record as it is now, and the identifying
/// values it and its cached orders held (looked for in free text).
struct Erased {
    /// The record (one, as storage rewrites it).
    customer: [(Change, CustomerRecord); 1],
    held: Vec<String>,
}

pub(crate) struct EraseJob {
    ids: BTreeSet<i64>,
    sent: Instant,
    reply: Option<Answer<Vec<(i64, DeleteOutcome)>>>,
    outcomes: Vec<(i64, DeleteOutcome)>,
    erased: Vec<Erased>,
    /// The cached orders naming an erased customer, as storage rewrites them.
    orders: Vec<(Change, OrderRecord)>,
    failure: Option<Failure>,
    replay: Replay<Vec<(i64, DeleteOutcome)>>,
}

impl EraseJob {
    pub(crate) fn new(
        ids: BTreeSet<i64>,
        key: Option<Idempotency>,
        reply: Answer<Vec<(i64, DeleteOutcome)>>,
    ) -> Self {
        Self {
            ids,
            sent: Instant::now(),
            reply: Some(reply),
            outcomes: Vec::new(),
            erased: Vec::new(),
            orders: Vec::new(),
            failure: None,
            replay: Replay::new(key),
        }
    }

    /// Makes customer `id` anonymous in `state`, with the cached orders naming it.
    fn erase(&mut self, state: &mut MerchantState, id: i64, now: i64) -> DeleteOutcome {
        let Some(entry) = state.entry::<CustomerRecord>(id) else {
            return DeleteOutcome::Missing;
        };
        let mut customer = entry.record().clone();
        // Erased again: the customer is anonymous already, but orders naming it may have been
        // given contact details since; they, and their copies, are scrubbed again.
        let mut held = Vec::new();
        if customer.erase_date.is_none() {
            held = customer.erase(now);
            state.put(customer.clone());
        }
        let named: Vec<OrderRecord> = OrderRecord::collection(state)
            .values()
            .map(|e| e.record())
            .filter(|o| o.customer_id == Some(id))
            .cloned()
            .collect();
        for mut order in named {
            held.extend(order.erase_customer());
            state.put(order.clone());
            self.orders.push((Change::Updated, order));
        }
        self.erased.push(Erased {
            customer: [(Change::Updated, customer)],
            held,
        });
        DeleteOutcome::Deleted
    }
}

impl Job for EraseJob {
    fn sent(&self) -> Instant {
        self.sent
    }

    fn objects(&self) -> usize {
        self.ids.len()
    }

    fn apply(&mut self, state: &mut MerchantState, _: &mut dyn Iterator<Item = i64>, now: i64) {
        self.outcomes.clear();
        self.erased.clear();
        self.orders.clear();
        if self.settled() {
            return;
        }
        for id in self.ids.clone() {
            let outcome = self.erase(state, id, now);
            self.outcomes.push((id, outcome));
        }
    }

    fn changed(&self) -> bool {
        !self.erased.is_empty()
    }

    /// The orders, then each customer's row and the scrub of what is stored beside it.
    fn steps<'a>(&'a self, out: &mut Vec<WriteStep<'a>>) {
        if !self.orders.is_empty() {
            out.push(WriteStep::Records(OrderRecord::changes(&self.orders)));
        }
        for erased in &self.erased {
            out.push(WriteStep::Records(CustomerRecord::changes(
                &erased.customer,
            )));
            out.push(WriteStep::EraseCustomer {
                customer_id: erased.customer[0].1.id,
                held: erased.held.clone(),
            });
        }
    }

    replay_methods!(answer: outcomes, rendered: deleted);

    fn events(&self, state: &MerchantState, render: &dyn Render, out: &mut Vec<NewEvent>) {
        let actions: Vec<(i64, &'static str)> = self
            .erased
            .iter()
            .map(|e| (e.customer[0].1.id, "erased"))
            .collect();
        let written = |id| {
            self.erased
                .iter()
                .map(|e| &e.customer[0].1)
                .find(|c| c.id == id)
        };
        record_events::<CustomerRecord>(state, render, &actions, written, out);
    }
}
