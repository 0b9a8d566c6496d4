use crate::merchant::resource::{Resource, Writing};
use crate::merchant::state::MerchantState;
use domain::catalogue::store::StoreRecord;
use domain::people::employee::{Directory, EmployeeRecord};

impl Directory for MerchantState {
    fn is_live_store(&self, id: i64) -> bool {
        self.find::<StoreRecord>(id).is_some()
    }
}

impl Resource for EmployeeRecord {
    crate::resource_basics!(employees);

    fn on_deleted(&mut self, at: i64) {
        self.end_employment(at);
    }

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        let by_self = !w.creating && w.input.caller == self.id;
        self.apply(w.input.fields, w.creating, by_self, w.state)
    }

    /// Emails are unique in the merchant, deleted employees included: the database's
    /// `UNIQUE (merchant_id, email)` and the manifests' lookup by email rely on it.
    fn conflicts(&self, state: &MerchantState) -> Vec<String> {
        state
            .employees
            .values()
            .find(|other| other.id != self.id && other.email == self.email)
            .map(|other| {
                let deleted = if other.delete_date.is_some() {
                    " (deleted)"
                } else {
                    ""
                };
                vec![format!(
                    "email: {} is already used by employee {}{deleted} of this merchant.",
                    self.email, other.id
                )]
            })
            .unwrap_or_default()
    }
}
