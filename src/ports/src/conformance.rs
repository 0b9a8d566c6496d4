//! The storage conformance suite: one set of stories told through the merchant ports alone,
//! which every adapter runs in its own tests (memory, SQLite, PostgreSQL). If each passes,
//! the engine cannot tell them apart. An adapter hands the suite a [`Fixture`]: storage with
//! two merchants that each have a store and nothing else.

use std::collections::BTreeSet;
use std::sync::Arc;

use domain::batch::{Change, Idempotency, IDEMPOTENCY_TTL_MILLIS};
use domain::catalogue::category::CategoryRecord;
use domain::event::{EventKind, NewEvent};
use domain::record::filter;
use domain::sales::basket::BasketRecord;
use domain::sales::totals::Deltas;
use domain::stock::levels::{MoveReason, StockMove};

use crate::{
    GroupWrites, MerchantStorage, RecordKind, Records, Registered, SalesFilter, WriteStep,
};

/// What an adapter's test gives the suite.
pub struct Fixture {
    pub storage: Arc<dyn MerchantStorage>,
    /// Two merchants, each with a store: (merchant, store).
    pub merchants: [(i64, i64); 2],
}

/// Runs every story on the fixture `make` gives (a fresh one for each).
pub async fn run<F, Fut>(make: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Fixture>,
{
    a_committed_group_is_loaded_and_a_rolled_back_one_is_not(make().await).await;
    a_stale_group_is_refused_and_each_commit_moves_the_version(make().await).await;
    a_failing_part_is_taken_back_alone(make().await).await;
    sales_are_loaded_open_found_by_id_and_queried_by_filter(make().await).await;
    records_made_by_a_till_are_found_by_its_client_id(make().await).await;
    stock_moves_add_up(make().await).await;
    kept_answers_are_found_until_they_expire(make().await).await;
    events_are_numbered_after_the_last(make().await).await;
    identifiers_are_never_handed_out_twice(make().await).await;
}

fn category(id: i64, title: &str) -> CategoryRecord {
    let mut c = CategoryRecord::new(id, 1);
    c.title = title.to_owned();
    c
}

fn basket(id: i64, store_id: i64, completed: bool, at: i64) -> BasketRecord {
    let mut b = BasketRecord::new(id, at);
    b.store_id = store_id;
    b.completed = completed;
    b.complete_date = completed.then_some(at);
    b
}

/// Nothing but `steps`, written at `now`.
fn writes<'a>(merchant_id: i64, after_event: i64, steps: Vec<WriteStep<'a>>) -> GroupWrites<'a> {
    static NONE: Vec<StockMove> = Vec::new();
    static NO_EVENTS: Vec<NewEvent> = Vec::new();
    GroupWrites {
        merchant_id,
        steps,
        answers: Vec::new(),
        moves: &NONE,
        totals: empty_totals(),
        events: &NO_EVENTS,
        after_event,
        now: 1_000,
    }
}

fn empty_totals() -> &'static Deltas {
    static TOTALS: std::sync::OnceLock<Deltas> = std::sync::OnceLock::new();
    TOTALS.get_or_init(Deltas::new)
}

/// Writes `changes` of one record type as one committed group; the version it committed.
async fn commit<R: Registered>(
    storage: &dyn MerchantStorage,
    merchant_id: i64,
    changes: &[(Change, R)],
) -> i64 {
    let version = storage.version(merchant_id).await.expect("version");
    let after = storage.load(merchant_id).await.expect("load").event_seq;
    let mut group = storage
        .open_group(merchant_id, version)
        .await
        .expect("open")
        .expect("not stale");
    let w = writes(
        merchant_id,
        after,
        vec![WriteStep::Records(R::changes(changes))],
    );
    group.write(&w).await.expect("write");
    let committed = group.version();
    group.commit().await.expect("commit");
    committed
}

