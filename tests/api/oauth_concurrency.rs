//! Single use under contention (DESIGN §1 TokenActors, §4): one code or one refresh token raced
//! by many requests at once buys exactly one pair, in one process and across processes sharing
//! one PostgreSQL.

use std::collections::BTreeSet;
use std::panic::AssertUnwindSafe;
use std::time::Instant;

use futures_util::future::join_all;
use futures_util::FutureExt;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::helpers::{Backend, TestApp, TestDb};
use crate::oauth_support::{
    approved_code, login, pkce_pair, user_status, Authorize, Browser, DEMO_CLIENT, DEMO_REDIRECT,
    DEMO_SECRET,
};
use crate::process::{serve, Served};
use crate::{backend_tests, backend_tests_with};

const RACERS: usize = 50;

/// Posts the same token request to every URL in `urls` at once and returns each answer. All the
/// futures are polled together, so every request is in flight before any is answered.
async fn burst(
    client: &reqwest::Client,
    urls: &[String],
    body: &Value,
) -> Vec<(StatusCode, Value)> {
    let started = Instant::now();
    let answers = join_all(urls.iter().map(|url| async move {
        let res = client
            .post(url)
            .json(body)
            .checked()
            .await
            .expect("token request");
        let status = res.status();
        (
            status,
            res.json::<Value>().await.expect("a JSON token answer"),
        )
    }))
    .await;
    eprintln!(
        "{} concurrent token requests answered in {:?}",
        urls.len(),
        started.elapsed()
    );
    answers
}

/// Splits a burst into its 200 bodies, asserting that every other answer is `invalid_grant`
/// (never a 500, a 429 or another error: losing a race is not a server failure).
fn winners(answers: &[(StatusCode, Value)]) -> Vec<&Value> {
    let refused: Vec<_> = answers
        .iter()
        .filter(|(status, body)| {
            *status != StatusCode::OK
                && !(*status == StatusCode::BAD_REQUEST && body["error"] == "invalid_grant")
        })
        .collect();
    assert!(
        refused.is_empty(),
        "answers other than 200 or invalid_grant: {refused:?}"
    );
    answers
        .iter()
        .filter(|(status, _)| *status == StatusCode::OK)
        .map(|(_, body)| body)
        .collect()
}

fn pair(body: &Value) -> (String, String) {
    let text = |k: &str| {
        body[k]
            .as_str()
            .unwrap_or_else(|| panic!("no {k}: {body}"))
            .to_owned()
    };
    (text("access_token"), text("refresh_token"))
}

fn code_exchange(code: &str, verifier: &str) -> Value {
    json!({
        "grant_type": "authorization_code", "code": code, "redirect_uri": DEMO_REDIRECT,
        "client_id": DEMO_CLIENT, "client_secret": DEMO_SECRET, "code_verifier": verifier,
    })
}

fn refresh_request(refresh_token: &str) -> Value {
    json!({"grant_type": "refresh_token", "refresh_token": refresh_token,
           "client_id": DEMO_CLIENT, "client_secret": DEMO_SECRET})
}

/// Refreshes one token `RACERS` times at once; the original pair and the answers.
async fn refresh_burst(app: &TestApp) -> ((String, String), Vec<(StatusCode, Value)>) {
    let original = login(app).await;
    let urls = vec![app.url("/oauth/token"); RACERS];
    let answers = burst(&app.client, &urls, &refresh_request(&original.1)).await;
    (original, answers)
}

backend_tests! {
    async fn fifty_simultaneous_exchanges_of_one_code_have_exactly_one_winner(app) {
        let (verifier, challenge) = pkce_pair();
        let code = approved_code(&app, &Authorize::demo(Some(challenge))).await;
        let urls = vec![app.url("/oauth/token"); RACERS];
        let answers = burst(&app.client, &urls, &code_exchange(&code, &verifier)).await;
        // The 49 losers are reuses, which also revoke the winner's tokens (RFC 6749 §4.1.2), so
        // whether the winner's token still works is deliberately not asserted.
        let won = winners(&answers);
        assert_eq!(won.len(), 1, "{answers:?}");
        assert!(pair(won[0]).0.starts_with("mcd_at_"), "{}", won[0]);
    }

    async fn fifty_simultaneous_refreshes_within_the_grace_all_get_the_same_pair(app) {
        let (original, answers) = refresh_burst(&app).await;
        let won = winners(&answers);
        let pairs: BTreeSet<_> = won.iter().map(|body| pair(body)).collect();
        // Never two live branches: every success is the first rotation or an idempotent retry
        // of it inside the default 5 s grace, so all 50 carry one pair.
        assert_eq!(pairs.len(), 1, "distinct pairs: {pairs:?}");
        assert_eq!(won.len(), RACERS, "{answers:?}");
        let (access, refresh) = pairs.first().unwrap();
        assert_ne!(access, &original.0);
        assert_ne!(refresh, &original.1);
        assert_eq!(user_status(&app, access).await, StatusCode::OK);
    }
}

/// Refreshes every token of `refresh_tokens` at once, each by one request.
async fn refresh_each(app: &TestApp, refresh_tokens: &[String]) -> Vec<(StatusCode, Value)> {
    join_all(refresh_tokens.iter().map(|token| async move {
        let res = app
            .client
            .post(app.url("/oauth/token"))
            .json(&refresh_request(token))
            .checked()
            .await
            .expect("token request");
        let status = res.status();
        (status, res.json::<Value>().await.expect("a JSON answer"))
    }))
    .await
}

