//! The basket report, computed from indexed queries (not from the actors' caches).

use super::Services;
use crate::domain::report::{BasketReport, ReportRange};
use crate::domain::Failure;

impl Services {
    pub async fn basket_report(&self, range: &ReportRange<'_>) -> Result<BasketReport, Failure> {
        Ok(self.db.basket_report(range).await?)
    }
}
