//! The storage ports the actors speak to (`merchantd-ports`), re-exported where the actors
//! name them.

pub use ports::{
    Announcement, Grant, Granted, GroupStore, GroupWrites, HistoryStore, MerchantStorage, NewCode,
    OpenGroup, Pending, RecordChanges, RecordKind, Records, Registered, Replicas, SalesFilter,
    StateStore, StockStore, StorageError, StoredMerchant, TokenStore, WriteStep,
};
