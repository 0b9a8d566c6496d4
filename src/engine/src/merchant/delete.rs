//! A soft delete of some records of one resource.

use std::collections::BTreeSet;
use std::time::Instant;

use super::job::{
    record_events, replay_methods, send_answer, want_missing, Answer, DeleteOutcome, Job, Replay,
    Wants,
};
use crate::merchant::ports::WriteStep;
use crate::merchant::render::Render;
use crate::merchant::resource::Resource;
use crate::merchant::state::MerchantState;
use domain::batch::{Change, Idempotency, StoredAnswer};
use domain::event::NewEvent;
use domain::Failure;

/// A soft delete of some records of one resource.
pub(crate) struct DeleteJob<R> {
    ids: BTreeSet<i64>,
    sent: Instant,
    reply: Option<Answer<Vec<(i64, DeleteOutcome)>>>,
    outcomes: Vec<(i64, DeleteOutcome)>,
    /// The records deleted, as storage rewrites them.
    changed: Vec<(Change, R)>,
    failure: Option<Failure>,
    replay: Replay<Vec<(i64, DeleteOutcome)>>,
}

impl<R: Resource> DeleteJob<R> {
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
            changed: Vec::new(),
            failure: None,
            replay: Replay::new(key),
        }
    }
}

impl<R: Resource> Job for DeleteJob<R> {
    fn sent(&self) -> Instant {
        self.sent
    }

    fn objects(&self) -> usize {
        self.ids.len()
    }

    fn wants(&self, state: &MerchantState, wants: &mut Wants) {
        for id in &self.ids {
            want_missing::<R>(state, *id, wants);
        }
    }

    fn apply(&mut self, state: &mut MerchantState, _: &mut dyn Iterator<Item = i64>, now: i64) {
        self.outcomes.clear();
        self.changed.clear();
        if self.settled() {
            return;
        }
        for id in &self.ids {
            let outcome = match state.find::<R>(*id) {
                None => DeleteOutcome::Missing,
                Some(record) if record.locked() => {
                    DeleteOutcome::Refused("it is completed.".into())
                }
                Some(record) => match record.check_delete(state) {
                    Err(why) => DeleteOutcome::Refused(why),
                    Ok(()) => {
                        let mut record = record.clone();
                        record.mark_deleted(now);
                        state.put(record.clone());
                        self.changed.push((Change::Updated, record));
                        DeleteOutcome::Deleted
                    }
                },
            };
            self.outcomes.push((*id, outcome));
        }
    }

    fn changed(&self) -> bool {
        !self.changed.is_empty()
    }

    fn steps<'a>(&'a self, out: &mut Vec<WriteStep<'a>>) {
        if !self.changed.is_empty() {
            out.push(WriteStep::Records(R::changes(&self.changed)));
        }
    }

    replay_methods!(answer: outcomes, rendered: deleted);

    fn events(&self, state: &MerchantState, render: &dyn Render, out: &mut Vec<NewEvent>) {
        let actions: Vec<(i64, &'static str)> = self
            .changed
            .iter()
            .map(|(_, r)| (r.id(), "deleted"))
            .collect();
        let written = |id| self.changed.iter().map(|(_, r)| r).find(|r| r.id() == id);
        record_events::<R>(state, render, &actions, written, out);
    }
}
