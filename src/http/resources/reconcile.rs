//! `/stock/reconcile` → `stockReconciliations` (api-reference.md Stock reconciliation; examples
//! §2.14). GET needs `from`, `to` (`YYYY-MM-DD HH:MM:SS`, UTC) and `storeIds`, and answers the
//! completed counts of those stores with `completeDate` in `[from, to)`, plus `wastage` and
//! `surplus` as store → product → units (every asked store of this merchant appears, empty when
//! nothing was booked). `stockReconciliationIds` narrows further. Writes and deletes are the
//! generic ones (DELETE takes `stockReconciliationIds`).

use std::collections::BTreeMap;

use actix_web::{web, HttpRequest};
use serde_json::{json, Map, Value};

use super::generic::IdHeaders;
use crate::actors::merchant::history::SalesQuery;
use crate::actors::resource::Resource;
use crate::domain::reconcile::StockReconciliation;
use crate::http::auth::Caller;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::filters::{self, HeaderCheck};
use crate::http::AppState;

impl IdHeaders for StockReconciliation {
    const ID_HEADERS: [&'static str; 2] = ["stockReconciliationIds", "stockReconciliationId"];
}

type Units = BTreeMap<i64, BTreeMap<i64, i64>>;

fn units_json(units: &Units) -> Value {
    let stores: Map<String, Value> = units
        .iter()
        .map(|(store, products)| {
            let products: Map<String, Value> = products
                .iter()
                .map(|(p, n)| (p.to_string(), json!(n)))
                .collect();
            (store.to_string(), Value::Object(products))
        })
        .collect();
    Value::Object(stores)
}

pub async fn list(
    req: HttpRequest,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
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
        store_ids: Some(stores.clone()),
        completed: Some(true),
        completed_between: Some((from, to)),
        ..SalesQuery::default()
    };
    let found = state
        .merchants
        .sales::<StockReconciliation>(caller.merchant_id, &query)
        .await?;
    // Another merchant's store is a store that does not exist: it gets no key.
    let mine: Units = stores
        .iter()
        .filter(|s| found.state.stores.contains_key(*s))
        .map(|s| (*s, BTreeMap::new()))
        .collect();
    let (mut wastage, mut surplus) = (mine.clone(), mine);
    for c in &found.entries {
        for (product, n) in c.shortfalls() {
            *wastage
                .entry(c.store_id)
                .or_default()
                .entry(product)
                .or_default() += n;
        }
        for (product, n) in c.surpluses() {
            *surplus
                .entry(c.store_id)
                .or_default()
                .entry(product)
                .or_default() += n;
        }
    }
    Ok(Reply::ok()
        .raw_field(StockReconciliation::PLURAL, found.render())
        .field("wastage", units_json(&wastage))
        .field("surplus", units_json(&surplus)))
}