fn of<R: Registered>(records: Vec<Records>) -> Vec<R> {
    records
        .into_iter()
        .find(|r| r.kind() == R::KIND)
        .and_then(R::from_records)
        .unwrap_or_default()
}

async fn ids(storage: &dyn MerchantStorage, merchant_id: i64, n: usize) -> Vec<i64> {
    let version = storage.version(merchant_id).await.expect("version");
    let mut group = storage
        .open_group(merchant_id, version)
        .await
        .expect("open")
        .expect("not stale");
    let ids = group.allocate_ids(n).await.expect("ids");
    group.rollback().await;
    ids
}

pub async fn a_committed_group_is_loaded_and_a_rolled_back_one_is_not(f: Fixture) {
    let s = &*f.storage;
    let [(merchant, _), (other, _)] = f.merchants;
    let id = ids(s, merchant, 3).await;
    commit(s, merchant, &[(Change::New, category(id[0], "Kept"))]).await;

    let version = s.version(merchant).await.expect("version");
    let mut group = s.open_group(merchant, version).await.unwrap().unwrap();
    let changes = [(Change::New, category(id[1], "Rolled back"))];
    let w = writes(
        merchant,
        0,
        vec![WriteStep::Records(CategoryRecord::changes(&changes))],
    );
    group.write(&w).await.expect("write");
    group.rollback().await;

    let loaded = of::<CategoryRecord>(s.load(merchant).await.unwrap().records);
    let titles: Vec<&str> = loaded.iter().map(|c| c.title.as_str()).collect();
    assert_eq!(titles, ["Kept"]);

    // An update rewrites the record; another merchant never sees it.
    commit(
        s,
        merchant,
        &[(Change::Updated, category(id[0], "Renamed"))],
    )
    .await;
    let loaded = of::<CategoryRecord>(s.load(merchant).await.unwrap().records);
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].title, "Renamed");
    assert!(of::<CategoryRecord>(s.load(other).await.unwrap().records).is_empty());
}

pub async fn a_stale_group_is_refused_and_each_commit_moves_the_version(f: Fixture) {
    let s = &*f.storage;
    let (merchant, _) = f.merchants[0];
    let before = s.version(merchant).await.expect("version");
    let id = ids(s, merchant, 2).await;
    let committed = commit(s, merchant, &[(Change::New, category(id[0], "One"))]).await;
    // What the group said it commits is what storage and a load then say; storage shared by
    // several processes moves it on at every commit (SQLite serves one and need not).
    assert_eq!(s.version(merchant).await.unwrap(), committed);
    assert_eq!(s.load(merchant).await.unwrap().version, committed);
    assert!(
        committed == before || committed == before + 1,
        "{before} → {committed}"
    );
    if committed > before {
        // A group opened on the old version is told to reload first.
        assert!(s.open_group(merchant, before).await.unwrap().is_none());
    }
    let again = commit(s, merchant, &[(Change::New, category(id[1], "Two"))]).await;
    assert_eq!(again - committed, committed - before);
}

pub async fn a_failing_part_is_taken_back_alone(f: Fixture) {
    let s = &*f.storage;
    let (merchant, _) = f.merchants[0];
    let id = ids(s, merchant, 2).await;
    commit(s, merchant, &[(Change::New, category(id[0], "Stored"))]).await;

    let version = s.version(merchant).await.unwrap();
    let mut group = s.open_group(merchant, version).await.unwrap().unwrap();
    // Storing a new record under an id that is taken fails: that part alone.
    let twice = [(Change::New, category(id[0], "Twice"))];
    let w = writes(
        merchant,
        0,
        vec![WriteStep::Records(CategoryRecord::changes(&twice))],
    );
    let failed = group.write_part(&w).await.expect("the group goes on");
    assert!(failed.is_err(), "a taken id was stored again");
    let fine = [(Change::New, category(id[1], "Fine"))];
    let w = writes(
        merchant,
        0,
        vec![WriteStep::Records(CategoryRecord::changes(&fine))],
    );
    group
        .write_part(&w)
        .await
        .expect("the group goes on")
        .expect("the part");
    group.commit().await.expect("commit");

    let mut titles: Vec<String> = of::<CategoryRecord>(s.load(merchant).await.unwrap().records)
        .into_iter()
        .map(|c| c.title)
        .collect();
    titles.sort();
    assert_eq!(titles, ["Fine", "Stored"]);
}

