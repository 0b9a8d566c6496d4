//! Syncing sales a till made offline (`POST /basket/sync`, docs/offline.md): a write like a
//! batch of baskets, serialized with the merchant's other writes. Each sale is recorded once
//! per `clientId` (a repeat answers the basket it made, from the state or from history), at
//! the till's prices, with its payments, completed at its time of sale.

use std::time::Instant;

use crate::merchant::job::{
    replay_methods, send_answer, Answer, Job, ObjectOutcome, Replay, Saved,
};
use crate::merchant::ports::WriteStep;
use crate::merchant::render::Render;
use crate::merchant::resource::Kind;
use crate::merchant::state::MerchantState;
use crate::merchant::write::Changes;
use crate::offline::sale::{self as offline, Recorded};
use domain::batch::Idempotency;
use domain::batch::StoredAnswer;
use domain::event::{EventKind, NewEvent};
use domain::offline::sync::{OfflineSale, Shortfall};
use domain::sales::basket::BasketRecord;
use domain::sales::payment::TransactionRecord;
use domain::sales::totals::Deltas;
use domain::stock::levels::StockMove;
use domain::{Failure, Refusal};

/// A sale of the body: parsed, or what is wrong with it.
pub type SaleInput = (String, Result<OfflineSale, Vec<String>>);

/// A sync's answer: each sale's outcome and how many shortfalls the new ones made.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Synced {
    pub outcomes: Vec<ObjectOutcome>,
    pub shortfalls: usize,
}

/// Per sale: (new, basket id, detail) or the refusal.
type Outcome = Result<(bool, i64, String), Refusal>;

pub(crate) struct SyncJob {
    sales: Vec<SaleInput>,
    caller: i64,
    sent: Instant,
    reply: Option<Answer<Synced>>,
    outcomes: Vec<Outcome>,
    baskets: Changes<BasketRecord>,
    payments: Changes<TransactionRecord>,
    shortfalls: Vec<Shortfall>,
    failure: Option<Failure>,
    replay: Replay<Synced>,
}

impl SyncJob {
    pub(crate) fn new(
        sales: Vec<SaleInput>,
        caller: i64,
        key: Option<Idempotency>,
        reply: Answer<Synced>,
    ) -> Self {
        Self {
            sales,
            caller,
            sent: Instant::now(),
            reply: Some(reply),
            outcomes: Vec::new(),
            baskets: Changes::default(),
            payments: Changes::default(),
            shortfalls: Vec::new(),
            failure: None,
            replay: Replay::new(key),
        }
    }

    fn parsed(&self) -> impl Iterator<Item = &OfflineSale> {
        self.sales.iter().filter_map(|(_, s)| s.as_ref().ok())
    }

    /// One sale: the basket an earlier sync made for its `clientId`, or a new one.
    fn sync(
        &mut self,
        state: &mut MerchantState,
        sale: &OfflineSale,
        ids: &mut dyn Iterator<Item = i64>,
        now: i64,
    ) -> Outcome {
        let made = state
            .index
            .by_client
            .get(&(Kind::Basket, sale.client_id.clone()));
        if let Some(&id) = made {
            let same = state
                .entry::<BasketRecord>(id)
                .is_some_and(|b| sale.fingerprint.made(b.client_digest.as_deref()));
            return if same {
                Ok((
                    false,
                    id,
                    format!(
                        "Sale {} was already recorded as basket {id}.",
                        sale.client_id
                    ),
                ))
            } else {
                Err(Refusal::Conflict(vec![format!(
                    "clientId: sale {} was recorded as basket {id} from a different body; a \
                     recorded sale never changes (send it as it was, or give a new sale a new \
                     clientId).",
                    sale.client_id
                )]))
            };
        }
        let Recorded {
            basket,
            payments,
            shortfalls,
        } = offline::record(state, sale, ids, now, self.caller).map_err(Refusal::Invalid)?;
        for payment in payments {
            self.payments.accept(state, true, payment, false);
        }
        let id = basket.id;
        let warned = basket.sync_warnings.as_ref().map_or(0, |w| w.0.len());
        self.baskets.accept(state, true, basket, false);
        self.shortfalls.extend(shortfalls);
        let detail = match warned {
            0 => format!("Sale {} recorded as basket {id}.", sale.client_id),
            n => format!(
                "Sale {} recorded as basket {id}, with {n} warning(s).",
                sale.client_id
            ),
        };
        Ok((true, id, detail))
    }

    fn rendered(&self, state: &MerchantState, render: &dyn Render) -> Synced {
        let outcomes =
            self.sales
                .iter()
                .zip(&self.outcomes)
                .map(|((key, _), outcome)| ObjectOutcome {
                    key: key.clone(),
                    result: outcome.clone().map(|(created, id, detail)| Saved {
                        created,
                        id,
                        json: match state.entry::<BasketRecord>(id) {
                            Some(e) => render.record(e.record(), e.memo(), state),
                            None => self.baskets.records().find(|b| b.id == id).map_or_else(
                                || "null".to_owned(),
                                |b| render.event(b, None, state),
                            ),
                        },
                        detail,
                    }),
                })
                .collect();
        Synced {
            outcomes,
            shortfalls: self.shortfalls.len(),
        }
    }
}

impl Job for SyncJob {
    fn sent(&self) -> Instant {
        self.sent
    }

    fn objects(&self) -> usize {
        self.sales.len()
    }

    fn reads_stock(&self) -> bool {
        true
    }

    fn client_ids(&self) -> Vec<(Kind, String)> {
        self.parsed()
            .map(|s| (Kind::Basket, s.client_id.clone()))
            .collect()
    }

    fn ids_needed(&self, _: &MerchantState) -> usize {
        self.parsed().map(offline::ids_needed).sum()
    }

    fn apply(&mut self, state: &mut MerchantState, ids: &mut dyn Iterator<Item = i64>, now: i64) {
        self.outcomes.clear();
        self.baskets.clear();
        self.payments.clear();
        self.shortfalls.clear();
        if self.settled() {
            return;
        }
        let sales = std::mem::take(&mut self.sales);
        for (_, sale) in &sales {
            let outcome = match sale {
                Err(problems) => Err(Refusal::Invalid(problems.clone())),
                Ok(sale) => self.sync(state, sale, ids, now),
            };
            self.outcomes.push(outcome);
        }
        self.sales = sales;
    }

    fn changed(&self) -> bool {
        !self.baskets.is_empty()
    }

    fn moves(&self) -> &[StockMove] {
        self.baskets.moves()
    }

    fn totals(&self) -> Option<&Deltas> {
        Some(self.baskets.totals())
    }

    fn steps<'a>(&'a self, out: &mut Vec<WriteStep<'a>>) {
        self.baskets.steps(out);
        self.payments.steps(out);
    }

    replay_methods!();

    fn answer(mut self: Box<Self>, state: &MerchantState, render: &dyn Render) {
        let fresh = self.rendered(state, render);
        send_answer(
            self.reply.take(),
            self.failure.take(),
            self.replay.settled.take(),
            || fresh,
        );
    }

    fn stored_answer(&self, state: &MerchantState, render: &dyn Render) -> String {
        render.synced(&self.rendered(state, render))
    }

    fn events(&self, state: &MerchantState, render: &dyn Render, out: &mut Vec<NewEvent>) {
        self.baskets.events(state, render, out);
        self.payments.events(state, render, out);
        for s in &self.shortfalls {
            out.push(NewEvent {
                kind: EventKind::new("stock", "shortfall"),
                object_id: s.product_id,
                data: render.shortfall(s),
            });
        }
    }
}
