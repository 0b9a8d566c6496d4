//! The change-event log, read for delta reads and the event stream.

use std::collections::BTreeSet;

use crate::services::Services;
use domain::event::LogPosition;
use domain::event::{ChangeWindow, Event};
use domain::Failure;

impl Services {
    /// Ids of records of `object` changed in `(after, upto]`; `None` when the log no longer
    /// reaches back to `after`.
    pub async fn changed_since(
        &self,
        window: ChangeWindow<'_>,
    ) -> Result<Option<BTreeSet<i64>>, Failure> {
        Ok(self.storage.changed_since(window).await?)
    }

    pub async fn events_after(
        &self,
        merchant_id: i64,
        after: i64,
        limit: i64,
    ) -> Result<Vec<Event>, Failure> {
        Ok(self.storage.events_after(merchant_id, after, limit).await?)
    }

    pub async fn event_position(&self, merchant_id: i64) -> Result<LogPosition, Failure> {
        Ok(self.storage.event_position(merchant_id).await?)
    }
}
