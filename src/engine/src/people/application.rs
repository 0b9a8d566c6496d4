use crate::merchant::resource::{Resource, Writing};
use crate::merchant::state::MerchantState;
use domain::crypto;
use domain::people::application::ApplicationRecord;

/// `app-` and 64 random bits in hex. The column is unique across merchants; a collision is
/// astronomically unlikely, and would fail the write rather than share a client id.
fn new_client_id() -> String {
    format!("app-{}", crypto::hex(&crypto::random_bytes::<8>()))
}

impl Resource for ApplicationRecord {
    crate::resource_basics!(applications);

    fn on_deleted(&mut self, _at: i64) {
        self.new_secret_hash = None;
    }

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        self.apply(w.input.fields, w.creating, w.input.secret.as_deref())
    }

    /// A new application gets a client id no other application has.
    fn blank_in(state: &MerchantState, id: i64, now: i64) -> Self {
        let mut client_id = new_client_id();
        while state
            .applications
            .values()
            .any(|a| a.client_id == client_id)
        {
            client_id = new_client_id();
        }
        ApplicationRecord {
            client_id,
            ..ApplicationRecord::new(id, now)
        }
    }
}
