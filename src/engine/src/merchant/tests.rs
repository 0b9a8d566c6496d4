//! The merchant supervisor on storage in memory (`merchantd-memory`): its write queue and
//! group commit, a failed commit, activation, passivation, and readers during a write. No
//! database, no HTTP: what is tested is the actors' own protocol.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use serde_json::{Map, Value};

use crate::merchant::job::{DeleteOutcome, ObjectOutcome};
use crate::merchant::registry::{Merchants, RegistryConfig};
use crate::merchant::render::Render;
use crate::merchant::state::{Memo, MerchantState};
use domain::batch::{Answered, BatchObject, WriteMode};
use domain::catalogue::category::CategoryRecord;
use domain::catalogue::file::ImportReport;
use domain::record::Visit;
use domain::stock::levels::StockLevel;
use domain::Failure;
use memory::MemoryStorage;
use metrics::Metrics;

const MERCHANT: i64 = 7;

/// The read side is not under test: every rendering is empty.
struct Blank;

impl Render for Blank {
    fn record(&self, _: &dyn Visit, _: &Memo, _: &MerchantState) -> String {
        String::new()
    }
    fn event(&self, _: &dyn Visit, _: Option<&Memo>, _: &MerchantState) -> String {
        String::new()
    }
    fn stock(&self, _: i64, _: i64, _: StockLevel) -> String {
        String::new()
    }
    fn written(&self, _: &[ObjectOutcome]) -> String {
        String::new()
    }
    fn deleted(&self, _: &[(i64, DeleteOutcome)]) -> String {
        String::new()
    }
    fn imported(&self, _: &ImportReport) -> String {
        String::new()
    }
    fn payload(&self, _: &domain::event::Event) -> String {
        String::new()
    }
    fn shortfall(&self, _: &domain::offline::sync::Shortfall) -> String {
        String::new()
    }
    fn synced(&self, _: &crate::offline::sync::Synced) -> String {
        String::new()
    }
}

fn start(storage: &MemoryStorage, metrics: &Metrics, idle: Duration, delay: Duration) -> Merchants {
    Merchants::start(
        Arc::new(storage.clone()),
        metrics.clone(),
        RegistryConfig {
            idle,
            files_base: "http://files.test",
            product_quota: 0,
            window: 100,
            write_delay: delay,
            render: Arc::new(Blank),
        },
    )
}

/// Fresh storage and merchants whose groups stay open for `delay` before they commit.
fn busy(delay: Duration) -> (MemoryStorage, Merchants) {
    let storage = MemoryStorage::new();
    let merchants = start(&storage, &Metrics::new(), Duration::from_secs(60), delay);
    (storage, merchants)
}

/// Creates a category titled `title`; its id, or why the write failed.
async fn create(merchants: &Merchants, title: impl Into<String>) -> Result<i64, Failure> {
    let mut fields = Map::new();
    fields.insert("title".into(), Value::String(title.into()));
    let object = BatchObject::new("k".into(), Ok(fields));
    let answered = merchants
        .write::<CategoryRecord>(MERCHANT, WriteMode::Upsert, vec![object], 1, None)
        .await?;
    let Answered::Fresh(mut outcomes) = answered else {
        panic!("a write without a key was replayed");
    };
    match outcomes.pop().map(|o| o.result) {
        Some(Ok(saved)) => Ok(saved.id),
        other => panic!("the category was refused: {other:?}"),
    }
}

async fn titles(merchants: &Merchants) -> Vec<String> {
    let state = merchants.snapshot(MERCHANT).await.expect("snapshot");
    let mut titles: Vec<String> = state
        .live::<CategoryRecord>()
        .map(|c| c.title.clone())
        .collect();
    titles.sort();
    titles
}

