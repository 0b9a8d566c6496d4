//! `/product` → `products`: the id header plus `categoryIds` (any of them) and `storeId`, which
//! adds that store's `totalStock`, `stockSold` and `stockLeft`. The read side looks ids and
//! categories up in the snapshot's maps and index.

use crate::http::auth::Call;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::filters::{FilterHeader, FilterKind};
use crate::http::resources::show_deleted;
use crate::http::{delta, filters};
use crate::views::lists::{self, ListQuery, ProductQuery};
use crate::views::Snapshot;
use domain::catalogue::product::ProductRecord;
use engine::merchant::resource::Resource;

const CATEGORY_IDS: FilterHeader = FilterHeader::new(
    "categoryIds",
    FilterKind::Ids,
    "Only products in any of these categories.",
);
const STORE_ID: FilterHeader = FilterHeader::new(
    "storeId",
    FilterKind::OneId,
    "Adds that store's `totalStock`, `stockSold` and `stockLeft` to each product.",
);

/// The filters `GET /product` reads beyond its ids.
pub const FILTERS: &[FilterHeader] = &[CATEGORY_IDS, STORE_ID];

pub async fn list(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let headers = req.headers();
    let ids = filters::id_list_any(headers, &["productIds", "productId"])?;
    let categories = filters::id_list(headers, CATEGORY_IDS.name)?;
    let store = match filters::id_list(headers, STORE_ID.name)? {
        None => None,
        Some(ids) if ids.len() == 1 => ids.into_iter().next(),
        Some(_) => return Err(ApiError::bad_header(STORE_ID.name, "give one store id.")),
    };
    let deleted = show_deleted(headers)?;
    let snapshot = Snapshot::of(&state.merchants, caller.merchant_id).await?;
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
    let query = ProductQuery {
        list: ListQuery {
            ids,
            deleted,
            filters: Vec::new(),
        },
        categories,
        store,
    };
    Ok(delta::positioned(
        Reply::ok().raw_field(ProductRecord::PLURAL, lists::products(&snapshot, &query)),
        snapshot.position(),
    ))
}
