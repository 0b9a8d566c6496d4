//! A real browser walks the OAuth sign-in and consent pages (DESIGN §4, examples §1.1–1.4)
//! and the connected-applications page (`/account`, issue 13).
//! Headless Chromium through chromedriver exercises what a reqwest client cannot: the pages
//! work as served (cookies, hidden inputs, CSRF token, no JavaScript), and the browser follows
//! the 302 after the consent post, which it only does if the page's CSP `form-action` allows
//! the redirect origin. The code it lands with is then exchanged and used like a client would.
//!
//! Skipped with a notice where chromedriver is missing, unless `MERCHANTD_REQUIRE_BROWSER=1`
//! (CI sets it after installing Chromium, so a broken install fails instead of skipping).

use std::collections::HashMap;
use std::fs::File;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::helpers::{spawn_app, Backend, TestApp};

const CLIENT_ID: &str = "demo-pos";
const REDIRECT_URI: &str = "http://127.0.0.1:8976/callback";
/// A `/` in the state proves it is returned exactly, not just "something URL-safe".
const STATE: &str = "Zq4p/2026-03-28";
/// Bounds the whole browser session, so a hung Chromium fails the test instead of CI.
const SESSION_TIMEOUT: Duration = Duration::from_secs(120);
/// Chromium as root (hence --no-sandbox) on machines with no outside network: without the
/// background-networking flags it keeps dialling out and stalls on refused connections.
const CHROMIUM_ARGS: [&str; 8] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];
/// The sign-in form's submit button, whichever markup the page uses for it.
const SUBMIT: &str = "button:not([type]), button[type='submit'], input[type='submit']";

/// Runs `steps` in a fresh headless Chromium (its own profile), within [`SESSION_TIMEOUT`],
/// then closes it; `None` when chromedriver is missing and the browser is not required. A
/// failure panics with what the browser showed.
async fn in_browser<T, F>(steps: impl FnOnce(Client) -> F) -> Option<T>
where
    F: std::future::Future<Output = anyhow::Result<T>>,
{
    let Some(chromedriver) = find_chromedriver() else {
        if std::env::var("MERCHANTD_REQUIRE_BROWSER").as_deref() == Ok("1") {
            panic!("MERCHANTD_REQUIRE_BROWSER=1 but chromedriver is not installed");
        }
        eprintln!(
            "notice: chromedriver is not installed (/usr/bin/chromedriver or on PATH); \
             skipping the browser test"
        );
        return None;
    };
    let mut driver = Driver::start(&chromedriver);
    let session = async {
        driver.ready().await?;
        let browser = ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities(&driver.dir.path().join("profile")))
            .connect(&driver.url())
            .await
            .context("start a Chromium session")?;
        let outcome = steps(browser.clone()).await;
        // Ends Chromium cleanly; on every other path the Driver guard kills it.
        let _ = browser.close().await;
        outcome
    };
    let outcome = tokio::time::timeout(SESSION_TIMEOUT, session)
        .await
        .unwrap_or_else(|_| panic!("the browser session took longer than {SESSION_TIMEOUT:?}"))
        .unwrap_or_else(|e| panic!("{e:#}"));
    drop(driver);
    Some(outcome)
}

/// The authorize URL of the demo POS asking for everything, with PKCE.
fn authorize_url(app: &TestApp, verifier: &str) -> url::Url {
    let mut authorize = url::Url::parse(&app.url("/oauth/authorize")).expect("authorize url");
    authorize
        .query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", CLIENT_ID)
        .append_pair("redirect_uri", REDIRECT_URI)
        .append_pair("scope", "read write admin")
        .append_pair("state", STATE)
        .append_pair("code_challenge", &pkce_challenge(verifier))
        .append_pair("code_challenge_method", "S256");
    authorize
}