#[actix_rt::test]
async fn writes_queued_behind_a_write_are_committed_together() {
    let (storage, merchants) = busy(Duration::from_millis(300));
    // The first write holds its group open for 300 ms; the five sent meanwhile queue.
    let first = create(&merchants, "first");
    let queued = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        join_all((0..5).map(|i| create(&merchants, format!("queued {i}")))).await
    };
    let (first, queued) = tokio::join!(first, queued);
    assert!(first.is_ok());
    assert!(queued.iter().all(Result::is_ok), "{queued:?}");
    assert_eq!(
        storage.commits(),
        2,
        "one group for the first write, one for the five"
    );
    assert_eq!(titles(&merchants).await.len(), 6);
    assert_eq!(storage.committed(MERCHANT).0, 2);
}

#[actix_rt::test]
async fn a_failed_commit_applies_nothing_and_answers_every_waiter() {
    let (storage, merchants) = busy(Duration::from_millis(100));
    create(&merchants, "kept").await.expect("first write");
    storage.refuse_commits(true);
    let failed = join_all((0..4).map(|i| create(&merchants, format!("lost {i}")))).await;
    assert!(failed.iter().all(Result::is_err), "{failed:?}");
    assert_eq!(
        titles(&merchants).await,
        ["kept"],
        "nothing of the failed group is published"
    );
    assert_eq!(storage.committed(MERCHANT).0, 1);
    storage.refuse_commits(false);
    create(&merchants, "after")
        .await
        .expect("a write after the failure");
    assert_eq!(titles(&merchants).await, ["after", "kept"]);
}

#[actix_rt::test]
async fn activation_starts_from_what_storage_keeps() {
    let storage = MemoryStorage::new();
    let first = start(
        &storage,
        &Metrics::new(),
        Duration::from_secs(60),
        Duration::ZERO,
    );
    create(&first, "stored").await.expect("write");
    assert_eq!(storage.loads(), 1);
    // Another process over the same storage activates the merchant from it.
    let second = start(
        &storage,
        &Metrics::new(),
        Duration::from_secs(60),
        Duration::ZERO,
    );
    assert_eq!(titles(&second).await, ["stored"]);
    assert_eq!(storage.loads(), 2);
    let state = second.snapshot(MERCHANT).await.expect("snapshot");
    assert_eq!(
        (state.version, state.event_seq),
        storage.committed(MERCHANT)
    );
}

#[actix_rt::test]
async fn an_idle_merchant_is_passivated_and_loaded_again_on_the_next_request() {
    let storage = MemoryStorage::new();
    let metrics = Metrics::new();
    let merchants = start(
        &storage,
        &metrics,
        Duration::from_millis(200),
        Duration::ZERO,
    );
    create(&merchants, "before").await.expect("write");
    assert_eq!(metrics.merchant_actors_active.get(), 1);
    let mut waited = Duration::ZERO;
    while metrics.merchant_actors_active.get() != 0 {
        assert!(
            waited < Duration::from_secs(10),
            "the idle merchant was never passivated"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += Duration::from_millis(50);
    }
    assert_eq!(titles(&merchants).await, ["before"]);
    assert_eq!(
        storage.loads(),
        2,
        "the next request loaded the merchant again"
    );
    assert_eq!(metrics.merchant_actor_activations.get(), 2);
}

#[actix_rt::test]
async fn readers_see_the_last_published_state_while_a_write_is_open() {
    let (storage, merchants) = busy(Duration::from_millis(400));
    create(&merchants, "old").await.expect("first write");
    let write = create(&merchants, "new");
    let reads = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let during = join_all((0..20).map(|_| titles(&merchants))).await;
        // Every read answered while the write still held its group open.
        (during, storage.commits())
    };
    let (written, (during, commits_then)) = tokio::join!(write, reads);
    written.expect("second write");
    assert_eq!(
        commits_then, 1,
        "the reads were answered before the second commit"
    );
    assert!(during.iter().all(|t| t == &["old"]), "{during:?}");
    assert_eq!(titles(&merchants).await, ["new", "old"]);
}
