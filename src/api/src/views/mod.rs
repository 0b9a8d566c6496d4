//! The read side: what reads answer and how records and answers are shown. Handlers ask it
//! typed questions (a list query, a record by id) and get JSON back; they never walk a
//! merchant's state. Records render from their declarations (`json`), once per version
//! (`records`); nothing else in the server builds a record's JSON.

pub mod events;
pub mod json;
pub mod lists;
pub mod people;
pub mod records;
pub mod sales;
pub mod till;

use std::sync::Arc;

pub use records::Renderer;

use domain::Failure;
use engine::merchant::registry::Merchants;
use engine::merchant::state::MerchantState;

/// One published state of a merchant, as a read holds it: what it answers is consistent with
/// its event-log position.
#[derive(Clone)]
pub struct Snapshot(Arc<MerchantState>);

impl Snapshot {
    /// The merchant's latest published state (started and loaded if it is not running).
    pub async fn of(merchants: &Merchants, merchant_id: i64) -> Result<Self, Failure> {
        merchants.snapshot(merchant_id).await.map(Snapshot)
    }

    pub fn merchant_id(&self) -> i64 {
        self.0.merchant_id
    }

    /// The last change event this state reflects (`x-merchant-sequence`).
    pub fn position(&self) -> i64 {
        self.0.event_seq
    }

    pub(crate) fn state(&self) -> &MerchantState {
        &self.0
    }
}