pub async fn sales_are_loaded_open_found_by_id_and_queried_by_filter(f: Fixture) {
    let s = &*f.storage;
    let [(merchant, store), (other, _)] = f.merchants;
    let id = ids(s, merchant, 30).await;
    // Every third basket is still open; completion times are one second apart.
    let baskets: Vec<(Change, BasketRecord)> = id
        .iter()
        .enumerate()
        .map(|(i, id)| {
            (
                Change::New,
                basket(*id, store, i % 3 != 0, 1_000_000 + i as i64 * 1_000),
            )
        })
        .collect();
    commit(s, merchant, &baskets).await;

    let open = of::<BasketRecord>(s.load(merchant).await.unwrap().records);
    assert_eq!(open.len(), 10);
    assert!(open.iter().all(|b| !b.completed));

    let found = s
        .find(RecordKind::baskets, merchant, id.clone())
        .await
        .unwrap();
    let mut found: Vec<i64> = of::<BasketRecord>(vec![found])
        .iter()
        .map(|b| b.id)
        .collect();
    found.sort();
    assert_eq!(found, id);

    let query = |filter: SalesFilter, merchant: i64| async move {
        let found = s
            .query(RecordKind::baskets, merchant, filter)
            .await
            .unwrap();
        of::<BasketRecord>(vec![found])
    };
    let completed = SalesFilter {
        completed: Some(true),
        ..SalesFilter::default()
    }
    .with(filter::STORE_IDS, vec![store]);
    assert_eq!(query(completed, merchant).await.len(), 20);
    let window = SalesFilter {
        completed: Some(true),
        completed_between: Some((1_000_000, 1_000_000 + 9_000)),
        ..SalesFilter::default()
    };
    // Of i in 0..9, those not divisible by 3.
    assert_eq!(query(window, merchant).await.len(), 6);
    assert!(query(SalesFilter::default(), other).await.is_empty());

    // A soft-deleted basket is left out unless asked for.
    let mut gone = basket(id[1], store, true, 1_001_000);
    gone.delete_date = Some(2_000_000);
    commit(s, merchant, &[(Change::Updated, gone)]).await;
    let only = |include_deleted| SalesFilter {
        ids: Some(vec![id[1]]),
        include_deleted,
        ..SalesFilter::default()
    };
    assert!(query(only(false), merchant).await.is_empty());
    assert_eq!(query(only(true), merchant).await.len(), 1);
    // Catalogue records are not read by filter.
    assert!(s
        .query(RecordKind::categories, merchant, SalesFilter::default())
        .await
        .is_err());
}

pub async fn records_made_by_a_till_are_found_by_its_client_id(f: Fixture) {
    let s = &*f.storage;
    let [(merchant, store), (other, _)] = f.merchants;
    let id = ids(s, merchant, 2).await;
    let client = "0b9f6a4e-5b0d-4c1e-9d57-3f1f2a7c8e11";
    let mut made = basket(id[0], store, false, 1);
    made.client_id = Some(client.to_owned());
    commit(
        s,
        merchant,
        &[
            (Change::New, made),
            (Change::New, basket(id[1], store, false, 1)),
        ],
    )
    .await;
    let found = s
        .made_by_clients(RecordKind::baskets, merchant, vec![client.to_owned()])
        .await
        .unwrap();
    assert_eq!(found, [id[0]]);
    let elsewhere = s
        .made_by_clients(RecordKind::baskets, other, vec![client.to_owned()])
        .await
        .unwrap();
    assert!(elsewhere.is_empty());
}

