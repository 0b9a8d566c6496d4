use std::future::Future;

use serde_json::{Map, Value};
use sqlx::AnyConnection;

use crate::actors::merchant::MerchantState;
use crate::actors::resource::{Collection, Ids, Resource};
use crate::crypto;
use crate::db::{now_millis, people, DbError};
use crate::domain::application::ApplicationRecord;

/// `app-` and 64 random bits in hex. The column is unique across merchants; a collision is
/// astronomically unlikely, and would fail the write rather than share a client id.
fn new_client_id() -> String {
    format!("app-{}", crypto::hex(&crypto::random_bytes::<8>()))
}

impl Resource for ApplicationRecord {
    const NOUN: &'static str = "Application";
    const PLURAL: &'static str = "applications";

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

    fn collection(state: &MerchantState) -> &Collection<Self> {
        &state.applications
    }

    fn collection_mut(state: &mut MerchantState) -> &mut Collection<Self> {
        &mut state.applications
    }

    fn create(
        ids: Ids<'_>,
        fields: Map<String, Value>,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        let id = ids
            .next()
            .ok_or_else(|| vec!["no identifier was available.".to_owned()])?;
        let mut client_id = new_client_id();
        while state
            .applications
            .values()
            .any(|a| a.client_id == client_id)
        {
            client_id = new_client_id();
        }
        ApplicationRecord::new(id, client_id, now).apply(fields, true)
    }

    fn update(
        &self,
        _: Ids<'_>,
        fields: Map<String, Value>,
        _: &MerchantState,
        _: i64,
    ) -> Result<Self, Vec<String>> {
        self.clone().apply(fields, false)
    }

    fn to_json(&self, _: &MerchantState) -> Value {
        ApplicationRecord::to_json(self)
    }

    fn persist<'a>(
        conn: &'a mut AnyConnection,
        merchant_id: i64,
        record: &'a Self,
        is_new: bool,
    ) -> impl Future<Output = Result<(), DbError>> + Send + 'a {
        people::persist_application(conn, merchant_id, record, is_new, now_millis())
    }
}
