//! What the services read and write for the requests no actor owns: the merchant directory,
//! logs, uploaded files, the event log, reports and digests, webhook deliveries. One small
//! trait per feature; every call names its merchant, and storage finds where it lives.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;

use domain::event::{ChangeWindow, Event, LogPosition};
use domain::file::{NewFile, StoredFile};
use domain::fleet::merchant::MerchantRecord;
use domain::log::{LogChange, LogRecord, NewLog};
use domain::offline::digest::Bucket;
use domain::sales::report::{BasketReport, ReportRange};
use domain::sales::totals::{Totals, TotalsKey, TotalsRange};
use domain::stock::levels::Ledger;
use domain::webhooks::webhook::{Delivery, DeliveryQuery, Resend};

use crate::Pending;

/// Merchants and applications as requests find them, and whether storage is fit to serve.
pub trait Directory: Send + Sync {
    fn merchant(&self, id: i64) -> Pending<'_, Option<MerchantRecord>>;
    /// Whether the application's merchant lets it use the old clients' conventions.
    fn application_is_legacy(&self, application_id: i64) -> Pending<'_, bool>;
    /// True while the home database answers and, where replicas share it, this process hears
    /// the others' writes (otherwise its caches could serve stale data).
    fn ready(&self) -> Pin<Box<dyn Future<Output = bool> + Send + '_>>;
}

/// The merchant's logs (`/log`). Writes wait on a merchant's move and follow it.
pub trait LogStore: Send + Sync {
    fn insert_log<'a>(
        &'a self,
        merchant_id: i64,
        log: &'a NewLog<'a>,
        now: i64,
    ) -> Pending<'a, LogRecord>;
    fn update_log<'a>(
        &'a self,
        merchant_id: i64,
        log_id: &'a str,
        change: &'a LogChange<'a>,
        now: i64,
    ) -> Pending<'a, Option<LogRecord>>;
    fn delete_log<'a>(&'a self, merchant_id: i64, log_id: &'a str) -> Pending<'a, bool>;
    fn log<'a>(&'a self, merchant_id: i64, log_id: &'a str) -> Pending<'a, Option<LogRecord>>;
    fn logs_of<'a>(
        &'a self,
        merchant_id: i64,
        object: &'a str,
        identifier: &'a str,
    ) -> Pending<'a, Vec<LogRecord>>;
    /// Logs quoting any of `values` (a customer's export).
    fn logs_quoting<'a>(
        &'a self,
        merchant_id: i64,
        values: &'a [String],
    ) -> Pending<'a, Vec<LogRecord>>;
}

/// Uploaded files (`/uploader`, `/files`).
pub trait FileStore: Send + Sync {
    fn put_file<'a>(&'a self, file: &'a NewFile<'a>, now: i64) -> Pending<'a, ()>;
    /// Stores the file unless the merchant's files would then hold more than `quota` bytes:
    /// `Some(held)` (what they hold) when refused.
    fn put_file_within<'a>(
        &'a self,
        file: &'a NewFile<'a>,
        now: i64,
        quota: u64,
    ) -> Pending<'a, Option<u64>>;
    fn file<'a>(&'a self, file_name: &'a str) -> Pending<'a, Option<StoredFile>>;
}

/// The merchant's change-event log.
pub trait EventLog: Send + Sync {
    /// The objects changed in the window, or `None` when the log no longer covers it.
    fn changed_since<'a>(&'a self, window: ChangeWindow<'a>) -> Pending<'a, Option<BTreeSet<i64>>>;
    fn events_after(&self, merchant_id: i64, after: i64, limit: i64) -> Pending<'_, Vec<Event>>;
    fn event_position(&self, merchant_id: i64) -> Pending<'_, LogPosition>;
    /// The events about a customer (its export).
    fn customer_events(&self, merchant_id: i64, customer_id: i64) -> Pending<'_, Vec<Event>>;
}

/// Reports read from what is stored.
pub trait ReportStore: Send + Sync {
    fn basket_report<'a>(&'a self, range: &'a ReportRange<'a>) -> Pending<'a, BasketReport>;
    fn sales_totals<'a>(
        &'a self,
        range: &'a TotalsRange<'a>,
    ) -> Pending<'a, Vec<(TotalsKey, Totals)>>;
    /// The stock ledger of these products over `[from, to)`; `None` when the range starts
    /// before what the ledger keeps.
    fn stock_ledger<'a>(
        &'a self,
        merchant_id: i64,
        products: &'a [i64],
        range: (i64, i64),
    ) -> Pending<'a, Option<Ledger>>;
    /// The merchant's record digests of `object` in buckets of `size` ids, caught up first.
    fn digest<'a>(
        &'a self,
        merchant_id: i64,
        object: &'a str,
        size: i64,
    ) -> Pending<'a, Vec<Bucket>>;
    /// Brings the merchant's record digests up to its last event.
    fn catch_up_digests(&self, merchant_id: i64) -> Pending<'_, ()>;
}

/// Webhook deliveries as the merchant sees them.
pub trait DeliveryLog: Send + Sync {
    fn webhook_deliveries<'a>(&'a self, query: &'a DeliveryQuery) -> Pending<'a, Vec<Delivery>>;
    /// Delivers these events again; the sequence numbers queued.
    fn resend_deliveries<'a>(&'a self, resend: Resend<'a>) -> Pending<'a, Vec<i64>>;
}

/// Everything the services ask of storage.
pub trait ServiceStorage:
    Directory + LogStore + FileStore + EventLog + ReportStore + DeliveryLog
{
}

impl<T: Directory + LogStore + FileStore + EventLog + ReportStore + DeliveryLog> ServiceStorage
    for T
{
}
