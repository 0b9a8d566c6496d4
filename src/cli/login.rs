//! `merchantd login`: a token for a person, by the loopback flow of RFC 8252. It listens on
//! 127.0.0.1 on a port the system picks, prints (and tries to open) the authorize URL with
//! PKCE (S256) and a random `state`, receives the code on that port when the browser comes
//! back, exchanges it at `/oauth/token`, and prints the token response. The tokens go to
//! standard output only; nothing is logged.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::crypto;
use crate::oauth::pkce;

/// What `merchantd login` was asked for.
pub struct Login {
    pub server: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    pub scope: String,
    pub open_browser: bool,
    pub wait: Duration,
}

/// The longest request head the callback listener reads.
const MAX_HEAD: usize = 16 * 1024;

const DONE_PAGE: &str = "<!doctype html><meta charset=utf-8><title>merchantd</title>\
    <p>Signed in. You can close this window and return to the terminal.</p>";

/// Runs the flow; gives the token endpoint's JSON answer.
pub async fn run(login: Login) -> anyhow::Result<serde_json::Value> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .context("listening on 127.0.0.1 for the browser's return")?;
    let port = listener.local_addr()?.port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    let verifier = crypto::random_token("");
    let state = crypto::random_token("");
    let base = login.server.trim_end_matches('/');
    let mut url = url::Url::parse(&format!("{base}/oauth/authorize"))
        .with_context(|| format!("--server {base} is not a URL"))?;
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &login.client_id)
        .append_pair("redirect_uri", &redirect_uri)
        .append_pair("scope", &login.scope)
        .append_pair("state", &state)
        .append_pair("code_challenge", &pkce::s256(&verifier))
        .append_pair("code_challenge_method", "S256");
    // One write, and no panic if nobody reads standard error any more (`eprintln!` would).
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!(
            "Sign in and approve in a browser at:\n\n  {url}\n\nWaiting on {redirect_uri} ...\n"
        )
        .as_bytes(),
    );
    if login.open_browser {
        open_browser(url.as_str());
    }
    let params = tokio::time::timeout(login.wait, callback(&listener))
        .await
        .map_err(|_| {
            anyhow!(
                "no answer from the browser within {} s",
                login.wait.as_secs()
            )
        })??;
    if params.get("state") != Some(&state) {
        bail!("the browser came back with another state: not the request this command made");
    }
    if let Some(error) = params.get("error") {
        let description = params.get("error_description").map_or("", String::as_str);
        bail!("the authorization was refused: {error} {description}");
    }
    let code = params
        .get("code")
        .ok_or_else(|| anyhow!("the browser came back without a code"))?;
    exchange(base, &login, code, &redirect_uri, &verifier).await
}

/// Waits for the browser's request to `/callback` (answering anything else 404), answers it
/// with a page, and gives its query parameters.
async fn callback(listener: &TcpListener) -> anyhow::Result<HashMap<String, String>> {
    loop {
        let (mut stream, _) = listener.accept().await?;
        let Some(target) = request_target(&mut stream).await else {
            continue;
        };
        let Some(query) = target
            .strip_prefix("/callback")
            .filter(|rest| rest.is_empty() || rest.starts_with('?'))
        else {
            respond(&mut stream, "404 Not Found", "Not found.").await;
            continue;
        };
        let params = url::form_urlencoded::parse(query.trim_start_matches('?').as_bytes())
            .into_owned()
            .collect();
        respond(&mut stream, "200 OK", DONE_PAGE).await;
        return Ok(params);
    }
}

/// The target of a `GET` request's line (`/callback?code=…`), once its head has arrived.
async fn request_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .ok()?
            .ok()?;
        if n == 0 || head.len() + n > MAX_HEAD {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head);
    let mut line = text.lines().next()?.split(' ');
    match (line.next(), line.next()) {
        (Some("GET"), Some(target)) => Some(target.to_owned()),
        _ => None,
    }
}

async fn respond(stream: &mut TcpStream, status: &str, body: &str) {
    let answer = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
         cache-control: no-store\r\nreferrer-policy: no-referrer\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    // The browser may already have gone; the code is what matters.
    let _ = stream.write_all(answer.as_bytes()).await;
    let _ = stream.shutdown().await;
}

async fn exchange(
    base: &str,
    login: &Login,
    code: &str,
    redirect_uri: &str,
    verifier: &str,
) -> anyhow::Result<serde_json::Value> {
    let mut form = vec![
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", redirect_uri),
        ("code_verifier", verifier),
        ("client_id", login.client_id.as_str()),
    ];
    if let Some(secret) = &login.client_secret {
        form.push(("client_secret", secret));
    }
    let res = reqwest::Client::new()
        .post(format!("{base}/oauth/token"))
        .form(&form)
        .send()
        .await
        .map_err(|e| {
            anyhow!(
                "the token endpoint could not be reached: {}",
                e.without_url()
            )
        })?;
    let status = res.status();
    let text = res.bytes().await.unwrap_or_default();
    let body: serde_json::Value = serde_json::from_slice(&text)
        .map_err(|_| anyhow!("the token endpoint answered {status} without JSON"))?;
    if !status.is_success() {
        bail!(
            "the token endpoint refused the code ({status}): {} {}",
            body["error"].as_str().unwrap_or(""),
            body["error_description"].as_str().unwrap_or("")
        );
    }
    Ok(body)
}

/// Tries the desktop's browser; the URL is printed whatever happens.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let _ = std::process::Command::new(opener)
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}
