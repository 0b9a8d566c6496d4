use std::future::Future;

use serde_json::{Map, Value};
use sqlx::AnyConnection;

use crate::actors::merchant::MerchantState;
use crate::actors::resource::{Collection, Ids, Resource};
use crate::db::{people, DbError};
use crate::domain::employee::{Directory, EmployeeRecord};
use crate::domain::store::StoreRecord;

impl Directory for MerchantState {
    fn is_live_store(&self, id: i64) -> bool {
        self.find::<StoreRecord>(id).is_some()
    }
}

impl Resource for EmployeeRecord {
    const NOUN: &'static str = "Employee";
    const PLURAL: &'static str = "employees";

    fn id(&self) -> i64 {
        self.id
    }

    fn delete_date(&self) -> Option<i64> {
        self.delete_date
    }

    fn mark_deleted(&mut self, at: i64) {
        EmployeeRecord::mark_deleted(self, at);
    }

    fn collection(state: &MerchantState) -> &Collection<Self> {
        &state.employees
    }

    fn collection_mut(state: &mut MerchantState) -> &mut Collection<Self> {
        &mut state.employees
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
        EmployeeRecord::new(id, now).apply(fields, true, state)
    }

    fn update(
        &self,
        _: Ids<'_>,
        fields: Map<String, Value>,
        state: &MerchantState,
        _: i64,
    ) -> Result<Self, Vec<String>> {
        self.clone().apply(fields, false, state)
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

    fn to_json(&self, _: &MerchantState) -> Value {
        EmployeeRecord::to_json(self)
    }

    fn persist<'a>(
        conn: &'a mut AnyConnection,
        merchant_id: i64,
        record: &'a Self,
        is_new: bool,
    ) -> impl Future<Output = Result<(), DbError>> + Send + 'a {
        people::persist_employee(conn, merchant_id, record, is_new)
    }
}
