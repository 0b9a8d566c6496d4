use crate::actors::merchant::state::MerchantState;
use crate::actors::resource::{next_id, Ids, Input, Resource, Writing};
use crate::crypto;
use crate::domain::application::ApplicationRecord;

/// `app-` and 64 random bits in hex. The column is unique across merchants; a collision is
/// astronomically unlikely, and would fail the write rather than share a client id.
fn new_client_id() -> String {
    format!("app-{}", crypto::hex(&crypto::random_bytes::<8>()))
}

impl Resource for ApplicationRecord {
    fn id(&self) -> i64 {
        self.id
    }

    fn delete_date(&self) -> Option<i64> {
        self.delete_date
    }

    fn mark_deleted(&mut self, at: i64) {
        self.delete_date = Some(at);
        self.new_secret_hash = None;
    }

    crate::resource_collection!(applications, |id, now| Self::new(id, String::new(), now));

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        let Writing {
            input, creating, ..
        } = w;
        self.apply(input.fields, creating, input.secret.as_deref())
    }

    /// A new application gets a client id no other application has.
    fn create(
        ids: Ids<'_>,
        input: Input,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        let id = next_id(ids)?;
        let mut client_id = new_client_id();
        while state
            .applications
            .values()
            .any(|a| a.client_id == client_id)
        {
            client_id = new_client_id();
        }
        ApplicationRecord::new(id, client_id, now).write(Writing {
            ids,
            input,
            state,
            now,
            creating: true,
        })
    }
}
