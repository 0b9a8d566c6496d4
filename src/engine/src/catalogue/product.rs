use serde_json::{Map, Value};

use crate::merchant::resource::{Resource, Writing};
use crate::merchant::state::MerchantState;
use domain::catalogue::category::CategoryRecord;
use domain::catalogue::product::{ProductContext, ProductRecord};
use domain::refusal::Refusal;

fn apply(record: ProductRecord, w: Writing<'_>) -> Result<ProductRecord, Vec<String>> {
    let state = w.state;
    let exists = |id| state.find::<CategoryRecord>(id).is_some();
    let codes: Vec<&str> = state.sales.taxes.iter().map(|t| t.code.as_str()).collect();
    record.apply(
        w.input.fields,
        w.ids,
        &ProductContext {
            category_exists: &exists,
            tax_codes: &codes,
        },
        w.now,
    )
}

impl Resource for ProductRecord {
    crate::resource_basics!(products);

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        apply(self, w)
    }

    fn ids_needed(fields: &Map<String, Value>) -> usize {
        1 + ProductRecord::new_instances(fields)
    }

    fn conflicts(&self, state: &MerchantState) -> Vec<String> {
        let Some(code) = &self.barcode else {
            return Vec::new();
        };
        match state.index.product_by_barcode.get(code) {
            Some(other) if *other != self.id => vec![format!(
                "barcode: \"{code}\" is already used by product {other}."
            )],
            _ => Vec::new(),
        }
    }

    /// A new product (or one undeleted) past the merchant's product quota is refused (116).
    fn check(&self, state: &MerchantState) -> Result<(), Refusal> {
        let quota = state.product_quota;
        if quota == 0
            || self.delete_date.is_some()
            || state.find::<ProductRecord>(self.id).is_some()
        {
            return Ok(());
        }
        if state.index.live_products >= quota {
            return Err(Refusal::OverQuota(vec![format!(
                "The merchant has {} live products, its quota; delete one first, or ask the \
                 host for a larger quota.",
                state.index.live_products
            )]));
        }
        Ok(())
    }

    fn reindex(state: &mut MerchantState, before: Option<&Self>, after: Option<&Self>) {
        let live = |p: Option<&Self>| usize::from(p.is_some_and(|p| p.delete_date.is_none()));
        state.index.live_products =
            (state.index.live_products + live(after)).saturating_sub(live(before));
        let index = &mut state.index;
        if let Some(before) = before {
            for category in &before.category_ids {
                if let Some(products) = index.products_by_category.get_mut(category) {
                    products.remove(&before.id);
                }
            }
            if let Some(code) = &before.barcode {
                if index.product_by_barcode.get(code) == Some(&before.id) {
                    index.product_by_barcode.remove(code);
                }
            }
        }
        if let Some(after) = after {
            for category in &after.category_ids {
                index
                    .products_by_category
                    .entry(*category)
                    .or_default()
                    .insert(after.id);
            }
            if let (Some(code), None) = (&after.barcode, after.delete_date) {
                index.product_by_barcode.insert(code.clone(), after.id);
            }
        }
    }
}
