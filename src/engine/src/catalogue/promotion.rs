use crate::merchant::resource::{Resource, Writing};
use domain::catalogue::category::CategoryRecord;
use domain::catalogue::promotion::{PromotionRecord, References};
use domain::catalogue::store::StoreRecord;

/// Applies `fields` with store and category ids checked against this merchant's live records.
fn apply(record: PromotionRecord, w: Writing<'_>) -> Result<PromotionRecord, Vec<String>> {
    let state = w.state;
    let store = |id| state.find::<StoreRecord>(id).is_some();
    let category = |id| state.find::<CategoryRecord>(id).is_some();
    let refs = References {
        store: &store,
        category: &category,
    };
    record.apply(w.input.fields, w.creating, &refs)
}

impl Resource for PromotionRecord {
    crate::resource_basics!(promotions);

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        apply(self, w)
    }
}
