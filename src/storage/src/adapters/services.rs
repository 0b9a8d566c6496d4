//! The services' ports over pods: reads go to the pod holding the merchant, writes follow a
//! merchant that moves meanwhile (they waited on the move's hold in the old pod).

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
use ports::{DeliveryLog, Directory, EventLog, FileStore, LogStore, Pending, ReportStore};

use crate::adapters::PodStorage;

impl Directory for PodStorage {
    fn merchant(&self, id: i64) -> Pending<'_, Option<MerchantRecord>> {
        self.in_pod_of(id, move |db| async move { db.merchant(id).await })
    }

    fn application_is_legacy(&self, application_id: i64) -> Pending<'_, bool> {
        Box::pin(async move {
            for pod in self.pods.all() {
                if pod.db.application_is_legacy(application_id).await? {
                    return Ok(true);
                }
            }
            Ok(false)
        })
    }

    fn ready(&self) -> Pin<Box<dyn Future<Output = bool> + Send + '_>> {
        // The home database only: a pod that is away fails its own merchants' requests, and
        // taking every replica out of rotation for it would fail everyone's.
        let home = self.pods.home();
        Box::pin(async move { home.coherence().is_live() && home.ping().await })
    }
}

impl LogStore for PodStorage {
    fn insert_log<'a>(
        &'a self,
        merchant_id: i64,
        log: &'a NewLog<'a>,
        now: i64,
    ) -> Pending<'a, LogRecord> {
        self.following(merchant_id, move |db| async move {
            let mut tx = db.begin().await?;
            tx.stay_with(merchant_id).await?;
            let record = tx.insert_log(merchant_id, log, now).await?;
            tx.commit().await?;
            Ok(record)
        })
    }

    fn update_log<'a>(
        &'a self,
        merchant_id: i64,
        log_id: &'a str,
        change: &'a LogChange<'a>,
        now: i64,
    ) -> Pending<'a, Option<LogRecord>> {
        self.following(merchant_id, move |db| async move {
            let mut tx = db.begin().await?;
            tx.stay_with(merchant_id).await?;
            let record = tx.update_log(merchant_id, log_id, change, now).await?;
            tx.commit().await?;
            Ok(record)
        })
    }

    fn delete_log<'a>(&'a self, merchant_id: i64, log_id: &'a str) -> Pending<'a, bool> {
        self.following(merchant_id, move |db| async move {
            let mut tx = db.begin().await?;
            tx.stay_with(merchant_id).await?;
            let deleted = tx.delete_log(merchant_id, log_id).await?;
            tx.commit().await?;
            Ok(deleted)
        })
    }

    fn log<'a>(&'a self, merchant_id: i64, log_id: &'a str) -> Pending<'a, Option<LogRecord>> {
        self.in_pod_of(merchant_id, move |db| async move {
            db.log(merchant_id, log_id).await
        })
    }

    fn logs_of<'a>(
        &'a self,
        merchant_id: i64,
        object: &'a str,
        identifier: &'a str,
    ) -> Pending<'a, Vec<LogRecord>> {
        self.in_pod_of(merchant_id, move |db| async move {
            db.logs_of(merchant_id, object, identifier).await
        })
    }

    fn logs_quoting<'a>(
        &'a self,
        merchant_id: i64,
        values: &'a [String],
    ) -> Pending<'a, Vec<LogRecord>> {
        self.in_pod_of(merchant_id, move |db| async move {
            db.logs_quoting(merchant_id, values).await
        })
    }
}

impl FileStore for PodStorage {
    fn put_file<'a>(&'a self, file: &'a NewFile<'a>, now: i64) -> Pending<'a, ()> {
        self.following(file.merchant_id, move |db| async move {
            db.put_file(file, now).await
        })
    }

    fn put_file_within<'a>(
        &'a self,
        file: &'a NewFile<'a>,
        now: i64,
        quota: u64,
    ) -> Pending<'a, Option<u64>> {
        self.following(file.merchant_id, move |db| async move {
            db.put_file_within(file, now, quota).await
        })
    }

    fn file<'a>(&'a self, file_name: &'a str) -> Pending<'a, Option<StoredFile>> {
        self.first_found(move |db| db.file(file_name))
    }
}

impl EventLog for PodStorage {
    fn changed_since<'a>(&'a self, window: ChangeWindow<'a>) -> Pending<'a, Option<BTreeSet<i64>>> {
        self.in_pod_of(window.merchant_id, move |db| async move {
            db.changed_since(window).await
        })
    }

    fn events_after(&self, merchant_id: i64, after: i64, limit: i64) -> Pending<'_, Vec<Event>> {
        self.in_pod_of(merchant_id, move |db| async move {
            db.events_after(merchant_id, after, limit).await
        })
    }

    fn event_position(&self, merchant_id: i64) -> Pending<'_, LogPosition> {
        self.in_pod_of(merchant_id, move |db| async move {
            db.event_position(merchant_id).await
        })
    }

    fn customer_events(&self, merchant_id: i64, customer_id: i64) -> Pending<'_, Vec<Event>> {
        self.in_pod_of(merchant_id, move |db| async move {
            db.customer_events(merchant_id, customer_id).await
        })
    }
}

impl ReportStore for PodStorage {
    fn basket_report<'a>(&'a self, range: &'a ReportRange<'a>) -> Pending<'a, BasketReport> {
        self.in_pod_of(range.merchant_id, move |db| async move {
            db.basket_report(range).await
        })
    }

    fn sales_totals<'a>(
        &'a self,
        range: &'a TotalsRange<'a>,
    ) -> Pending<'a, Vec<(TotalsKey, Totals)>> {
        self.in_pod_of(range.merchant_id, move |db| async move {
            db.sales_totals(range).await
        })
    }

    fn stock_ledger<'a>(
        &'a self,
        merchant_id: i64,
        products: &'a [i64],
        range: (i64, i64),
    ) -> Pending<'a, Option<Ledger>> {
        self.in_pod_of(merchant_id, move |db| async move {
            db.stock_ledger(merchant_id, products, range).await
        })
    }

    fn digest<'a>(
        &'a self,
        merchant_id: i64,
        object: &'a str,
        size: i64,
    ) -> Pending<'a, Vec<Bucket>> {
        self.in_pod_of(merchant_id, move |db| async move {
            db.digest(merchant_id, object, size).await
        })
    }

    fn catch_up_digests(&self, merchant_id: i64) -> Pending<'_, ()> {
        self.in_pod_of(merchant_id, move |db| async move {
            db.catch_up_digests(merchant_id, i64::MAX).await
        })
    }
}

impl DeliveryLog for PodStorage {
    fn webhook_deliveries<'a>(&'a self, query: &'a DeliveryQuery) -> Pending<'a, Vec<Delivery>> {
        self.in_pod_of(query.merchant_id, move |db| async move {
            db.webhook_deliveries(query).await
        })
    }

    fn resend_deliveries<'a>(&'a self, resend: Resend<'a>) -> Pending<'a, Vec<i64>> {
        self.in_pod_of(resend.merchant_id, move |db| async move {
            db.resend_deliveries(resend).await
        })
    }
}
