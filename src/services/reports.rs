//! The basket report, computed from indexed queries (not from the actors' caches).

use std::collections::BTreeSet;

use super::Services;
use crate::domain::report::BasketReport;
use crate::domain::Failure;

impl Services {
    /// The basket report over `[from, to)` (epoch milliseconds), at `stores` or every store.
    pub async fn basket_report(
        &self,
        merchant_id: i64,
        from: i64,
        to: i64,
        stores: Option<&BTreeSet<i64>>,
    ) -> Result<BasketReport, Failure> {
        Ok(self.db.basket_report(merchant_id, from, to, stores).await?)
    }
}
