use serde_json::{Map, Value};

use crate::actors::merchant::MerchantState;
use crate::actors::resource::{Ids, Resource};
use crate::domain::store::StoreRecord;

impl Resource for StoreRecord {
    const NOUN: &'static str = "Store";
    const PLURAL: &'static str = "stores";

    crate::resource_basics!(stores);

    fn create(
        ids: Ids<'_>,
        fields: Map<String, Value>,
        _: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        let id = ids
            .next()
            .ok_or_else(|| vec!["no identifier was available.".to_owned()])?;
        StoreRecord::create(id, fields, now)
    }

    fn update(
        &self,
        _: Ids<'_>,
        fields: Map<String, Value>,
        _: &MerchantState,
        _: i64,
    ) -> Result<Self, Vec<String>> {
        StoreRecord::update(self, fields)
    }

    /// A store with open baskets stays: their sales would have nowhere to complete.
    fn check_delete(&self, state: &MerchantState) -> Result<(), String> {
        let open = state
            .live::<crate::domain::basket::BasketRecord>()
            .filter(|b| b.store_id == self.id && !b.completed)
            .count();
        if open > 0 {
            Err(format!("it has {open} open basket(s)."))
        } else {
            Ok(())
        }
    }

    fn to_json(&self, _: &MerchantState) -> Value {
        StoreRecord::to_json(self)
    }
}
