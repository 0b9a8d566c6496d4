//! `GET /stock/movement`: the stock ledger of some products (docs/offline.md).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::http::auth::Call;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::filters::HeaderCheck;
use domain::dates::to_iso;
use domain::now_millis;
use domain::stock::levels::Ledger;

/// Products one read may name.
pub const MAX_PRODUCTS: usize = 100;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Shown {
    occurred_at: Option<String>,
    arrived_at: Option<String>,
    reason: String,
    source_id: i64,
    quantity: i64,
}

#[derive(Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct Product {
    level_from: i64,
    level_to: i64,
    movements: Vec<Shown>,
}

pub async fn movements(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let mut check = HeaderCheck::new(req.headers());
    let products = check.ids("productIds", true);
    let stores = check.ids("storeIds", false);
    let from = check.date_time("movementFrom", false);
    let to = check.date_time("movementTo", false);
    check.range(("movementFrom", from), ("movementTo", to), None);
    if products.as_ref().is_some_and(|p| p.len() > MAX_PRODUCTS) {
        check.reject(
            "productIds",
            format!("productIds: at most {MAX_PRODUCTS} products; send several requests."),
        );
    }
    check.finish(&["productIds", "storeIds", "movementFrom", "movementTo"])?;
    let Some(products) = products else {
        return Err(ApiError::bad_header("productIds", "the header is missing."));
    };
    let range = (
        from.map_or(i64::MIN, |f| f.timestamp_millis()),
        to.map_or_else(|| now_millis() + 1, |t| t.timestamp_millis()),
    );
    let products: Vec<i64> = products.into_iter().collect();
    let ledger = state
        .services
        .stock_ledger(caller.merchant_id, &products, range)
        .await?
        .ok_or_else(|| {
            ApiError::bad_header(
                "movementFrom",
                format!(
                    "more than {} movements in the range; narrow movementFrom and movementTo.",
                    domain::stock::levels::MAX_MOVEMENTS
                ),
            )
        })?;
    let keep = |store: i64| stores.as_ref().is_none_or(|s| s.contains(&store));
    Ok(Reply::ok().field("stockMovements", shown(ledger, keep)))
}

/// `{"<store>": {"<product>": {"levelFrom", "levelTo", "movements"}}}`.
fn shown(ledger: Ledger, keep: impl Fn(i64) -> bool) -> serde_json::Value {
    let mut out: BTreeMap<String, BTreeMap<String, Product>> = BTreeMap::new();
    fn at(
        out: &mut BTreeMap<String, BTreeMap<String, Product>>,
        store: i64,
        product: i64,
    ) -> &mut Product {
        out.entry(store.to_string())
            .or_default()
            .entry(product.to_string())
            .or_default()
    }
    for (store, product, level) in ledger.opening.into_iter().filter(|(s, _, _)| keep(*s)) {
        let p = at(&mut out, store, product);
        p.level_from = level;
        p.level_to = level;
    }
    for m in ledger.movements.into_iter().filter(|m| keep(m.store_id)) {
        let p = at(&mut out, m.store_id, m.product_id);
        p.level_to += m.quantity;
        p.movements.push(Shown {
            occurred_at: to_iso(m.occurred_at),
            arrived_at: to_iso(m.arrived_at),
            reason: m.reason,
            source_id: m.source_id,
            quantity: m.quantity,
        });
    }
    serde_json::to_value(out).unwrap_or_default()
}