backend_tests! {
    async fn simultaneous_refreshes_of_many_tokens_each_rotate_once(app) {
        // Concurrent grants of different tokens run as one batch of multi-row statements; each
        // still gets its own pair, a revoked family among them is refused alone, and a token
        // presented twice in the burst gets the same pair twice.
        let mut pairs = Vec::new();
        for _ in 0..12 {
            pairs.push(login(&app).await);
        }
        let revoked = pairs.pop().expect("a pair");
        let (status, _, _) = crate::oauth_endpoints::post_form(
            &app,
            "/oauth/revoke",
            (DEMO_CLIENT, DEMO_SECRET),
            &[("token", revoked.1.as_str())],
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        let mut presented: Vec<String> = pairs.iter().map(|(_, r)| r.clone()).collect();
        presented.push(revoked.1.clone());
        presented.push(pairs[0].1.clone());
        let answers = refresh_each(&app, &presented).await;
        let fresh: Vec<(String, String)> = answers[..pairs.len()]
            .iter()
            .map(|(status, body)| {
                assert_eq!(*status, StatusCode::OK, "{body}");
                pair(body)
            })
            .collect();
        let (status, body) = &answers[pairs.len()];
        assert_eq!(*status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["error"], "invalid_grant", "{body}");
        let (status, body) = &answers[pairs.len() + 1];
        assert_eq!(*status, StatusCode::OK, "{body}");
        assert_eq!(pair(body), fresh[0], "the retry inside the grace gets the same pair");
        let distinct: BTreeSet<_> = fresh.iter().collect();
        assert_eq!(distinct.len(), fresh.len(), "every token bought its own pair");
        for ((old_access, _), (access, refresh)) in pairs.iter().zip(&fresh) {
            assert_ne!(access, old_access);
            assert_eq!(user_status(&app, access).await, StatusCode::OK);
            // The successor is live: it rotates in turn.
            let again = refresh_each(&app, std::slice::from_ref(refresh)).await;
            assert_eq!(again[0].0, StatusCode::OK, "{}", again[0].1);
        }
    }
}

backend_tests_with! {
    |s| s.refresh_retry_grace_secs = 0;
    async fn fifty_simultaneous_refreshes_without_grace_have_exactly_one_winner(app) {
        let (_, answers) = refresh_burst(&app).await;
        let won = winners(&answers);
        assert_eq!(won.len(), 1, "{answers:?}");
        // Every loser presented a used token after the (zero) grace: a reuse that revokes the
        // family (RFC 9700 §4.14.2), the winner's fresh pair included.
        let (access, _) = pair(won[0]);
        assert_eq!(user_status(&app, &access).await, StatusCode::UNAUTHORIZED);
    }
}

/// SIGTERM, then the exit status and the log lines (off the runtime: `wait` blocks).
async fn stop(served: Served) -> (std::process::ExitStatus, Vec<String>) {
    served.signal("-TERM");
    tokio::task::spawn_blocking(move || served.wait())
        .await
        .expect("wait for merchantd")
}

/// A code obtained through `a`, raced by half the requests against `a` and half against `b`.
async fn race_across(a: &Served, b: &Served) -> Vec<(StatusCode, Value)> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let (verifier, challenge) = pkce_pair();
    let request = Authorize::demo(Some(challenge));
    let answer = Browser::at(client.clone(), &a.url(""))
        .authorize(&request, "approve")
        .await;
    assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.body);
    let code = answer.redirect_params()["code"].clone();
    let urls: Vec<String> = (0..RACERS)
        .map(|i| {
            if i % 2 == 0 {
                a.url("/oauth/token")
            } else {
                b.url("/oauth/token")
            }
        })
        .collect();
    burst(&client, &urls, &code_exchange(&code, &verifier)).await
}

/// Only the database's conditional UPDATE stands between two processes: each has its own
/// TokenActors, so this proves the cross-process half of the guarantee. PostgreSQL only, since
/// replicas share PostgreSQL (DESIGN §1 Scale-out).
#[actix_rt::test]
async fn two_processes_on_one_postgres_let_one_code_win_once() {
    let Some(db) = TestDb::new(Backend::Postgres).await else {
        return;
    };
    // One after the other: both migrate and apply the manifests at start-up.
    let a = serve(&db, "info");
    let b = serve(&db, "info");
    // Stop both processes whatever happens, then report.
    let outcome = AssertUnwindSafe(race_across(&a, &b)).catch_unwind().await;
    let (status_a, logs_a) = stop(a).await;
    let (status_b, logs_b) = stop(b).await;
    // Captured, so shown only when the test fails.
    eprintln!(
        "process A:\n{}\nprocess B:\n{}",
        logs_a.join("\n"),
        logs_b.join("\n")
    );
    let answers = match outcome {
        Ok(answers) => answers,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    // Every request was answered by the process it was sent to (`burst` insists), so both
    // processes took part; between them, one winner.
    let won = winners(&answers);
    assert_eq!(won.len(), 1, "{answers:?}");
    assert_eq!(status_a.code(), Some(0), "process A exit status");
    assert_eq!(status_b.code(), Some(0), "process B exit status");
}
