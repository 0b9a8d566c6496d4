//! `/stock/reconcile` → `stockReconciliations` (api-reference.md Stock reconciliation; examples
//! §2.14). GET needs `from`, `to` (`YYYY-MM-DD HH:MM:SS`, UTC) and `storeIds`, and answers the
//! completed counts of those stores with `completeDate` in `[from, to)`, plus `wastage` and
//! `surplus` as store → product → units (every asked store of this merchant appears, empty when
//! nothing was booked). `stockReconciliationIds` narrows further. Writes and deletes are the
//! generic ones (DELETE takes `stockReconciliationIds`).

use crate::http::auth::Call;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::filters::{self, FilterHeader, FilterKind, HeaderCheck};
use crate::http::resources::generic::IdHeaders;
use crate::views::lists::{self, SalesQuery};
use domain::record::filter;
use domain::stock::count::StockReconciliation;
use engine::merchant::resource::Resource;

const FROM: FilterHeader = FilterHeader::new(
    "from",
    FilterKind::DateTime,
    "Counts completed at or after this instant.",
)
.required();
const TO: FilterHeader = FilterHeader::new(
    "to",
    FilterKind::DateTime,
    "Counts completed before this instant.",
)
.required();
const STORE_IDS: FilterHeader =
    FilterHeader::new("storeIds", FilterKind::Ids, "The stores counted.").required();

/// What `GET /stock/reconcile` reads besides its ids: all three are required.
pub const FILTERS: &[FilterHeader] = &[FROM, TO, STORE_IDS];

pub async fn list(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let h = req.headers();
    let mut check = HeaderCheck::new(h);
    let from = check.date_time(FROM.name, FROM.required);
    let to = check.date_time(TO.name, TO.required);
    let stores = check.ids(STORE_IDS.name, STORE_IDS.required);
    check.range((FROM.name, from), (TO.name, to), None);
    check.finish(&[])?;
    let (Some(from), Some(to), Some(stores)) = (from, to, stores) else {
        return Err(ApiError::bad_header(FROM.name, "the header is missing."));
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
