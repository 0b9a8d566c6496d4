//! The basket report, computed from indexed queries (not from the actors' caches), and the
//! sales running totals.

use crate::services::Services;
use domain::sales::report::{BasketReport, ReportRange};
use domain::sales::totals::{Totals, TotalsKey, TotalsRange};
use domain::Failure;

impl Services {
    pub async fn basket_report(&self, range: &ReportRange<'_>) -> Result<BasketReport, Failure> {
        Ok(self.storage.basket_report(range).await?)
    }

    /// The sales running totals of one dimension over a range of local days or hours.
    pub async fn sales_totals(
        &self,
        range: &TotalsRange<'_>,
    ) -> Result<Vec<(TotalsKey, Totals)>, Failure> {
        Ok(self.storage.sales_totals(range).await?)
    }
}

impl Services {
    /// Per bucket of `size` ids of `object`'s records: count and Σ hash (docs/digest.md).
    pub async fn digest(
        &self,
        merchant_id: i64,
        object: &str,
        size: i64,
    ) -> Result<Vec<domain::offline::digest::Bucket>, Failure> {
        self.digests.note_read(merchant_id, domain::now_millis());
        Ok(self.storage.digest(merchant_id, object, size).await?)
    }
}

impl Services {
    /// The stock ledger of `products` over `[from, to)`; `None` when the range holds too many
    /// movements to answer at once.
    pub async fn stock_ledger(
        &self,
        merchant_id: i64,
        products: &[i64],
        range: (i64, i64),
    ) -> Result<Option<domain::stock::levels::Ledger>, Failure> {
        Ok(self
            .storage
            .stock_ledger(merchant_id, products, range)
            .await?)
    }
}
