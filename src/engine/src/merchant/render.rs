//! What the actors need shown, and do not show themselves: a write's answer and its change
//! events are stored in the write's own transaction, so they are rendered there, by the read
//! side (`views`), which the server hands the registry when it starts.

use crate::merchant::job::{DeleteOutcome, ObjectOutcome};
use crate::merchant::state::{Memo, MerchantState};
use domain::catalogue::file::ImportReport;
use domain::record::Visit;
use domain::stock::levels::StockLevel;

pub trait Render: Send + Sync + 'static {
    /// A record as reads show it; the rendering stays in `memo` for the reads that follow.
    fn record(&self, record: &dyn Visit, memo: &Memo, state: &MerchantState) -> String;

    /// A record as its change events show it; `memo` is its kept rendering, when it has one
    /// (most records show their events as reads show them).
    fn event(&self, record: &dyn Visit, memo: Option<&Memo>, state: &MerchantState) -> String;

    /// The data of a `stock.changed` event.
    fn stock(&self, store_id: i64, product_id: i64, level: StockLevel) -> String;

    /// The data of a `stock.shortfall` event.
    fn shortfall(&self, shortfall: &domain::offline::sync::Shortfall) -> String;

    /// A sync's answer, as kept for an `Idempotency-Key`.
    fn synced(&self, synced: &crate::offline::sync::Synced) -> String;

    /// A batch write's answer, as kept for an `Idempotency-Key` (read back by `serde_json`).
    fn written(&self, outcomes: &[ObjectOutcome]) -> String;

    /// A delete's answer, as kept for an `Idempotency-Key`.
    fn deleted(&self, outcomes: &[(i64, DeleteOutcome)]) -> String;

    /// A catalogue import's report, as kept for an `Idempotency-Key`.
    fn imported(&self, report: &ImportReport) -> String;

    /// A change event as streams and webhooks send it.
    fn payload(&self, event: &domain::event::Event) -> String;
}
