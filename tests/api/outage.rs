//! A PostgreSQL outage during load: every connection of the server's database is terminated,
//! again and again, while clients write. No request hangs, failures are 503 with the envelope,
//! writes succeed again once the database answers, and nothing answered 201 is lost. And while
//! a replica cannot reach the database (refused, or cut off alone by a partition), its reads
//! answer 503 like its writes: it never serves a cached state another replica wrote past.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::helpers::{spawn_app, spawn_app_on, Backend, TestApp, TestDb};

/// Terminates every other connection to the app's database.
async fn terminate_all(app: &TestApp) -> i64 {
    let admin = raw_admin(app).await;
    let (n,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()) t",
    )
    .fetch_one(&admin)
    .await
    .unwrap();
    admin.close().await;
    n
}

async fn raw_admin(app: &TestApp) -> sqlx::AnyPool {
    crate::helpers::raw_pool(&app.database.url).await
}

#[actix_rt::test]
async fn a_postgres_outage_costs_503s_not_hangs_and_loses_nothing_answered() {
    let Some(app) = spawn_app(Backend::Postgres).await else {
        return;
    };
    let token = app.owner_token().await;
    let stop = Arc::new(AtomicBool::new(false));
    let app = Arc::new(app);

    // Eight clients writing categories for six seconds; every answer is kept.
    let clients = (0..8).map(|c| {
        let (app, token, stop) = (app.clone(), token.clone(), stop.clone());
        async move {
            let mut answers: Vec<(String, StatusCode, Value, Duration)> = Vec::new();
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                let title = format!("outage-{c}-{i}");
                let started = Instant::now();
                let res = app
                    .api(Method::POST, "/category", &token)
                    .json(&json!({"categories": {"c": {"title": title}}}))
                    .checked()
                    .await
                    .expect("an answer, not a dropped connection");
                let status = res.status();
                let body: Value = res.json().await.expect("a JSON body");
                answers.push((title, status, body, started.elapsed()));
                i += 1;
            }
            answers
        }
    });
    let load = tokio::spawn(join_all(clients));

    // The outage: everything connected to the database is killed, five times over a second.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let mut killed = 0;
    for _ in 0..5 {
        killed += terminate_all(&app).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let outage_over = Instant::now();
    tokio::time::sleep(Duration::from_millis(3_500)).await;
    stop.store(true, Ordering::SeqCst);
    let answers: Vec<_> = load.await.unwrap().into_iter().flatten().collect();

    let mut created = Vec::new();
    let mut unavailable = 0;
    for (title, status, body, took) in &answers {
        assert!(*took < Duration::from_secs(15), "{title} took {took:?}");
        assert!(body["api"].is_object(), "{body}");
        match *status {
            StatusCode::CREATED => created.push(title.clone()),
            StatusCode::SERVICE_UNAVAILABLE => {
                unavailable += 1;
                assert_eq!(body["error"]["code"], 503, "{body}");
            }
            other => panic!("{title}: {other} {body}"),
        }
    }
    println!(
        "{} writes: {} created, {unavailable} answered 503; {killed} connections terminated",
        answers.len(),
        created.len()
    );
    assert!(killed >= 5, "the outage reached the server's connections");

    // Writes work again within seconds, and every 201 is stored.
    let recovered = Instant::now();
    loop {
        let res = app
            .api(Method::POST, "/category", &token)
            .json(&json!({"categories": {"c": {"title": "after the outage"}}}))
            .checked()
            .await
            .unwrap();
        if res.status() == StatusCode::CREATED {
            break;
        }
        assert!(
            recovered.elapsed() < Duration::from_secs(10),
            "no write succeeds after the outage"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!(
        "a write succeeded {:?} after the last termination",
        outage_over.elapsed()
    );
    let stored: Vec<(String,)> = sqlx::query_as("SELECT title FROM categories")
        .fetch_all(&app.sql)
        .await
        .unwrap();
    let stored: std::collections::BTreeSet<String> = stored.into_iter().map(|(t,)| t).collect();
    for title in &created {
        assert!(
            stored.contains(title),
            "{title} was answered 201 and is gone"
        );
    }
}

/// The app's database refuses new connections (`ALLOW_CONNECTIONS false`, SQLSTATE 55000 at
/// connect) and its connections are terminated: once the replica has lost its listening
/// connection, writes and reads alike answer 503 (message 121, `Retry-After`), since a replica
/// that hears no one cannot know its cache is current (docs/security.md). Connections are
/// allowed again before anything is asserted, so a failure leaves the database usable; then a
/// read answers 200 again within seconds.
#[actix_rt::test]
async fn a_database_refusing_connections_answers_reads_and_writes_503() {
    let Some(app) = spawn_app(Backend::Postgres).await else {
        return;
    };
    let admin_url = crate::helpers::postgres_admin_url().expect("a PostgreSQL URL");
    let name = app
        .database
        .url
        .rsplit('/')
        .next()
        .expect("a database name")
        .to_owned();
    let token = app.owner_token().await;
    let created = app
        .api(Method::POST, "/category", &token)
        .json(&json!({"categories": {"c": {"title": "cached"}}}))
        .checked()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    assert_eq!(
        read_titles(&app, &token).await,
        Ok(vec!["cached".to_owned()])
    );

    let admin = crate::helpers::raw_pool(&admin_url).await;
    sqlx::query(&format!(
        "ALTER DATABASE \"{name}\" ALLOW_CONNECTIONS false"
    ))
    .execute(&admin)
    .await
    .unwrap();
    terminate_all_from(&admin, &name).await;
    let deaf = no_longer_listening(&app).await;
    let mut answers = Vec::new();
    for i in 0..5 {
        let write = app
            .api(Method::POST, "/category", &token)
            .json(&json!({"categories": {"c": {"title": format!("refused {i}")}}}))
            .checked()
            .await
            .unwrap();
        answers.push(unavailable_or_not(write).await);
        let read = app
            .api(Method::GET, "/category", &token)
            .checked()
            .await
            .unwrap();
        answers.push(unavailable_or_not(read).await);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    sqlx::query(&format!("ALTER DATABASE \"{name}\" ALLOW_CONNECTIONS true"))
        .execute(&admin)
        .await
        .unwrap();
    admin.close().await;

    assert!(
        deaf,
        "the replica lost its listening connection within 10 s"
    );
    for answer in &answers {
        assert_eq!(answer, &Ok(()), "every write and read answers 503 (121)");
    }
    let back = Instant::now();
    while read_titles(&app, &token).await != Ok(vec!["cached".to_owned()]) {
        assert!(
            back.elapsed() < Duration::from_secs(10),
            "no read answers 200 within 10 s of the database coming back"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits (at most 10 s) until the app no longer hears the other replicas; whether it did.
async fn no_longer_listening(app: &TestApp) -> bool {
    let since = Instant::now();
    while since.elapsed() < Duration::from_secs(10) {
        let text = app.metrics_text().await;
        if crate::helpers::metric_value(&text, "replica_listening", "") == 0.0 {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// `Ok` for a 503 with message 121 and `Retry-After`, else what was answered.
async fn unavailable_or_not(res: reqwest::Response) -> Result<(), String> {
    let status = res.status();
    let retry_after = res.headers().get("retry-after").cloned();
    let body: Value = res.json().await.unwrap_or_default();
    let code = &body["api"]["message"]["error"]["121"]["code"];
    match (status, code.as_str(), retry_after) {
        (StatusCode::SERVICE_UNAVAILABLE, Some("serviceUnavailable"), Some(_)) => Ok(()),
        (status, _, retry_after) => Err(format!("{status}, Retry-After {retry_after:?}: {body}")),
    }
}

/// The titles of the merchant's categories, or what was answered instead of 200.
async fn read_titles(app: &TestApp, token: &str) -> Result<Vec<String>, String> {
    let res = app
        .api(Method::GET, "/category", token)
        .checked()
        .await
        .unwrap();
    let status = res.status();
    let body: Value = res.json().await.unwrap_or_default();
    if status != StatusCode::OK {
        return Err(format!("{status}: {body}"));
    }
    let mut titles: Vec<String> = body["categories"]
        .as_object()
        .map(|c| {
            c.values()
                .filter_map(|c| c["title"].as_str())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    titles.sort();
    Ok(titles)
}

/// Terminates every connection to database `name`, from a connection to another one.
async fn terminate_all_from(admin: &sqlx::AnyPool, name: &str) {
    sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1")
        .bind(name)
        .execute(admin)
        .await
        .unwrap();
}

/// A TCP proxy in front of PostgreSQL that can cut a replica off, as a network partition does
/// while the database and the other replicas go on: cut, it closes every connection it
/// carries and each new one as soon as it comes (fast I/O errors, not a black hole's wait).
struct Partition {
    url: String,
    cut: tokio::sync::watch::Sender<bool>,
}

impl Partition {
    /// A proxy to the database `url` names; its `url` reaches the same database through it.
    async fn start(url: &str) -> Self {
        let mut through = url::Url::parse(url).expect("a PostgreSQL URL");
        let upstream = (
            through.host_str().expect("a host").to_owned(),
            through.port().unwrap_or(5432),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        through.set_host(Some("127.0.0.1")).unwrap();
        through
            .set_port(Some(listener.local_addr().unwrap().port()))
            .unwrap();
        let (cut, watch) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let (mut watch, upstream) = (watch.clone(), upstream.clone());
                tokio::spawn(async move {
                    if *watch.borrow() {
                        return; // closed at once
                    }
                    let Ok(mut outbound) = tokio::net::TcpStream::connect(upstream).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = watch.wait_for(|cut| *cut) => {}
                    }
                });
            }
        });
        Self {
            url: through.to_string(),
            cut,
        }
    }

    fn cut(&self, on: bool) {
        self.cut.send_replace(on);
    }
}

/// Replica A reaches PostgreSQL through a proxy, replica B directly. A is cut off alone and B
/// writes: every read on A answers 503 (121), never a 200 without B's write; once A reaches
/// the database again it reads B's write.
#[actix_rt::test]
async fn a_replica_cut_off_from_postgres_never_serves_a_read_another_replica_has_written_past() {
    let Some(db) = TestDb::new(Backend::Postgres).await else {
        return;
    };
    let partition = Partition::start(&db.url).await;
    let b = spawn_app_on(db, |_| {}).await;
    let a = spawn_app_on(TestDb::external(&partition.url), |_| {}).await;
    let token = b.owner_token().await;
    let write = |title: &'static str| {
        b.api(Method::POST, "/category", &token)
            .json(&json!({"categories": {"c": {"title": title}}}))
            .checked()
    };
    assert_eq!(write("before").await.unwrap().status(), StatusCode::CREATED);
    assert_eq!(read_titles(&a, &token).await, Ok(vec!["before".to_owned()]));

    partition.cut(true);
    let deaf = no_longer_listening(&a).await;
    let written = write("after").await.unwrap().status();
    let mut answers = Vec::new();
    for _ in 0..10 {
        let read = a.api(Method::GET, "/category", &token).checked().await;
        answers.push(unavailable_or_not(read.unwrap()).await);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    partition.cut(false);

    assert!(deaf, "A lost its listening connection within 10 s");
    assert_eq!(written, StatusCode::CREATED, "B writes while A is cut off");
    for answer in &answers {
        assert_eq!(answer, &Ok(()), "A answers 503 (121) while cut off");
    }
    let healed = Instant::now();
    let both = Ok(vec!["after".to_owned(), "before".to_owned()]);
    while read_titles(&a, &token).await != both {
        assert!(
            healed.elapsed() < Duration::from_secs(10),
            "A does not read B's write within 10 s of reaching the database again"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
