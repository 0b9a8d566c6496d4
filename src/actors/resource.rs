//! What a catalogue resource must provide for the merchant supervisor to validate, store, cache
//! and serve it. One implementation per resource, beside its record type.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};
use sqlx::AnyConnection;

use super::merchant::MerchantState;
use crate::db::rows::{self, TableRow};
use crate::db::stock::StockMove;
use crate::db::DbError;
use crate::http::messages::Message;

pub type Collection<T> = BTreeMap<i64, Arc<T>>;

/// Identifiers handed out while a batch is validated.
pub type Ids<'a> = &'a mut dyn Iterator<Item = i64>;

pub trait Resource: TableRow + Clone + Send + Sync + 'static {
    /// "Store", as messages name one record.
    const NOUN: &'static str;
    /// "stores", the collection key in bodies and answers.
    const PLURAL: &'static str;

    fn id(&self) -> i64;
    fn delete_date(&self) -> Option<i64>;
    fn mark_deleted(&mut self, at: i64);

    fn collection(state: &MerchantState) -> &Collection<Self>;
    fn collection_mut(state: &mut MerchantState) -> &mut Collection<Self>;

    /// Identifiers a create of these fields consumes (nested records take their own).
    fn ids_needed(_fields: &Map<String, Value>) -> usize {
        1
    }

    /// Identifiers a write of these fields consumes when that depends on the stored record
    /// (completing a stock count books a line per counted product). Defaults to `ids_needed`.
    fn ids_needed_in(fields: &Map<String, Value>, _state: &MerchantState) -> usize {
        Self::ids_needed(fields)
    }

    /// Whether `create`/`update` read stock levels (a stock count's expected units): the
    /// supervisor then waits until every store's actor has loaded its stock before validating.
    const READS_STOCK: bool = false;

    /// Records of other collections this change brings with it (the wastage basket a stock
    /// count books). The Write handler puts them into the working state after the record, and
    /// the record's own `persist` writes them in the same transaction. They move no stock of
    /// their own: only the record's `stock_moves` count.
    fn side_records(&self, _before: Option<&Self>, _state: &mut MerchantState) {}

    /// A new record; `state` already holds the batch's earlier objects.
    fn create(
        ids: Ids<'_>,
        fields: Map<String, Value>,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>>;

    /// This record with an update applied.
    fn update(
        &self,
        ids: Ids<'_>,
        fields: Map<String, Value>,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>>;

    /// Uniqueness broken by this record against the others of the state (message 113), checked
    /// after `create`/`update` succeeded.
    fn conflicts(&self, _state: &MerchantState) -> Vec<String> {
        Vec::new()
    }

    /// A record that may no longer change (completed): updates are refused with 111.
    fn locked(&self) -> bool {
        false
    }

    /// Rules against the rest of the state that answer with their own message (for example 112
    /// for an order on an open basket), checked after `create`/`update` succeeded.
    fn check(&self, _state: &MerchantState) -> Result<(), (Message, Vec<String>)> {
        Ok(())
    }

    /// Stock this change moves, given the record as it was before (None when new). Persisted in
    /// the same transaction as the record, then applied to the store's actor.
    fn stock_moves(&self, _before: Option<&Self>) -> Vec<StockMove> {
        Vec::new()
    }

    /// The verb of the success message ("created", "updated", or for example "completed").
    fn verb(&self, before: Option<&Self>) -> &'static str {
        if before.is_some() {
            "updated"
        } else {
            "created"
        }
    }

    /// The details of the success message: "<Noun> <id> <verb>." unless a resource says more.
    fn success_detail(&self, before: Option<&Self>) -> String {
        format!("{} {} {}.", Self::NOUN, self.id(), self.verb(before))
    }

    /// Refuses a delete that would break a rule (for example a store with open baskets).
    fn check_delete(&self, _state: &MerchantState) -> Result<(), String> {
        Ok(())
    }

    fn to_json(&self, state: &MerchantState) -> Value;

    fn load(
        conn: &mut AnyConnection,
        merchant_id: i64,
    ) -> impl Future<Output = Result<Vec<Self>, DbError>> + Send {
        rows::load_all::<Self>(conn, merchant_id, "")
    }

    fn persist<'a>(
        conn: &'a mut AnyConnection,
        merchant_id: i64,
        record: &'a Self,
        is_new: bool,
    ) -> impl Future<Output = Result<(), DbError>> + Send + 'a {
        async move {
            if is_new {
                rows::insert(conn, merchant_id, record).await
            } else {
                rows::update(conn, merchant_id, record).await
            }
        }
    }
}

/// The parts of a [`Resource`] that every record implements alike: its id, its soft delete, and
/// where its collection lives in the merchant's state (`crate::resource_basics!(stores);`).
#[macro_export]
macro_rules! resource_basics {
    ($collection:ident) => {
        fn id(&self) -> i64 {
            self.id
        }

        fn delete_date(&self) -> Option<i64> {
            self.delete_date
        }

        fn mark_deleted(&mut self, at: i64) {
            self.delete_date = Some(at);
        }

        fn collection(
            state: &$crate::actors::merchant::MerchantState,
        ) -> &$crate::actors::resource::Collection<Self> {
            &state.$collection
        }

        fn collection_mut(
            state: &mut $crate::actors::merchant::MerchantState,
        ) -> &mut $crate::actors::resource::Collection<Self> {
            &mut state.$collection
        }
    };
}