/// Exchanges the code the browser landed with: the token response, checked.
async fn exchange(app: &TestApp, callback: &url::Url, verifier: &str) -> Value {
    let query: HashMap<String, String> = callback.query_pairs().into_owned().collect();
    assert_eq!(
        query.get("state").map(String::as_str),
        Some(STATE),
        "{callback}"
    );
    let code = query
        .get("code")
        .unwrap_or_else(|| panic!("no code in {callback}"));
    assert!(code.starts_with("mcd_ac_"), "{callback}");
    let res = app
        .client
        .post(app.url("/oauth/token"))
        .json(&json!({
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "client_id": CLIENT_ID,
            "client_secret": "demo-pos-secret",
            "code_verifier": verifier,
        }))
        .checked()
        .await
        .expect("token request");
    let status = res.status();
    let tokens: Value = res.json().await.expect("a JSON token response");
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert!(
        tokens["access_token"]
            .as_str()
            .is_some_and(|t| t.starts_with("mcd_at_")),
        "{tokens}"
    );
    assert!(
        tokens["refresh_token"]
            .as_str()
            .is_some_and(|t| t.starts_with("mcd_rt_")),
        "{tokens}"
    );
    assert_eq!(tokens["token_type"], "Bearer", "{tokens}");
    tokens
}

#[actix_rt::test]
async fn a_browser_signs_in_approves_and_the_code_buys_working_tokens() {
    let app = spawn_app(Backend::Sqlite).await.expect("sqlite test app");
    let verifier = pkce_verifier();
    let authorize = authorize_url(&app, &verifier);
    let Some(callback) =
        in_browser(
            |browser| async move { sign_in_and_approve(&browser, authorize.as_str()).await },
        )
        .await
    else {
        return;
    };
    let tokens = exchange(&app, &callback, &verifier).await;
    let access = tokens["access_token"].as_str().unwrap_or_default();
    let res = app
        .api(Method::GET, "/user", access)
        .checked()
        .await
        .unwrap();
    let status = res.status();
    let user: Value = res.json().await.expect("a JSON /user body");
    assert_eq!(status, StatusCode::OK, "{user}");
    assert_eq!(user["user"]["email"], "owner@demo.test", "{user}");
}

/// Connected applications (issue 13): the owner authorizes the demo POS, then on `/account`
/// signs in, sees it with its scopes and revokes it; its tokens stop working at once.
#[actix_rt::test]
async fn a_browser_revokes_a_connected_application_and_its_tokens_die_at_once() {
    let app = spawn_app(Backend::Sqlite).await.expect("sqlite test app");
    let verifier = pkce_verifier();
    let authorize = authorize_url(&app, &verifier);
    let account = app.url("/account");
    let Some((callback, tokens)) = in_browser(|browser| {
        let (app, verifier) = (&app, &verifier);
        async move {
            let callback = sign_in_and_approve(&browser, authorize.as_str()).await?;
            let tokens = exchange(app, &callback, verifier).await;
            let access = tokens["access_token"].as_str().unwrap_or_default();
            ensure!(
                app.api(Method::GET, "/product", access)
                    .checked()
                    .await?
                    .status()
                    == StatusCode::OK,
                "the new access token does not work"
            );
            sign_in_and_revoke(&browser, &account).await?;
            Ok((callback, tokens))
        }
    })
    .await
    else {
        return;
    };
    assert!(callback.as_str().starts_with(REDIRECT_URI));
    let access = tokens["access_token"].as_str().unwrap_or_default();
    let res = app
        .api(Method::GET, "/product", access)
        .checked()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    let res = app
        .client
        .post(app.url("/oauth/token"))
        .json(&json!({
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": CLIENT_ID,
            "client_secret": "demo-pos-secret",
        }))
        .checked()
        .await
        .expect("refresh request");
    let status = res.status();
    let body: Value = res.json().await.expect("a JSON token error");
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"], "invalid_grant", "{body}");
}

