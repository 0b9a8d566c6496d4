//! The storage conformance suite (`merchantd-ports`) on SQLite and on
//! PostgreSQL: the same stories storage in memory passes. PostgreSQL runs when
//! `MERCHANTD_TEST_POSTGRES_URL` names a server (a fresh database each time, dropped after);
//! with `MERCHANTD_REQUIRE_POSTGRES=1` (CI) a missing server fails instead of skipping.

use std::sync::Arc;

use domain::fleet::manifest::ManifestError;
use domain::fleet::tenant::Manifest;
use merchantd_storage::Db;
use ports::conformance::{run, Fixture};
use sqlx::Connection;

const SHOPS: [&str; 2] = [
    "[merchant]\nkey = \"one\"\nname = \"One\"\n[[stores]]\nkey = \"main\"\nname = \"Main\"\n",
    "[merchant]\nkey = \"two\"\nname = \"Two\"\n[[stores]]\nkey = \"main\"\nname = \"Main\"\n",
];

/// A migrated database at `url` with the two merchants of [`SHOPS`].
async fn fixture(url: &str) -> Fixture {
    let db = Db::connect(url, metrics::Metrics::new())
        .await
        .expect("connect");
    db.migrate().await.expect("migrate");
    let manifests: Vec<Manifest> = SHOPS
        .iter()
        .enumerate()
        .map(|(i, text)| Manifest::parse(&format!("shop{i}.toml"), text))
        .collect::<Result<_, ManifestError>>()
        .expect("manifests");
    let applied = db.apply_manifests(&manifests, 1_000).await.expect("apply");
    let merchants = [0, 1].map(|i| (applied[i].id, applied[i].stores["main"]));
    Fixture {
        storage: Arc::new(db),
        merchants,
    }
}

#[tokio::test]
async fn sqlite_conforms() {
    let dirs: std::sync::Mutex<Vec<tempfile::TempDir>> = Default::default();
    run(|| async {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("conformance.db").display());
        dirs.lock().unwrap().push(dir);
        fixture(&url).await
    })
    .await;
}

#[tokio::test]
async fn postgres_conforms() {
    let Ok(admin) = std::env::var("MERCHANTD_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var("MERCHANTD_REQUIRE_POSTGRES").is_err(),
            "MERCHANTD_REQUIRE_POSTGRES is set but MERCHANTD_TEST_POSTGRES_URL is not"
        );
        return;
    };
    let made: std::sync::Mutex<Vec<String>> = Default::default();
    run(|| async {
        let name = format!(
            "mcd_conformance_{}_{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        );
        let mut conn = sqlx::PgConnection::connect(&admin)
            .await
            .expect("PostgreSQL is unreachable");
        sqlx::query(&format!("CREATE DATABASE \"{name}\""))
            .execute(&mut conn)
            .await
            .expect("create database");
        let _ = conn.close().await;
        let mut url = url::Url::parse(&admin).expect("url");
        url.set_path(&name);
        made.lock().unwrap().push(name);
        fixture(url.as_str()).await
    })
    .await;
    let mut conn = sqlx::PgConnection::connect(&admin).await.expect("connect");
    for name in made.into_inner().unwrap() {
        let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
            .execute(&mut conn)
            .await;
    }
}
