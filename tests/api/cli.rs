//! `merchantd employee set-password`: an employee created through the API can sign in once an
//! operator sets a password (api-reference.md, Employee).

use std::io::Write;
use std::process::{Command, Stdio};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::contract::Checked;
use crate::helpers::binary;
use crate::oauth_support::{exchange, pkce_pair, Authorize, Browser};

fn set_password(db_url: &str, email: &str, password: &str) -> std::process::Output {
    let mut child = Command::new(binary())
        .args([
            "employee",
            "set-password",
            "--email",
            email,
            "--database-url",
            db_url,
        ])
        .env("MERCHANTD_PBKDF2_ITERATIONS", "1000")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run merchantd");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{password}\n").as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

backend_tests! {
    async fn an_employee_created_through_the_api_signs_in_after_set_password(app) {
        let token = app.owner_token().await;
        let res = app
            .api(Method::POST, "/employee", &token)
            .json(&json!({"employees": {"sam": {"firstName": "Sam", "lastName": "Patel", "email": "sam@demo.test", "roleId": 3}}}))
            .checked()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::CREATED);

        let (verifier, challenge) = pkce_pair();
        let mut request = Authorize::demo(Some(challenge));
        request.email = "sam@demo.test".into();
        request.password = "sams-new-password".into();
        let mut browser = Browser::new(&app);
        browser.open(&request.query()).await;
        let refused = browser.sign_in(&request).await;
        assert_ne!(refused.status, StatusCode::OK, "no password yet: no sign-in");

        let out = set_password(&app.database.url, "sam@demo.test", "sams-new-password");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(printed["passwordSet"], true);
        assert!(!String::from_utf8_lossy(&out.stdout).contains("sams-new-password"));

        let answer = Browser::new(&app).authorize(&request, "approve").await;
        assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.body);
        let (status, body) = exchange(&app, &answer.redirect_params()["code"], Some(&verifier)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["scope"], "read write", "an assistant's role caps the grant at write");

        let unknown = set_password(&app.database.url, "nobody@demo.test", "whatever-password");
        assert!(!unknown.status.success());
        assert!(String::from_utf8_lossy(&unknown.stderr).contains("no live employee"));
    }
}

/// Runs `merchantd token issue` off the test's thread: the server under test runs on that
/// thread, and a blocked thread could not commit a write the command waits behind.
async fn issue(db_url: &str, args: &[&str]) -> std::process::Output {
    let mut command = Command::new(binary());
    command
        .args(["token", "issue", "--database-url", db_url])
        .args(args)
        .env("RUST_LOG", "info");
    tokio::task::spawn_blocking(move || command.output().expect("run merchantd"))
        .await
        .expect("the command ran")
}

backend_tests! {
    async fn token_issue_gives_a_working_pair_capped_by_role_and_never_logs_it(app) {
        let out = issue(&app.database.url, &["--merchant", "demo", "--client", "demo-pos", "--email", "owner@demo.test"]).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let answer: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
        let access = answer["access_token"].as_str().unwrap();
        let refresh = answer["refresh_token"].as_str().unwrap();
        assert_eq!(answer["token_type"], "Bearer");
        assert_eq!(answer["scope"], "read write admin");
        assert!(!stderr.contains(access) && !stderr.contains(refresh), "tokens never logged: {stderr}");
        assert!(stderr.contains("issued by CLI"), "an audit line: {stderr}");

        let res = app.api(Method::POST, "/category", access)
            .json(&json!({"categories": {"k": {"title": "From the CLI"}}}))
            .checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::CREATED);
        // The refresh token works like one from the consent flow, and only once.
        let refreshed = reqwest::Client::new()
            .post(app.url("/oauth/token"))
            .basic_auth("demo-pos", Some("demo-pos-secret"))
            .form(&[("grant_type", "refresh_token"), ("refresh_token", refresh)])
            .checked().await.unwrap();
        assert_eq!(refreshed.status(), StatusCode::OK);
        let pair: Value = refreshed.json().await.unwrap();
        assert_eq!(pair["scope"], "read write admin");

        // A guest asking for everything gets what a guest may have.
        let out = issue(&app.database.url, &["--merchant", "second", "--client", "second-till", "--email", "guest@second.test"]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(answer["scope"], "read");

        // Each missing part is named; nothing is issued.
        let out = issue(&app.database.url, &["--merchant", "demo", "--client", "second-till", "--email", "owner@demo.test"]).await;
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("no live application second-till"));
        let out = issue(&app.database.url, &["--merchant", "demo", "--client", "demo-pos", "--email", "nobody@demo.test"]).await;
        assert!(String::from_utf8_lossy(&out.stderr).contains("no current employee nobody@demo.test"));
        let out = issue(&app.database.url, &["--merchant", "demo", "--client", "demo-pos", "--email", "owner@demo.test", "--scope", "superpowers"]).await;
        assert!(String::from_utf8_lossy(&out.stderr).contains("--scope"));
    }
}

