//! The fault matrix (issue 21; docs/operations.md, "When the database is away"): each way a
//! database can be away, under load. Clients write and read the whole time; for each fault no
//! request outlives its deadline, every failure is a 503 with the envelope and message 121
//! (on SQLite, whose cache is the truth, reads never fail), readiness turns false during the
//! fault and true after it, every write answered 201 is stored, and a SQLite file passes
//! `PRAGMA integrity_check`.
//!
//! PostgreSQL runs as a private cluster the test makes with `initdb` and `pg_ctl` in a
//! temporary folder, so stopping it disturbs no other test. SQLite lives on a small tmpfs the
//! test mounts, so its disk can really fill.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::helpers::{spawn_app_on, Backend, TestApp, TestDb};

/// Longer than any timeout of the server (a pool waits 10 s for a connection), so a request
/// that reaches it hangs.
const DEADLINE: Duration = Duration::from_secs(20);

struct Answer {
    title: Option<String>,
    status: StatusCode,
    body: Value,
    took: Duration,
}

/// Clients writing a category and reading the list in turn until stopped.
struct Load {
    stop: Arc<AtomicBool>,
    /// 503s answered so far.
    unavailable: Arc<std::sync::atomic::AtomicUsize>,
    /// Whether reads must answer 200 whatever the fault: on SQLite (one process) the cache is
    /// the truth; on PostgreSQL a replica that cannot reach the database answers reads 503.
    reads_stay_up: bool,
    clients: tokio::task::JoinHandle<Vec<Vec<Answer>>>,
}

impl Load {
    fn start(app: &Arc<TestApp>, token: &str, clients: usize) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let unavailable = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let work: Vec<_> = (0..clients)
            .map(|c| {
                let (app, token, stop) = (app.clone(), token.to_owned(), stop.clone());
                let unavailable = unavailable.clone();
                async move {
                    let mut answers = Vec::new();
                    let mut i = 0;
                    while !stop.load(Ordering::SeqCst) {
                        let write = i % 2 == 0;
                        let title = write.then(|| format!("fault-{c}-{i}"));
                        let request = match &title {
                            Some(title) => app
                                .api(Method::POST, "/category", &token)
                                .json(&json!({"categories": {"c": {"title": title}}})),
                            None => app.api(Method::GET, "/category", &token),
                        };
                        let started = Instant::now();
                        let res = request
                            .timeout(DEADLINE)
                            .checked()
                            .await
                            .unwrap_or_else(|e| panic!("an answer within {DEADLINE:?}: {e:?}"));
                        let status = res.status();
                        let body: Value = res.json().await.expect("a JSON body");
                        answers.push(Answer {
                            title,
                            status,
                            body,
                            took: started.elapsed(),
                        });
                        i += 1;
                        if status == StatusCode::SERVICE_UNAVAILABLE {
                            unavailable.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                    }
                    answers
                }
            })
            .collect();
        Self {
            stop,
            unavailable,
            reads_stay_up: app.backend == Backend::Sqlite,
            clients: tokio::spawn(join_all(work)),
        }
    }

    /// Waits for the fault to fail a request; false when none failed within `limit`.
    async fn until_unavailable(&self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        while self.unavailable.load(Ordering::SeqCst) == 0 {
            if Instant::now() > until {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        true
    }

    /// Stops the clients and checks every answer; the titles answered 201.
    async fn finish(self, fault: &str) -> Vec<String> {
        self.stop.store(true, Ordering::SeqCst);
        let answers: Vec<Answer> = self.clients.await.unwrap().into_iter().flatten().collect();
        let mut created = Vec::new();
        let mut unavailable = 0;
        for answer in &answers {
            let Answer {
                status, body, took, ..
            } = answer;
            assert!(*took < DEADLINE, "{fault}: a request took {took:?}");
            assert!(body["api"].is_object(), "{fault}: {body}");
            match (*status, &answer.title) {
                (StatusCode::CREATED, Some(title)) => created.push(title.clone()),
                (StatusCode::OK, None) => {}
                (StatusCode::SERVICE_UNAVAILABLE, None) if self.reads_stay_up => {
                    panic!("{fault}: a read answered 503, but the cache is the truth: {body}")
                }
                (StatusCode::SERVICE_UNAVAILABLE, _) => {
                    unavailable += 1;
                    assert_eq!(
                        body["api"]["message"]["error"]["121"]["code"], "serviceUnavailable",
                        "{fault}: {body}"
                    );
                }
                (other, _) => panic!("{fault}: {other} {body}"),
            }
        }
        println!(
            "{fault}: {} requests, {} writes answered 201, {unavailable} answered 503",
            answers.len(),
            created.len()
        );
        created
    }
}

async fn ready(app: &TestApp) -> bool {
    let res = app
        .client
        .get(app.url("/health/ready"))
        .timeout(DEADLINE)
        .send()
        .await
        .expect("readiness answers");
    res.status() == StatusCode::OK
}

/// Polls readiness while `fault` lasts; whether it was ever false.
async fn readiness_during(app: &TestApp, fault: Duration) -> bool {
    let until = Instant::now() + fault;
    let mut seen_false = false;
    while Instant::now() < until {
        seen_false |= !ready(app).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    seen_false
}

/// Waits for readiness to come back; how long it took.
async fn ready_again(app: &TestApp, fault: &str) -> Duration {
    let started = Instant::now();
    while !ready(app).await {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{fault}: readiness did not come back"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    started.elapsed()
}

async fn assert_stored(sql: &sqlx::AnyPool, created: &[String], fault: &str) {
    let stored: Vec<(String,)> = sqlx::query_as("SELECT title FROM categories")
        .fetch_all(sql)
        .await
        .unwrap();
    let stored: std::collections::BTreeSet<String> = stored.into_iter().map(|(t,)| t).collect();
    for title in created {
        assert!(
            stored.contains(title),
            "{fault}: {title} was answered 201 and is gone"
        );
    }
}

async fn sql_at(url: &str) -> sqlx::AnyPool {
    crate::helpers::raw_pool(url).await
}

mod postgres;
mod sqlite;
