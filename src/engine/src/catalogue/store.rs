use crate::merchant::resource::{Resource, Writing};
use crate::merchant::state::MerchantState;
use domain::catalogue::store::StoreRecord;

impl Resource for StoreRecord {
    crate::resource_basics!(stores);

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        self.apply(w.input.fields, w.creating)
    }

    /// A store with open baskets stays: their sales would have nowhere to complete. Open
    /// baskets are always cached, so counting the cached ones is exact.
    fn check_delete(&self, state: &MerchantState) -> Result<(), String> {
        let open = state
            .live::<domain::sales::basket::BasketRecord>()
            .filter(|b| b.store_id == self.id && !b.completed)
            .count();
        if open > 0 {
            Err(format!("it has {open} open basket(s)."))
        } else {
            Ok(())
        }
    }
}
