//! merchantd's storage seam: the ports through which the engine and the services ask for what
//! is stored, written in domain types only. The storage crate implements them on SQLite and
//! PostgreSQL, the memory crate in memory; one conformance suite ([`conformance`]) holds every adapter to
//! the same behaviour.
//!
//! The traits are object-safe (boxed futures): the engine holds `Arc<dyn ...>` and pays one
//! allocation per call, which is per group, per load or per request, never per record.

#![forbid(unsafe_code)]

pub mod conformance;
mod error;
pub mod fleet;
mod merchant;
mod records;
mod replicas;
mod services;
mod tokens;
mod webhooks;

use std::future::Future;
use std::pin::Pin;

pub use error::StorageError;
pub use merchant::{
    GroupStore, GroupWrites, HistoryStore, MerchantStorage, OpenGroup, SalesFilter, StateStore,
    StockStore, StoredMerchant, WriteStep,
};
pub use records::{KindVisitor, RecordChanges, RecordKind, Records, Registered};
pub use replicas::{Announcement, Listening, Replicas};
pub use services::{
    DeliveryLog, Directory, EventLog, FileStore, LogStore, ReportStore, ServiceStorage,
};
pub use tokens::{Grant, Granted, NewCode, TokenStore};
pub use webhooks::DeliveryQueue;

/// A storage call's answer, later.
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = Result<T, StorageError>> + Send + 'a>>;
