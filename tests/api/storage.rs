//! Storage conformance, as atuin does it: one story told through the storage seam alone
//! (`merchantd::db::Db`, its `Tx` and the record traits, no SQL and no server), run against
//! SQLite and PostgreSQL. If both backends pass, the layers above cannot tell them apart.

use std::collections::BTreeSet;

use futures_util::future::join_all;
use merchantd::db::{Db, Record, SalesFilter, SalesRecord};
use merchantd::domain::catalogue::category::CategoryRecord;
use merchantd::domain::log::{LogChange, NewLog};
use merchantd::domain::now_millis;
use merchantd::domain::oauth::token::{NewFamily, NewPair, TokenSteps};
use merchantd::domain::sales::basket::BasketRecord;
use merchantd::domain::stock::levels::StockMove;
use merchantd::metrics::Metrics;
use merchantd::tenants::AppliedTenant;

use crate::helpers::{tenants_dir, Backend, TestDb};

/// A migrated database with the fixture merchants, on `backend`.
async fn storage(backend: Backend) -> Option<(TestDb, Db, Vec<AppliedTenant>)> {
    let test_db = TestDb::new(backend).await?;
    let db = Db::connect(&test_db.url, Metrics::new())
        .await
        .expect("connect");
    db.migrate().await.expect("migrate");
    let dir = tenants_dir(test_db.dir());
    let files = merchantd::tenants::manifests_in(&dir).expect("manifests");
    let tenants = merchantd::tenants::apply_files(&db, &files, 1_000)
        .await
        .expect("apply");
    Some((test_db, db, tenants))
}

/// Runs a story on SQLite and on PostgreSQL (when configured).
macro_rules! storage_tests {
    ($(async fn $name:ident($db:ident, $tenants:ident) $body:block)*) => {
        $(
            mod $name {
                #[allow(unused_imports)]
                use super::*;
                async fn story($db: Db, $tenants: Vec<AppliedTenant>) $body
                #[actix_rt::test]
                async fn sqlite() {
                    let (_keep, db, tenants) = storage(Backend::Sqlite).await.expect("sqlite");
                    story(db, tenants).await;
                }
                #[actix_rt::test]
                async fn postgres() {
                    let Some((_keep, db, tenants)) = storage(Backend::Postgres).await else {
                        return;
                    };
                    story(db, tenants).await;
                }
            }
        )*
    };
}

