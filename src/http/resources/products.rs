//! `/product` → `products`: the id header plus `categoryIds` (any of them) and `storeId`, which
//! adds that store's `totalStock`, `stockSold` and `stockLeft`.

use actix_web::{web, HttpRequest};
use serde_json::{json, Map, Value};

use super::show_deleted;
use crate::actors::resource::Resource;
use crate::domain::product::ProductRecord;
use crate::http::auth::Caller;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::{filters, AppState};

pub async fn list(
    req: HttpRequest,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    let headers = req.headers();
    let ids = filters::id_list_any(headers, &["productIds", "productId"])?;
    let categories = filters::id_list(headers, "categoryIds")?;
    let store = match filters::id_list(headers, "storeId")? {
        None => None,
        Some(ids) if ids.len() == 1 => ids.into_iter().next(),
        Some(_) => return Err(ApiError::bad_header("storeId", "give one store id.")),
    };
    let deleted = show_deleted(headers)?;
    let snapshot = state
        .merchants
        .get(caller.merchant_id)
        .await?
        .snapshot()
        .await?;
    let products: Map<String, Value> = snapshot
        .products
        .values()
        .filter(|p| deleted || p.delete_date.is_none())
        .filter(|p| ids.as_ref().is_none_or(|ids| ids.contains(&p.id)))
        .filter(|p| {
            categories
                .as_ref()
                .is_none_or(|wanted| p.category_ids.iter().any(|c| wanted.contains(c)))
        })
        .map(|p| {
            let mut record = Resource::to_json(&**p, &snapshot);
            if let (Some(store_id), Value::Object(fields)) = (store, &mut record) {
                // A store of another merchant, or none at all, has no stock here: the same
                // answer for both, so nothing leaks.
                let level = snapshot.stock_level(store_id, p.id);
                fields.insert("totalStock".into(), json!(level.total));
                fields.insert("stockSold".into(), json!(level.sold));
                fields.insert("stockLeft".into(), json!(level.total - level.sold));
            }
            (p.id.to_string(), record)
        })
        .collect();
    Ok(Reply::ok().field(ProductRecord::PLURAL, Value::Object(products)))
}
