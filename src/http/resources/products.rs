//! `/product` → `products`: the id header plus `categoryIds` (any of them) and `storeId`, which
//! adds that store's `totalStock`, `stockSold` and `stockLeft`. Ids and categories are looked up
//! in the snapshot's maps and index; each product's JSON comes rendered from the cache.

use std::collections::BTreeSet;

use actix_web::{web, HttpRequest};

use super::show_deleted;
use crate::actors::merchant::state::{push_key, Entry, MerchantState};
use crate::actors::resource::Resource;
use crate::domain::product::ProductRecord;
use crate::http::auth::Caller;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::{delta, filters, AppState};

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
    let snapshot = state.merchants.snapshot(caller.merchant_id).await?;
    let delta::Narrowed { ids, deleted } = delta::narrow(
        headers,
        &state,
        &snapshot,
        // With a store's stock columns, a sale changes what the list shows.
        if store.is_some() {
            &[ProductRecord::EVENT, "stock"]
        } else {
            &[ProductRecord::EVENT]
        },
        ids,
        deleted,
    )
    .await?;
    let in_categories = |p: &ProductRecord| {
        categories
            .as_ref()
            .is_none_or(|wanted| p.category_ids.iter().any(|c| wanted.contains(c)))
    };
    let wanted = |e: &&Entry<ProductRecord>| {
        (deleted || e.delete_date.is_none()) && in_categories(e.record())
    };
    let candidates: Box<dyn Iterator<Item = &Entry<ProductRecord>>> = match (&ids, &categories) {
        (Some(ids), _) => Box::new(lookup(&snapshot, ids.iter().copied())),
        (None, Some(categories)) => {
            let ids: BTreeSet<i64> = categories
                .iter()
                .filter_map(|c| snapshot.index.products_by_category.get(c))
                .flat_map(|ids| ids.iter().copied())
                .collect();
            Box::new(
                lookup(&snapshot, ids.into_iter())
                    .collect::<Vec<_>>()
                    .into_iter(),
            )
        }
        (None, None) => Box::new(snapshot.products.values()),
    };
    let mut out = String::with_capacity(1024);
    match store {
        None => snapshot.write_collection(&mut out, candidates.filter(wanted)),
        Some(store_id) => {
            write_with_stock(&snapshot, &mut out, candidates.filter(wanted), store_id)
        }
    }
    Ok(delta::positioned(
        Reply::ok().raw_field(ProductRecord::PLURAL, out),
        snapshot.event_seq,
    ))
}

fn lookup(
    snapshot: &MerchantState,
    ids: impl Iterator<Item = i64>,
) -> impl Iterator<Item = &Entry<ProductRecord>> {
    ids.filter_map(|id| snapshot.entry::<ProductRecord>(id))
}

/// The products with the store's stock columns after their own fields. A store of another
/// merchant, or none at all, has no stock here: the same answer for both, so nothing leaks.
fn write_with_stock<'a>(
    snapshot: &MerchantState,
    out: &mut String,
    products: impl Iterator<Item = &'a Entry<ProductRecord>>,
    store_id: i64,
) {
    out.push('{');
    for (i, product) in products.enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_key(out, product.id);
        product.write_json(snapshot, out);
        // The stock columns go after the record's own fields, inside its object.
        if out.ends_with('}') {
            out.pop();
        }
        let level = snapshot.stock_level(store_id, product.id);
        let mut n = itoa::Buffer::new();
        out.push_str(",\"totalStock\":");
        out.push_str(n.format(level.total));
        out.push_str(",\"stockSold\":");
        out.push_str(n.format(level.sold));
        out.push_str(",\"stockLeft\":");
        out.push_str(n.format(level.left()));
        out.push('}');
    }
    out.push('}');
}