fn category(id: i64, title: &str) -> CategoryRecord {
    let mut c = CategoryRecord::new(id, now_millis());
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

storage_tests! {
    async fn a_committed_transaction_is_there_and_a_dropped_one_is_not(db, tenants) {
        let merchant = tenants[0].id;
        let ids = db.allocate_ids(3).await.unwrap();
        let mut tx = db.begin().await.unwrap();
        category(ids[0], "Kept").persist(&mut tx, merchant, true).await.unwrap();
        tx.commit().await.unwrap();

        let mut tx = db.begin().await.unwrap();
        category(ids[1], "Rolled back").persist(&mut tx, merchant, true).await.unwrap();
        tx.rollback().await.unwrap();

        let mut tx = db.begin().await.unwrap();
        category(ids[2], "Dropped").persist(&mut tx, merchant, true).await.unwrap();
        drop(tx);

        let found = CategoryRecord::find(&db, merchant, &ids).await.unwrap();
        let titles: Vec<&str> = found.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(titles, ["Kept"]);
        // An update rewrites the row; another merchant never sees it.
        let mut tx = db.begin().await.unwrap();
        category(ids[0], "Renamed").persist(&mut tx, merchant, false).await.unwrap();
        tx.commit().await.unwrap();
        assert_eq!(CategoryRecord::find(&db, merchant, &ids[..1]).await.unwrap()[0].title, "Renamed");
        assert!(CategoryRecord::find(&db, tenants[1].id, &ids[..1]).await.unwrap().is_empty());
    }

    async fn concurrent_transactions_all_commit_and_a_failing_one_fails_alone(db, tenants) {
        let merchant = tenants[0].id;
        let ids = db.allocate_ids(40).await.unwrap();
        let writes = ids.iter().enumerate().map(|(i, id)| {
            let db = db.clone();
            async move {
                let mut tx = db.begin().await?;
                category(*id, &format!("Parallel {i}")).persist(&mut tx, merchant, true).await?;
                tx.commit().await
            }
        });
        // Inserting an id twice breaks the primary key: that transaction alone fails.
        let duplicate = async {
            let mut tx = db.begin().await?;
            category(ids[0], "Twice").persist(&mut tx, merchant, true).await?;
            tx.commit().await
        };
        let (results, dup) = tokio::join!(join_all(writes), duplicate);
        let committed = results.iter().filter(|r| r.is_ok()).count();
        // Exactly one of the two writers of ids[0] won; every other write committed.
        assert_eq!(committed + usize::from(dup.is_ok()), 40, "{results:?} {dup:?}");
        let found = CategoryRecord::find(&db, merchant, &ids).await.unwrap();
        assert_eq!(found.len(), 40);
    }

    async fn identifiers_are_unique_across_concurrent_calls_and_blocks(db, tenants) {
        let _ = tenants;
        // Eight callers at once, then more than a block: never the same id twice.
        let batches = join_all((0..8).map(|_| db.allocate_ids(100))).await;
        let mut seen = BTreeSet::new();
        for id in batches.into_iter().flat_map(|b| b.unwrap()).chain(db.allocate_ids(600).await.unwrap()) {
            assert!(seen.insert(id), "id {id} handed out twice");
        }
        assert_eq!(seen.len(), 1_400);
    }

    async fn sales_are_loaded_open_found_by_id_and_queried_by_filter(db, tenants) {
        let merchant = tenants[0].id;
        let store = tenants[0].stores["high-street"];
        let ids = db.allocate_ids(1_200).await.unwrap();
        let mut tx = db.begin().await.unwrap();
        for (i, id) in ids.iter().enumerate() {
            // Every third basket is still open; completion times are one second apart.
            let record = basket(*id, store, i % 3 != 0, 1_000_000 + i as i64 * 1_000);
            record.persist(&mut tx, merchant, true).await.unwrap();
        }
        tx.commit().await.unwrap();

        let open = BasketRecord::load(&db, merchant).await.unwrap();
        assert_eq!(open.len(), 400);
        assert!(open.iter().all(|b| !b.completed));

        // By id, beyond one statement's bind limit, in id order.
        let found = BasketRecord::find(&db, merchant, &ids).await.unwrap();
        assert_eq!(found.iter().map(|b| b.id).collect::<Vec<_>>(), ids);

        let completed = BasketRecord::query(&db, merchant, &SalesFilter {
            completed: Some(true),
            ..SalesFilter::default()
        }.with("storeIds", vec![store])).await.unwrap();
        assert_eq!(completed.len(), 800);
        let window = BasketRecord::query(&db, merchant, &SalesFilter {
            completed: Some(true),
            completed_between: Some((1_000_000, 1_000_000 + 30_000)),
            ..SalesFilter::default()
        }).await.unwrap();
        // Of i in 0..30, those not divisible by 3.
        assert_eq!(window.len(), 20);
        let other = BasketRecord::query(&db, tenants[1].id, &SalesFilter::default()).await.unwrap();
        assert!(other.is_empty());

        // A soft-deleted basket is left out unless asked for.
        let mut gone = found[0].clone();
        gone.delete_date = Some(now_millis());
        let mut tx = db.begin().await.unwrap();
        gone.persist(&mut tx, merchant, false).await.unwrap();
        tx.commit().await.unwrap();
        let live = BasketRecord::query(&db, merchant, &SalesFilter { ids: Some(vec![gone.id]), ..SalesFilter::default() }).await.unwrap();
        assert!(live.is_empty());
        let all = BasketRecord::query(&db, merchant, &SalesFilter {
            ids: Some(vec![gone.id]),
            include_deleted: true,
            ..SalesFilter::default()
        }).await.unwrap();
        assert_eq!(all.len(), 1);
    }

    async fn stock_moves_add_up(db, tenants) {
        let merchant = tenants[0].id;
        let store = tenants[0].stores["high-street"];
        let product = db.allocate_ids(1).await.unwrap()[0];
        for (total, sold) in [(10, 0), (0, 3), (5, 1)] {
            let mut tx = db.begin().await.unwrap();
            let moved = StockMove { store_id: store, product_id: product, total, sold, at: 1, reason: Default::default(), source_id: 0 };
            tx.apply_stock_moves(merchant, &[moved], 2).await.unwrap();
            tx.commit().await.unwrap();
        }
        let levels = db.load_stock(merchant, store).await.unwrap();
        assert_eq!((levels[&product].total, levels[&product].sold), (15, 4));
    }

    async fn a_code_is_taken_once_and_its_family_can_be_revoked(db, tenants) {
        let t = &tenants[0];
        let family = NewFamily {
            id: "family-conformance".into(),
            merchant_id: t.id,
            employee_id: *t.users.values().next().unwrap(),
            application_id: *t.applications.values().next().unwrap(),
            scope: "read".into(),
        };
        let now = now_millis();
        let mut tx = db.begin().await.unwrap();
        tx.create_code(&family, "code-hash", &merchantd::domain::oauth::token::CodeFacts {
            redirect_uri: "http://127.0.0.1/cb".into(),
            code_challenge: None,
        }, now + 60_000).await.unwrap();
        tx.commit().await.unwrap();

        let mut tx = db.begin().await.unwrap();
        let taken = tx.take_code("code-hash", now).await.unwrap().expect("first take wins");
        assert_eq!(taken.family_id, family.id);
        assert!(tx.take_code("code-hash", now).await.unwrap().is_none(), "second take loses");
        let spent = tx.spent_code("code-hash").await.unwrap().unwrap();
        assert!(spent.used_at.is_some());
        let stored = tx.family(&family.id).await.unwrap().unwrap();
        let pair = NewPair {
            access_hash: "access-hash".into(),
            access_expires_at: now + 60_000,
            access_scope: "read".into(),
            refresh_hash: "refresh-hash".into(),
            refresh_expires_at: now + 120_000,
        };
        tx.insert_pair(&stored, &pair, now).await.unwrap();
        tx.commit().await.unwrap();
        assert!(db.find_access_token("access-hash").await.unwrap().is_some());

        let mut tx = db.begin().await.unwrap();
        assert_eq!(tx.take_refresh("refresh-hash", now).await.unwrap().as_deref(), Some(family.id.as_str()));
        assert!(!tx.refresh_unused("refresh-hash").await.unwrap());
        let revoked = tx.revoke_family(&family.id, now).await.unwrap();
        assert_eq!(revoked, ["access-hash"]);
        tx.commit().await.unwrap();
        assert!(db.find_access_token("access-hash").await.unwrap().is_none());
    }

    async fn logs_are_numbered_per_merchant_changed_and_deleted(db, tenants) {
        let merchant = tenants[0].id;
        let new = NewLog { object: "STORE", identifier: "9", tags: "sync", data: "{}", completed: false };
        let mut tx = db.begin().await.unwrap();
        let first = tx.insert_log(merchant, &new, 1).await.unwrap();
        let second = tx.insert_log(merchant, &new, 2).await.unwrap();
        tx.commit().await.unwrap();
        assert_eq!((first.log_id.as_str(), second.log_id.as_str()), ("STORE-9:1", "STORE-9:2"));

        let mut tx = db.begin().await.unwrap();
        let change = LogChange { tags: Some("done"), data: None, completed: Some(true) };
        let changed = tx.update_log(merchant, &first.log_id, &change, 3).await.unwrap().unwrap();
        assert_eq!((changed.tags.as_str(), changed.complete_date), ("done", Some(3)));
        assert!(tx.delete_log(merchant, &second.log_id).await.unwrap());
        assert!(!tx.delete_log(tenants[1].id, &first.log_id).await.unwrap(), "not another merchant's");
        tx.commit().await.unwrap();
        let left = db.logs_of(merchant, "STORE", "9").await.unwrap();
        assert_eq!(left.len(), 1);
    }
}
