//! `/stock/reconcile` → `stockReconciliations` (api-reference.md Stock reconciliation; examples
//! §2.14). GET needs `from`, `to` (`YYYY-MM-DD HH:MM:SS`, UTC) and `storeIds`, and answers the
//! completed counts of those stores with `completeDate` in `[from, to)`, plus `wastage` and
//! `surplus` as store → product → units (every asked store of this merchant appears, empty when
//! nothing was booked). `stockReconciliationIds` narrows further. Writes and deletes are the
//! generic ones (DELETE takes `stockReconciliationIds`).

use crate::http::auth::Call;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::filters::{self, HeaderCheck};
use crate::http::resources::generic::IdHeaders;
use crate::views::lists::{self, SalesQuery};
use domain::record::filter;
use domain::stock::count::StockReconciliation;
use engine::merchant::resource::Resource;

pub async fn list(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let h = req.headers();
    let mut check = HeaderCheck::new(h);
    let from = check.date_time("from", true);
    let to = check.date_time("to", true);
    let stores = check.ids("storeIds", true);
    check.range(("from", from), ("to", to), None);
    check.finish(&[])?;
    let (Some(from), Some(to), Some(stores)) = (from, to, stores) else {
        return Err(ApiError::bad_header("from", "the header is missing."));
    };
    let (from, to) = (from.timestamp_millis(), to.timestamp_millis());
    let query = SalesQuery {
        ids: filters::id_list_any(h, &StockReconciliation::ID_HEADERS)?,
        completed: Some(true),
        completed_between: Some((from, to)),
        ..SalesQuery::default()
    }
    .with(filter::STORE_IDS, stores.clone());
    let found = lists::counts(&state.merchants, caller.merchant_id, &query, &stores).await?;
    Ok(Reply::ok()
        .raw_field(StockReconciliation::PLURAL, found.json)
        .raw_field("wastage", found.wastage)
        .raw_field("surplus", found.surplus))
}
