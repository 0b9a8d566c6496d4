//! Secrets stay secret (DESIGN §4, §7; spec: "Tokens must not appear in client-side code, URLs
//! or logs"; RFC 6749 §10.3–10.5).
//!
//! The real binary serves a full flow at log level `trace`: sign-in (one wrong password first),
//! consent, a denial, exchanges (one with a wrong client secret), a code reuse, refreshes (one a
//! retry inside the grace), introspection, revocation and a revoked token at the API. Then no
//! code, token, PKCE verifier, client secret, password or cookie value may appear in any log
//! line, any database row, any error the server answered, or any URL except the one redirect
//! that delivers its code.

use reqwest::header::HeaderMap;
use reqwest::{RequestBuilder, StatusCode};
use serde_json::{json, Value};

use merchantd::db::Db;
use merchantd::metrics::Metrics;

use crate::contract::Checked;
use crate::db_tests;
use crate::helpers::{dump_database, FIXTURE_SECRETS};
use crate::oauth_endpoints::{basic, TILL};
use crate::oauth_support::*;
use crate::process::serve;

/// Secrets the flow never sent in clear to anyone who should keep them.
const WRONG_PASSWORD: &str = "typo-of-a-real-password";
const WRONG_SECRET: &str = "a-secret-of-another-app";

/// One answer of the server, with the secrets it may legitimately carry.
struct Entry {
    what: String,
    location: Option<String>,
    body: String,
    allowed: Vec<String>,
}

/// A client of the served binary that remembers every secret and every answer.
struct Flow {
    client: reqwest::Client,
    base: String,
    secrets: Vec<String>,
    entries: Vec<Entry>,
}

fn cookie_values(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().unwrap().split(';').next()?.split_once('='))
        .map(|(_, value)| value.to_owned())
        .filter(|value| !value.is_empty())
        .collect()
}

impl Flow {
    fn record(
        &mut self,
        what: &str,
        headers: &HeaderMap,
        location: Option<String>,
        body: String,
        allowed: Vec<String>,
    ) {
        self.secrets.extend(cookie_values(headers));
        self.entries.push(Entry {
            what: what.to_owned(),
            location,
            body,
            allowed,
        });
    }

