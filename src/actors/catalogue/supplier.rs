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
}

impl Resource for SupplierStoreRecord {
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
}
