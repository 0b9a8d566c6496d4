use serde_json::Value;

use crate::actors::merchant::state::MerchantState;
use crate::actors::resource::{Ids, Input, Resource};
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
    const EVENT: &'static str = "supplier";

    crate::resource_basics!(suppliers);

    fn blank(id: i64, now: i64) -> Self {
        SupplierRecord::new(id, now)
    }

    fn write(
        self,
        _: Ids<'_>,
        input: Input,
        _: &MerchantState,
        _: i64,
        _: bool,
    ) -> Result<Self, Vec<String>> {
        self.apply(input.fields)
    }

    fn to_json(&self, _: &MerchantState) -> Value {
        SupplierRecord::to_json(self)
    }
}

impl Resource for SupplierStoreRecord {
    const NOUN: &'static str = "Supplier store";
    const PLURAL: &'static str = "supplierStores";
    const EVENT: &'static str = "supplier_store";

    crate::resource_basics!(supplier_stores);

    fn blank(id: i64, now: i64) -> Self {
        SupplierStoreRecord::new(id, now)
    }

    fn write(
        self,
        _: Ids<'_>,
        input: Input,
        state: &MerchantState,
        _: i64,
        creating: bool,
    ) -> Result<Self, Vec<String>> {
        self.apply(input.fields, creating, |id| supplier_check(state, id))
    }

    fn to_json(&self, _: &MerchantState) -> Value {
        SupplierStoreRecord::to_json(self)
    }
}
