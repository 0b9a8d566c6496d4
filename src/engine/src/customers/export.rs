//! What a customer's export reads beside the merchant's state: the events about it and the
//! logs quoting it (docs/customers.md, "Export and erase").

use crate::services::Services;
use domain::event::Event;
use domain::log::LogRecord;
use domain::Failure;

impl Services {
    /// The events about a customer, its baskets and its orders, oldest first.
    pub async fn customer_events(
        &self,
        merchant_id: i64,
        customer_id: i64,
    ) -> Result<Vec<Event>, Failure> {
        Ok(self
            .storage
            .customer_events(merchant_id, customer_id)
            .await?)
    }

    /// The logs quoting one of a customer's identifying values.
    pub async fn logs_quoting(
        &self,
        merchant_id: i64,
        values: &[String],
    ) -> Result<Vec<LogRecord>, Failure> {
        Ok(self.storage.logs_quoting(merchant_id, values).await?)
    }
}
