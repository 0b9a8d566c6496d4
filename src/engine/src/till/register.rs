use crate::merchant::resource::{Resource, Writing};
use crate::merchant::state::MerchantState;
use domain::catalogue::store::StoreRecord;
use domain::till::register::RegisterRecord;

impl Resource for RegisterRecord {
    crate::resource_basics!(registers);

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        let state = w.state;
        self.apply(w.input.fields, w.creating, |id| {
            state.find::<StoreRecord>(id).is_some()
        })
    }

    /// A till with a session open is closed first.
    fn check_delete(&self, state: &MerchantState) -> Result<(), String> {
        match state.index.open_sessions.get(&self.id) {
            Some(session) => Err(format!(
                "Register {} has session {session} open; close it first.",
                self.id
            )),
            None => Ok(()),
        }
    }
}
