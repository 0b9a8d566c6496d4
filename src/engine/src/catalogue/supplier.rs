use crate::merchant::resource::{Resource, Writing};
use crate::merchant::state::MerchantState;
use domain::catalogue::supplier::{SupplierRecord, SupplierStoreRecord};

/// A supplier store's parent must be a live supplier of this merchant.
fn supplier_check(state: &MerchantState, id: i64) -> Result<(), String> {
    state
        .find::<SupplierRecord>(id)
        .map(|_| ())
        .ok_or_else(|| format!("{id} is not a supplier of this merchant."))
}

impl Resource for SupplierRecord {
    crate::resource_basics!(suppliers);

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        self.apply(w.input.fields)
    }
}

impl Resource for SupplierStoreRecord {
    crate::resource_basics!(supplier_stores);

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        let state = w.state;
        self.apply(w.input.fields, w.creating, |id| supplier_check(state, id))
    }
}
