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
        Box::pin(async move { Ok(self.pods.of(id).await?.merchant(id).await?) })
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
        Box::pin(async move {
            Ok(self
                .pods
                .following(merchant_id, |db| async move {
                    let mut tx = db.begin().await?;
                    tx.stay_with(merchant_id).await?;
                    let record = tx.insert_log(merchant_id, log, now).await?;
                    tx.commit().await?;
                    Ok(record)
                })
                .await?)
        })
    }

    fn update_log<'a>(
        &'a self,
        merchant_id: i64,
        log_id: &'a str,
        change: &'a LogChange<'a>,
        now: i64,
    ) -> Pending<'a, Option<LogRecord>> {
        Box::pin(async move {
            Ok(self
                .pods
                .following(merchant_id, |db| async move {
                    let mut tx = db.begin().await?;
                    tx.stay_with(merchant_id).await?;
                    let record = tx.update_log(merchant_id, log_id, change, now).await?;
                    tx.commit().await?;
                    Ok(record)
                })
                .await?)
        })
    }

    fn delete_log<'a>(&'a self, merchant_id: i64, log_id: &'a str) -> Pending<'a, bool> {
        Box::pin(async move {
            Ok(self
                .pods
                .following(merchant_id, |db| async move {
                    let mut tx = db.begin().await?;
                    tx.stay_with(merchant_id).await?;
                    let deleted = tx.delete_log(merchant_id, log_id).await?;
                    tx.commit().await?;
                    Ok(deleted)
                })
                .await?)
        })
    }

    fn log<'a>(&'a self, merchant_id: i64, log_id: &'a str) -> Pending<'a, Option<LogRecord>> {
        Box::pin(async move {
            Ok(self
                .pods
                .of(merchant_id)
                .await?
                .log(merchant_id, log_id)
                .await?)
        })
    }

    fn logs_of<'a>(
        &'a self,
        merchant_id: i64,
        object: &'a str,
        identifier: &'a str,
    ) -> Pending<'a, Vec<LogRecord>> {
        Box::pin(async move {
            let db = self.pods.of(merchant_id).await?;
            Ok(db.logs_of(merchant_id, object, identifier).await?)
        })
    }

    fn logs_quoting<'a>(
        &'a self,
        merchant_id: i64,
        values: &'a [String],
    ) -> Pending<'a, Vec<LogRecord>> {
        Box::pin(async move {
            let db = self.pods.of(merchant_id).await?;
            Ok(db.logs_quoting(merchant_id, values).await?)
        })
    }
}

impl FileStore for PodStorage {
    fn put_file<'a>(&'a self, file: &'a NewFile<'a>, now: i64) -> Pending<'a, ()> {
        Box::pin(async move {
            Ok(self
                .pods
                .following(file.merchant_id, |db| async move {
                    db.put_file(file, now).await
                })
                .await?)
        })
    }

    fn put_file_within<'a>(
        &'a self,
        file: &'a NewFile<'a>,
        now: i64,
        quota: u64,
    ) -> Pending<'a, Option<u64>> {
        Box::pin(async move {
            Ok(self
                .pods
                .following(file.merchant_id, |db| async move {
                    db.put_file_within(file, now, quota).await
                })
                .await?)
        })
    }

    fn file<'a>(&'a self, file_name: &'a str) -> Pending<'a, Option<StoredFile>> {
        Box::pin(async move {
            for pod in self.pods.all() {
                if let Some(found) = pod.db.file(file_name).await? {
                    return Ok(Some(found));
                }
            }
            Ok(None)
        })
    }
}

impl EventLog for PodStorage {
    fn changed_since<'a>(&'a self, window: ChangeWindow<'a>) -> Pending<'a, Option<BTreeSet<i64>>> {
        Box::pin(async move {
            let db = self.pods.of(window.merchant_id).await?;
            Ok(db.changed_since(window).await?)
        })
    }

    fn events_after(&self, merchant_id: i64, after: i64, limit: i64) -> Pending<'_, Vec<Event>> {
        Box::pin(async move {
            let db = self.pods.of(merchant_id).await?;
            Ok(db.events_after(merchant_id, after, limit).await?)
        })
    }

    fn event_position(&self, merchant_id: i64) -> Pending<'_, LogPosition> {
        Box::pin(async move {
            let db = self.pods.of(merchant_id).await?;
            Ok(db.event_position(merchant_id).await?)
        })
    }

    fn customer_events(&self, merchant_id: i64, customer_id: i64) -> Pending<'_, Vec<Event>> {
        Box::pin(async move {
            let db = self.pods.of(merchant_id).await?;
            Ok(db.customer_events(merchant_id, customer_id).await?)
        })
    }
}

impl ReportStore for PodStorage {
    fn basket_report<'a>(&'a self, range: &'a ReportRange<'a>) -> Pending<'a, BasketReport> {
        Box::pin(async move {
            let db = self.pods.of(range.merchant_id).await?;
            Ok(db.basket_report(range).await?)
        })
    }

    fn sales_totals<'a>(
        &'a self,
        range: &'a TotalsRange<'a>,
    ) -> Pending<'a, Vec<(TotalsKey, Totals)>> {
        Box::pin(async move {
            let db = self.pods.of(range.merchant_id).await?;
            Ok(db.sales_totals(range).await?)
        })
    }

    fn stock_ledger<'a>(
        &'a self,
        merchant_id: i64,
        products: &'a [i64],
        range: (i64, i64),
    ) -> Pending<'a, Option<Ledger>> {
        Box::pin(async move {
            let db = self.pods.of(merchant_id).await?;
            Ok(db.stock_ledger(merchant_id, products, range).await?)
        })
    }

    fn digest<'a>(
        &'a self,
        merchant_id: i64,
        object: &'a str,
        size: i64,
    ) -> Pending<'a, Vec<Bucket>> {
        Box::pin(async move {
            let db = self.pods.of(merchant_id).await?;
            Ok(db.digest(merchant_id, object, size).await?)
        })
    }

    fn catch_up_digests(&self, merchant_id: i64) -> Pending<'_, ()> {
        Box::pin(async move {
            let db = self.pods.of(merchant_id).await?;
            Ok(db.catch_up_digests(merchant_id, i64::MAX).await?)
        })
    }
}

impl DeliveryLog for PodStorage {
    fn webhook_deliveries<'a>(&'a self, query: &'a DeliveryQuery) -> Pending<'a, Vec<Delivery>> {
        Box::pin(async move {
            let db = self.pods.of(query.merchant_id).await?;
            Ok(db.webhook_deliveries(query).await?)
        })
    }

    fn resend_deliveries<'a>(&'a self, resend: Resend<'a>) -> Pending<'a, Vec<i64>> {
        Box::pin(async move {
            let db = self.pods.of(resend.merchant_id).await?;
            Ok(db.resend_deliveries(resend).await?)
        })
    }
}