/// On `/account`: signs in as the demo owner, finds the demo POS with its scopes, revokes it
/// and waits for the listing without it.
async fn sign_in_and_revoke(browser: &Client, account: &str) -> anyhow::Result<()> {
    browser.goto(account).await.context("open /account")?;
    find(browser, "input[name='email']", "email input")
        .await?
        .send_keys("owner@demo.test")
        .await?;
    find(browser, "input[name='password']", "password input")
        .await?
        .send_keys("demo-owner-password")
        .await?;
    find(browser, SUBMIT, "Sign in button")
        .await?
        .click()
        .await?;
    let grant = match browser
        .wait()
        .at_most(Duration::from_secs(15))
        .for_element(Locator::Css("li.grant"))
        .await
    {
        Ok(grant) => grant,
        Err(e) => bail!(
            "no grant listed after signing in ({e}):\n{}",
            page(browser).await
        ),
    };
    let text = grant.text().await?;
    for expected in [
        "Demo POS",
        "read",
        "write",
        "admin",
        "Authorized",
        "Last used",
    ] {
        ensure!(
            text.contains(expected),
            "the grant does not show {expected}:\n{text}"
        );
    }
    let revoke = grant
        .find(Locator::Css("form[action='/account/revoke'] button"))
        .await
        .context("the grant's revoke button")?;
    revoke.click().await.context("click Revoke")?;
    // The confirmation exists only on the page the revocation redirects to; waiting for it
    // also rides out the navigation, during which the document may have no body yet.
    if let Err(e) = browser
        .wait()
        .at_most(Duration::from_secs(15))
        .for_element(Locator::Css("p[role='status']"))
        .await
    {
        bail!(
            "the page never confirmed the revocation ({e}):\n{}",
            page(browser).await
        );
    }
    let body = browser.find(Locator::Css("body")).await?.text().await?;
    ensure!(body.contains("Access revoked"), "no confirmation:\n{body}");
    ensure!(
        !body.contains("Demo POS") && browser.find_all(Locator::Css("li.grant")).await?.is_empty(),
        "the revoked application is still listed:\n{body}"
    );
    Ok(())
}

/// Guards the test's own PKCE arithmetic with the pair of examples §1.1, so a failing exchange
/// points at the server, not at the test.
#[test]
fn pkce_challenge_matches_the_documented_example() {
    assert_eq!(
        pkce_challenge("9fRidZwC5aj2RPI9NW58Xq_ktTn1CSBbiALqpXBdDP4"),
        "X5OSxWHWILrUNPmT-ld32v80_QFCaNGlG8wS493of0k"
    );
    assert_eq!(pkce_verifier().len(), 43);
}