/// Reads a child's stderr to its end on a thread of its own, handing over the authorize URL
/// when it comes (the pipe stays open: the child may write more).
fn authorize_url(stderr: std::process::ChildStderr) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if let (Some(at), true) = (line.find("http"), line.contains("/oauth/authorize?")) {
                let _ = tx.send(line[at..].trim().to_owned());
            }
        }
    });
    rx
}

backend_tests! {
    // Issue 13, acceptance 2: `merchantd login` against a running server, the test playing the
    // browser with the forms the browser test posts; the demo application's loopback redirect
    // matches the port the command listens on (RFC 8252 §7.3).
    async fn login_completes_the_loopback_flow_and_prints_a_working_token(app) {
        let mut child = Command::new(binary())
            .args(["login", "--server", &app.address, "--no-browser", "--scope", "read write", "--wait-secs", "60"])
            .env("MERCHANTD_LOGIN_CLIENT_SECRET", "demo-pos-secret")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("merchantd login");
        let stderr = child.stderr.take().unwrap();
        let urls = authorize_url(stderr);
        let url = tokio::task::spawn_blocking(move || urls.recv_timeout(std::time::Duration::from_secs(30)))
            .await.unwrap().expect("merchantd login prints the URL");
        let parsed = url::Url::parse(&url).unwrap();
        let params: std::collections::HashMap<String, String> = parsed.query_pairs().into_owned().collect();
        assert_eq!(params["client_id"], "demo-pos");
        assert_eq!(params["code_challenge_method"], "S256");
        assert!(params["redirect_uri"].starts_with("http://127.0.0.1:") && params["redirect_uri"].ends_with("/callback"));
        assert_ne!(params["redirect_uri"], "http://127.0.0.1:8976/callback", "a port of its own");
        let request = Authorize {
            redirect_uri: params["redirect_uri"].clone(),
            scope: params["scope"].clone(),
            state: Some(params["state"].clone()),
            code_challenge: Some(params["code_challenge"].clone()),
            ..Authorize::demo(None)
        };
        let answer = Browser::new(&app).authorize(&request, "approve").await;
        assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.body);
        let back = answer.location.unwrap();
        assert!(back.starts_with(&params["redirect_uri"]), "{back}");
        // The browser follows the redirect to the command's listener.
        let page = reqwest::get(&back).await.unwrap();
        assert_eq!(page.status(), StatusCode::OK);
        assert!(page.text().await.unwrap().contains("Signed in"));
        let out = tokio::task::spawn_blocking(move || child.wait_with_output()).await.unwrap().unwrap();
        assert!(out.status.success());
        let token: Value = serde_json::from_slice(&out.stdout).expect("the token response on stdout");
        assert_eq!(token["token_type"], "Bearer");
        assert_eq!(token["scope"], "read write");
        let access = token["access_token"].as_str().unwrap();
        let res = app.api(Method::POST, "/category", access)
            .json(&json!({"categories": {"k": {"title": "From merchantd login"}}}))
            .checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::CREATED);
    }
}
