use serde_json::{Map, Value};

use crate::actors::merchant::MerchantState;
use crate::actors::resource::{Ids, Resource};
use crate::domain::category::CategoryRecord;
use crate::domain::promotion::{PromotionRecord, References};
use crate::domain::store::StoreRecord;

/// Applies `fields` with store and category ids checked against this merchant's live records.
fn apply(
    record: PromotionRecord,
    fields: Map<String, Value>,
    creating: bool,
    state: &MerchantState,
) -> Result<PromotionRecord, Vec<String>> {
    let store = |id| state.find::<StoreRecord>(id).is_some();
    let category = |id| state.find::<CategoryRecord>(id).is_some();
    let refs = References {
        store: &store,
        category: &category,
    };
    record.apply(fields, creating, &refs)
}

impl Resource for PromotionRecord {
    const NOUN: &'static str = "Promotion";
    const PLURAL: &'static str = "promotions";

    crate::resource_basics!(promotions);

    fn create(
        ids: Ids<'_>,
        fields: Map<String, Value>,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        let id = ids
            .next()
            .ok_or_else(|| vec!["no identifier was available.".to_owned()])?;
        apply(PromotionRecord::new(id, now), fields, true, state)
    }

    fn update(
        &self,
        _: Ids<'_>,
        fields: Map<String, Value>,
        state: &MerchantState,
        _: i64,
    ) -> Result<Self, Vec<String>> {
        apply(self.clone(), fields, false, state)
    }

    fn to_json(&self, _: &MerchantState) -> Value {
        PromotionRecord::to_json(self)
    }
}