/// Signs in as the demo owner, approves, and returns the URL the browser was redirected to.
async fn sign_in_and_approve(browser: &Client, authorize: &str) -> anyhow::Result<url::Url> {
    browser
        .goto(authorize)
        .await
        .context("open the authorize page")?;
    let email = find(browser, "input[name='email']", "email input").await?;
    email.send_keys("owner@demo.test").await?;
    let password = find(browser, "input[name='password']", "password input").await?;
    password.send_keys("demo-owner-password").await?;
    let submits = browser.find_all(Locator::Css(SUBMIT)).await?;
    ensure!(
        submits.len() == 1,
        "the sign-in page has {} submit buttons, not one",
        submits.len()
    );
    submits[0].click().await.context("click Sign in")?;

    let approve = match browser
        .wait()
        .at_most(Duration::from_secs(15))
        .for_element(Locator::Css("[name='decision'][value='approve']"))
        .await
    {
        Ok(button) => button,
        Err(e) => bail!(
            "no consent page after signing in ({e}):\n{}",
            page(browser).await
        ),
    };
    find(browser, "[name='decision'][value='deny']", "deny button").await?;
    let text = browser.find(Locator::Css("body")).await?.text().await?;
    ensure!(
        text.contains("Demo POS"),
        "the consent page does not name the application:\n{text}"
    );

    // Nothing listens on the callback port: Chromium shows its error page but keeps the URL,
    // which is all a real client's redirect handler would read. Navigation errors may surface
    // through the click, so only the URL decides.
    let clicked = approve.click().await;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let url = browser.current_url().await?;
        if url.as_str().starts_with(REDIRECT_URI) {
            return Ok(url);
        }
        if Instant::now() > deadline {
            bail!(
                "after approving, the browser stayed off the callback (click: {clicked:?}); a CSP \
                 form-action without the redirect origin blocks the redirect:\n{}",
                page(browser).await
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The element at `css`, or an error saying which was missing and what the browser shows.
async fn find(browser: &Client, css: &str, what: &str) -> anyhow::Result<Element> {
    match browser.find(Locator::Css(css)).await {
        Ok(element) => Ok(element),
        Err(e) => bail!("no {what} ({e}); the browser shows {}", page(browser).await),
    }
}

/// Where the browser is and what it shows, for failure messages.
async fn page(browser: &Client) -> String {
    let url = match browser.current_url().await {
        Ok(url) => url.to_string(),
        Err(e) => format!("(no URL: {e})"),
    };
    let text = match browser.find(Locator::Css("body")).await {
        Ok(body) => body.text().await.unwrap_or_default(),
        Err(_) => browser.source().await.unwrap_or_default(),
    };
    format!("{url}\n{}", text.chars().take(2000).collect::<String>())
}

fn find_chromedriver() -> Option<PathBuf> {
    let debian = Path::new("/usr/bin/chromedriver");
    if debian.is_file() {
        return Some(debian.into());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("chromedriver"))
        .find(|path| path.is_file())
}

fn capabilities(user_data_dir: &Path) -> fantoccini::wd::Capabilities {
    let mut args: Vec<String> = CHROMIUM_ARGS.iter().map(|a| a.to_string()).collect();
    // A fresh profile per run: no state from an earlier run or another test can leak in.
    args.push(format!("--user-data-dir={}", user_data_dir.display()));
    let mut chrome = json!({ "args": args });
    if Path::new("/usr/bin/chromium").is_file() {
        chrome["binary"] = json!("/usr/bin/chromium");
    }
    match json!({ "browserName": "chrome", "goog:chromeOptions": chrome }) {
        Value::Object(caps) => caps,
        _ => unreachable!("a JSON object literal"),
    }
}

/// A random RFC 7636 verifier: 32 bytes, base64url without padding (43 characters).
fn pkce_verifier() -> String {
    let mut bytes = [0u8; 32];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes).expect("random");
    URL_SAFE_NO_PAD.encode(bytes)
}

/// S256: base64url-no-pad(SHA-256(verifier)).
fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(ring::digest::digest(
        &ring::digest::SHA256,
        verifier.as_bytes(),
    ))
}

/// chromedriver on a free loopback port, in its own process group with the Chromium it starts.
/// Dropping it kills that whole group, also when the test panics or times out, so no browser
/// outlives the test binary.
struct Driver {
    child: Child,
    port: u16,
    log: PathBuf,
    /// Holds the log and the browser profile; removed after the kill, once nothing writes.
    dir: tempfile::TempDir,
}

impl Driver {
    fn start(binary: &Path) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        // Ask the OS for a free port and release it for chromedriver: a tiny race, fine here.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let log = dir.path().join("chromedriver.log");
        let out = File::create(&log).expect("log file");
        let child = Command::new(binary)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("log file"))
            .stderr(out)
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        Self {
            child,
            port,
            log,
            dir,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Waits until chromedriver answers `/status` ready; fails at once if it exited.
    async fn ready(&mut self) -> anyhow::Result<()> {
        let http = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!("chromedriver exited with {status}");
            }
            let res = http.get(format!("{}/status", self.url())).send().await;
            if let Ok(res) = res {
                let body: Value = res.json().await.unwrap_or_default();
                if body["value"]["ready"] == true {
                    return Ok(());
                }
            }
            ensure!(
                Instant::now() < deadline,
                "chromedriver not ready within 20 s"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Ok(pgid) = libc::pid_t::try_from(self.child.id()) {
            // SAFETY: plain kill(2) on the process group this struct created (process_group(0)
            // made chromedriver its leader); no memory is shared with the callee.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
        let _ = self.child.wait();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            eprintln!("chromedriver log:\n{log}");
        }
    }
}
