//! The catalogue file of a merchant's state (`merchantd catalogue export`,
//! `GET /product/export`): live products in id order with their live instances, the paths of
//! their live categories, and the stock left at every live store (columns in name order), so
//! that importing it into an empty merchant with the same stores exports the same bytes.

use crate::merchant::state::MerchantState;
use domain::catalogue::category::CategoryRecord;
use domain::catalogue::file::{CatalogueFile, FileInstance, FileProduct};
use domain::catalogue::product::ProductRecord;
use domain::catalogue::store::StoreRecord;
use domain::money;

pub fn catalogue(state: &MerchantState) -> CatalogueFile {
    let mut stores: Vec<&StoreRecord> = state.live::<StoreRecord>().collect();
    stores.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
    let products = state
        .live::<ProductRecord>()
        .map(|product| FileProduct {
            row: 0,
            name: product.name.clone(),
            barcode: product.barcode.clone(),
            categories: product
                .category_ids
                .iter()
                .filter(|id| state.find::<CategoryRecord>(**id).is_some())
                .map(|id| path(state, *id))
                .collect(),
            instances: product
                .live_instances()
                .map(|i| FileInstance {
                    row: 0,
                    name: i.name.clone(),
                    price: Some(money::text(&i.price)),
                    tax_rate: Some(money::text(&i.tax_percentage)),
                })
                .collect(),
            stock: stores
                .iter()
                .enumerate()
                .map(|(column, store)| (column, state.stock_level(store.id, product.id).left()))
                .collect(),
            problems: Vec::new(),
        })
        .collect();
    CatalogueFile {
        stores: stores.iter().map(|s| s.name.clone()).collect(),
        products,
    }
}

/// The titles from the top category down to `id`. Parents are followed whatever their state
/// (a deleted parent still names the place), at most as many steps as there are categories.
fn path(state: &MerchantState, id: i64) -> Vec<String> {
    let mut titles = Vec::new();
    let mut cursor = Some(id);
    while let Some(entry) = cursor.and_then(|id| state.entry::<CategoryRecord>(id)) {
        titles.push(entry.title.clone());
        cursor = entry.parent_id;
        if titles.len() > state.categories.len() {
            break;
        }
    }
    titles.reverse();
    titles
}