pub async fn stock_moves_add_up(f: Fixture) {
    let s = &*f.storage;
    let [(merchant, store), (other, other_store)] = f.merchants;
    let product = ids(s, merchant, 1).await[0];
    for (total, sold) in [(10, 0), (0, 3), (5, 1)] {
        let moved = [StockMove {
            store_id: store,
            product_id: product,
            total,
            sold,
            at: 1,
            reason: MoveReason::default(),
            source_id: 0,
        }];
        let version = s.version(merchant).await.unwrap();
        let after = s.load(merchant).await.unwrap().event_seq;
        let mut group = s.open_group(merchant, version).await.unwrap().unwrap();
        let mut w = writes(merchant, after, Vec::new());
        w.moves = &moved;
        group.write(&w).await.expect("write");
        group.commit().await.expect("commit");
    }
    let levels = s.store_stock(merchant, store).await.unwrap();
    assert_eq!((levels[&product].total, levels[&product].sold), (15, 4));
    assert_eq!(
        s.load(merchant).await.unwrap().stock[&store][&product].left(),
        11
    );
    assert!(s.store_stock(other, other_store).await.unwrap().is_empty());
}

pub async fn kept_answers_are_found_until_they_expire(f: Fixture) {
    let s = &*f.storage;
    let [(merchant, _), (other, _)] = f.merchants;
    let key = Idempotency {
        application_id: 1,
        key: "sale-17".into(),
        fingerprint: "f".repeat(64),
    };
    let version = s.version(merchant).await.unwrap();
    let mut group = s.open_group(merchant, version).await.unwrap().unwrap();
    let mut w = writes(merchant, 0, Vec::new());
    w.answers = vec![(&key, "{\"kept\":true}".to_owned())];
    group.write(&w).await.expect("write");
    group.commit().await.expect("commit");

    let version = s.version(merchant).await.unwrap();
    let mut group = s.open_group(merchant, version).await.unwrap().unwrap();
    let found = group
        .stored_answer(&key, 2_000)
        .await
        .unwrap()
        .expect("kept");
    assert_eq!(found.fingerprint, key.fingerprint);
    assert_eq!(found.answer, "{\"kept\":true}");
    let expired = group
        .stored_answer(&key, 1_000 + IDEMPOTENCY_TTL_MILLIS)
        .await
        .unwrap();
    assert!(expired.is_none());
    group.rollback().await;

    let version = s.version(other).await.unwrap();
    let mut group = s.open_group(other, version).await.unwrap().unwrap();
    assert!(group.stored_answer(&key, 2_000).await.unwrap().is_none());
    group.rollback().await;
}

pub async fn events_are_numbered_after_the_last(f: Fixture) {
    let s = &*f.storage;
    let (merchant, _) = f.merchants[0];
    let start = s.load(merchant).await.unwrap().event_seq;
    let events: Vec<NewEvent> = (0..3)
        .map(|i| NewEvent {
            kind: EventKind::new("category", "created"),
            object_id: i,
            data: format!("{{\"n\":{i}}}"),
        })
        .collect();
    let version = s.version(merchant).await.unwrap();
    let mut group = s.open_group(merchant, version).await.unwrap().unwrap();
    let mut w = writes(merchant, start, Vec::new());
    w.events = &events;
    let last = group.write(&w).await.expect("write");
    group.commit().await.expect("commit");
    assert_eq!(last, start + 3);
    assert_eq!(s.load(merchant).await.unwrap().event_seq, start + 3);
}

pub async fn identifiers_are_never_handed_out_twice(f: Fixture) {
    let s = &*f.storage;
    let [(merchant, _), (other, _)] = f.merchants;
    let mut seen = BTreeSet::new();
    for (m, n) in [(merchant, 100), (other, 100), (merchant, 600)] {
        for id in ids(s, m, n).await {
            assert!(seen.insert(id), "id {id} handed out twice");
        }
    }
    assert_eq!(seen.len(), 800);
}
