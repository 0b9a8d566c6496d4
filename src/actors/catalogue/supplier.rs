use serde_json::Value;

use crate::actors::merchant::state::MerchantState;
use crate::actors::resource::{next_id, Ids, Input, Resource};
use crate::domain::supplier::{SupplierRecord, SupplierStoreRecord};

/// A supplier store's parent must be a live supplier of this merchant.
fn supplier_check(state: &MerchantState, id: i64) -> Result<(), String> {
    state
        .find::<SupplierRecord>(id)
        .map(|_| ())
        .ok_or_else(|| format!("{id} is not a supplier of this merchant."))
}

impl Resource for SupplierRecord {
    const NOUN: &'static str = "Supplier";
    const PLURAL: &'static str = "suppliers";

    crate::resource_basics!(suppliers);

    fn create(
        ids: Ids<'_>,
        input: Input,
        _: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        SupplierRecord::new(next_id(ids)?, now).apply(input.fields)
    }

    fn update(
        &self,
        _: Ids<'_>,
        input: Input,
        _: &MerchantState,
        _: i64,
    ) -> Result<Self, Vec<String>> {
        self.clone().apply(input.fields)
    }

    fn to_json(&self, _: &MerchantState) -> Value {
        SupplierRecord::to_json(self)
    }
}

impl Resource for SupplierStoreRecord {
    const NOUN: &'static str = "Supplier store";
    const PLURAL: &'static str = "supplierStores";

    crate::resource_basics!(supplier_stores);

    fn create(
        ids: Ids<'_>,
        input: Input,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        SupplierStoreRecord::new(next_id(ids)?, now)
            .apply(input.fields, true, |id| supplier_check(state, id))
    }

    fn update(
        &self,
        _: Ids<'_>,
        input: Input,
        state: &MerchantState,
        _: i64,
    ) -> Result<Self, Vec<String>> {
        self.clone()
            .apply(input.fields, false, |id| supplier_check(state, id))
    }

    fn to_json(&self, _: &MerchantState) -> Value {
        SupplierStoreRecord::to_json(self)
    }
}
