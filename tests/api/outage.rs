//! A PostgreSQL outage during load: every connection of the server's database is terminated,
//! again and again, while clients write. No request hangs, failures are 503 with the envelope,
//! writes succeed again once the database answers, and nothing answered 201 is lost.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::helpers::{spawn_app, Backend, TestApp};

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
/// connect) and its connections are terminated: writes answer 503 (message 121) and reads the
/// merchant's cached state answers keep being answered. Connections are allowed again before
/// anything is asserted, so a failure leaves the database usable.
#[actix_rt::test]
async fn a_database_refusing_connections_answers_writes_503_and_serves_cached_reads() {
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

    let admin = crate::helpers::raw_pool(&admin_url).await;
    sqlx::query(&format!(
        "ALTER DATABASE \"{name}\" ALLOW_CONNECTIONS false"
    ))
    .execute(&admin)
    .await
    .unwrap();
    terminate_all_from(&admin, &name).await;
    let mut answers = Vec::new();
    for i in 0..5 {
        let write = app
            .api(Method::POST, "/category", &token)
            .json(&json!({"categories": {"c": {"title": format!("refused {i}")}}}))
            .checked()
            .await
            .unwrap();
        let write = (write.status(), write.json::<Value>().await.unwrap());
        let read = app
            .api(Method::GET, "/category", &token)
            .checked()
            .await
            .unwrap();
        let read = (read.status(), read.json::<Value>().await.unwrap());
        answers.push((write, read));
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    sqlx::query(&format!("ALTER DATABASE \"{name}\" ALLOW_CONNECTIONS true"))
        .execute(&admin)
        .await
        .unwrap();
    admin.close().await;

    for ((status, body), (read_status, read)) in &answers {
        assert_eq!(*status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert_eq!(
            body["api"]["message"]["error"]["121"]["code"], "serviceUnavailable",
            "{body}"
        );
        assert_eq!(*read_status, StatusCode::OK, "{read}");
        let titles: Vec<&Value> = read["categories"]
            .as_object()
            .expect("categories")
            .values()
            .map(|c| &c["title"])
            .collect();
        assert_eq!(titles, [&json!("cached")], "{read}");
    }
}

/// Terminates every connection to database `name`, from a connection to another one.
async fn terminate_all_from(admin: &sqlx::AnyPool, name: &str) {
    sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1")
        .bind(name)
        .execute(admin)
        .await
        .unwrap();
}