    /// Signs in (after one wrong password) and decides; the code when approved.
    async fn authorize(&mut self, request: &Authorize, decision: &str) -> Option<String> {
        let mut browser = Browser::at(self.client.clone(), &self.base);
        let page = browser.open(&request.query()).await;
        self.record(
            "sign-in page",
            &page.headers,
            page.location,
            page.body,
            vec![browser.csrf.clone()],
        );
        let wrong = Authorize {
            password: WRONG_PASSWORD.into(),
            ..request.clone()
        };
        let again = browser.sign_in(&wrong).await;
        self.record(
            "wrong password",
            &again.headers,
            again.location,
            again.body,
            vec![browser.csrf.clone()],
        );
        let consent = browser.sign_in(request).await;
        assert_eq!(consent.status, StatusCode::OK, "{}", consent.body);
        self.record(
            "consent",
            &consent.headers,
            consent.location,
            consent.body,
            vec![browser.csrf.clone()],
        );
        let answer = browser.post(request, &[("decision", decision)]).await;
        assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.body);
        let code = answer.redirect_params().get("code").cloned();
        self.secrets.extend(code.clone());
        self.record(
            decision,
            &answer.headers,
            answer.location,
            answer.body,
            code.iter().cloned().collect(),
        );
        code
    }

    /// Sends a request; a token response's own pair is the only secret its body may carry.
    async fn send(&mut self, what: &str, request: RequestBuilder) -> (StatusCode, Value) {
        let res = request.checked().await.unwrap();
        let (status, headers) = (res.status(), res.headers().clone());
        let body = res.text().await.unwrap();
        let value: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        let pair: Vec<String> = ["access_token", "refresh_token"]
            .iter()
            .filter_map(|k| value[*k].as_str().map(str::to_owned))
            .collect();
        self.secrets.extend(pair.clone());
        let location = headers
            .get("location")
            .map(|v| v.to_str().unwrap().to_owned());
        self.record(what, &headers, location, body, pair);
        (status, value)
    }

    fn token(&self, body: Value) -> RequestBuilder {
        self.client
            .post(format!("{}/oauth/token", self.base))
            .json(&body)
    }

    fn form(&self, path: &str, client: (&str, &str), form: &[(&str, &str)]) -> RequestBuilder {
        self.client
            .post(format!("{}{path}", self.base))
            .header("authorization", basic(client.0, client.1))
            .form(form)
    }

    fn api(&self, path: &str, token: &str) -> RequestBuilder {
        self.client
            .get(format!("{}{path}", self.base))
            .bearer_auth(token)
            .header("x-accept-version", "2.0")
    }

    /// Every kind of request the authorization server answers, successes and failures.
    async fn run(&mut self) {
        let (verifier, challenge) = pkce_pair();
        self.secrets.push(verifier.clone());
        let request = Authorize::demo(Some(challenge));
        let code = self.authorize(&request, "approve").await.expect("a code");
        assert!(self.authorize(&request, "deny").await.is_none());
        let grant = |code: &str, secret: &str| {
            json!({"grant_type": "authorization_code", "code": code, "code_verifier": verifier,
                "redirect_uri": DEMO_REDIRECT, "client_id": DEMO_CLIENT, "client_secret": secret})
        };
        let (status, _) = self
            .send("wrong secret", self.token(grant(&code, WRONG_SECRET)))
            .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", DEMO_REDIRECT),
        ];
        let (status, _) = self
            .send(
                "wrong basic secret",
                self.form("/oauth/token", (DEMO_CLIENT, WRONG_SECRET), &form),
            )
            .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let (status, first) = self
            .send("exchange", self.token(grant(&code, DEMO_SECRET)))
            .await;
        assert_eq!(status, StatusCode::OK, "{first}");
        let a0 = first["access_token"].as_str().unwrap().to_owned();
        assert_eq!(
            self.send("user", self.api("/user", &a0)).await.0,
            StatusCode::OK
        );
        let (status, _) = self
            .send("code reuse", self.token(grant(&code, DEMO_SECRET)))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(
            self.send("revoked token", self.api("/user", &a0)).await.0,
            StatusCode::UNAUTHORIZED
        );

        let (verifier, challenge) = pkce_pair();
        self.secrets.push(verifier.clone());
        let code = self
            .authorize(&Authorize::demo(Some(challenge)), "approve")
            .await
            .expect("a code");
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", DEMO_REDIRECT),
            ("code_verifier", verifier.as_str()),
        ];
        let (status, second) = self
            .send(
                "basic exchange",
                self.form("/oauth/token", (DEMO_CLIENT, DEMO_SECRET), &form),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{second}");
        let r1 = second["refresh_token"].as_str().unwrap().to_owned();
        let rotate = json!({"grant_type": "refresh_token", "refresh_token": r1,
            "client_id": DEMO_CLIENT, "client_secret": DEMO_SECRET});
        let (status, rotated) = self.send("refresh", self.token(rotate.clone())).await;
        assert_eq!(status, StatusCode::OK, "{rotated}");
        assert_eq!(
            self.send("retry", self.token(rotate)).await.0,
            StatusCode::OK
        );
        let (a2, r2) = (
            rotated["access_token"].as_str().unwrap().to_owned(),
            rotated["refresh_token"].as_str().unwrap().to_owned(),
        );
        let (status, info) = self
            .send(
                "introspect",
                self.form(
                    "/oauth/introspect",
                    (DEMO_CLIENT, DEMO_SECRET),
                    &[("token", &a2)],
                ),
            )
            .await;
        assert_eq!((status, &info["active"]), (StatusCode::OK, &json!(true)));
        let (status, _) = self
            .send(
                "foreign revoke",
                self.form("/oauth/revoke", TILL, &[("token", &r2)]),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        let (status, _) = self
            .send(
                "bad introspect",
                self.form(
                    "/oauth/introspect",
                    (DEMO_CLIENT, WRONG_SECRET),
                    &[("token", &a2)],
                ),
            )
            .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(
            self.send(
                "revoke",
                self.form(
                    "/oauth/revoke",
                    (DEMO_CLIENT, DEMO_SECRET),
                    &[("token", &r2)]
                )
            )
            .await
            .0,
            StatusCode::OK
        );
        let refresh = [
            ("grant_type", "refresh_token"),
            ("refresh_token", r2.as_str()),
        ];
        let (status, _) = self
            .send(
                "revoked refresh",
                self.form("/oauth/token", (DEMO_CLIENT, DEMO_SECRET), &refresh),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(
            self.send("revoked access", self.api("/merchant", &a2))
                .await
                .0,
            StatusCode::UNAUTHORIZED
        );
    }
}

db_tests! {
    async fn no_secret_of_a_full_flow_reaches_logs_rows_errors_or_urls(db) {
        let served = serve(&db, "trace");
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let (secrets, entries) = (Vec::new(), Vec::new());
        let mut flow = Flow { client, base: served.url(""), secrets, entries };
        flow.run().await;
        served.signal("-TERM");
        let (status, lines) = tokio::task::spawn_blocking(move || served.wait()).await.unwrap();
        assert_eq!(status.code(), Some(0), "{}", lines.join("\n"));
        assert!(lines.iter().any(|l| l.contains("/oauth/token")), "requests were logged");
        let database = Db::connect(&db.url, Metrics::new()).await.unwrap();
        let rows = dump_database(&crate::helpers::raw_pool(&db.url).await).await;
        database.close().await;
        assert!(rows.iter().any(|r| r.starts_with("refresh_tokens:")), "the dump holds tokens");

        let mut secrets = flow.secrets.clone();
        let typed = [WRONG_PASSWORD, WRONG_SECRET];
        secrets.extend(FIXTURE_SECRETS.iter().chain(&typed).map(|s| s.to_string()));
        let codes = secrets.iter().filter(|s| s.starts_with("mcd_ac_")).count();
        assert_eq!(codes, 2, "both codes were collected");
        assert!(secrets.iter().all(|s| s.len() >= 15), "no secret so short it matches by chance");
        for secret in &secrets {
            for line in &lines {
                assert!(!line.contains(secret.as_str()), "{secret} in the log line {line}");
            }
            for row in &rows {
                assert!(!row.contains(secret.as_str()), "{secret} in the row {row}");
            }
            for entry in flow.entries.iter().filter(|e| !e.allowed.contains(secret)) {
                let (what, body) = (&entry.what, &entry.body);
                assert!(!body.contains(secret.as_str()), "{secret} in {what}: {body}");
                let location = entry.location.as_deref().unwrap_or("");
                assert!(!location.contains(secret.as_str()), "{secret} in {location} ({what})");
            }
        }
        // The one URL that carries a code carries nothing else secret, and only in its query.
        let delivered: Vec<&Entry> = flow.entries.iter().filter(|e| e.what == "approve").collect();
        assert_eq!(delivered.len(), 2);
        for entry in delivered {
            let url = url::Url::parse(entry.location.as_deref().unwrap()).unwrap();
            assert_eq!(url.query_pairs().filter(|(k, _)| k == "code").count(), 1);
            assert!(url.fragment().is_none() && !url.path().contains("mcd_"));
        }
    }
}
