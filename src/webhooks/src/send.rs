//! One delivery attempt over HTTP: the signed POST, with timeouts on connecting and on the
//! whole request, no redirects followed, no proxy from the environment, and (unless the
//! operator allows them) no connection to a forbidden address: literal hosts are checked
//! before connecting, names by our own resolver, so the addresses checked are the addresses
//! used (a name cannot resolve to a public address for the check and a private one after).

use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::sign;
use domain::webhooks::webhook::Attempt;
use engine::webhooks::guard::{allowed_addresses, refused_host};

/// How much of a receiver's answer an attempt keeps.
const SNIPPET_BYTES: usize = 512;

pub struct Sender {
    client: reqwest::Client,
    allow_private: bool,
}

/// Resolves through the address guard.
struct Guarded;

impl Resolve for Guarded {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(async move {
            let addrs = allowed_addresses(name.as_str(), 0).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// What to send: the endpoint's URL and secrets, the message id and the body.
pub struct Message<'a> {
    pub url: &'a str,
    pub secrets: &'a [String],
    pub id: &'a str,
    pub body: String,
}

impl Sender {
    pub fn new(
        timeout: Duration,
        connect_timeout: Duration,
        allow_private: bool,
    ) -> Result<Self, reqwest::Error> {
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(timeout)
            .connect_timeout(connect_timeout)
            .pool_idle_timeout(Duration::from_secs(30))
            .user_agent(concat!("merchantd-webhooks/", env!("CARGO_PKG_VERSION")));
        if !allow_private {
            builder = builder.dns_resolver(Arc::new(Guarded));
        }
        Ok(Self {
            client: builder.build()?,
            allow_private,
        })
    }

    /// Sends one attempt (number `attempt`) and reports how it went.
    pub async fn send(&self, message: Message<'_>, attempt: i64, now: i64) -> Attempt {
        let started = Instant::now();
        let mut result = Attempt {
            attempt,
            attempted_at: now,
            status_code: None,
            duration_ms: 0,
            response: None,
            error: None,
        };
        match self.post(&message, now).await {
            Ok((status, snippet)) => {
                result.status_code = Some(i64::from(status));
                result.response = Some(snippet).filter(|s| !s.is_empty());
            }
            Err(why) => result.error = Some(why),
        }
        result.duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        result
    }

    async fn post(&self, message: &Message<'_>, now: i64) -> Result<(u16, String), String> {
        if !self.allow_private {
            let url = url::Url::parse(message.url).map_err(|e| format!("bad URL: {e}"))?;
            if let Some(why) = url.host().as_ref().and_then(refused_host) {
                return Err(format!("not sent: {why}"));
            }
        }
        let timestamp = now / 1000;
        let signature = sign::signature(
            message.secrets,
            message.id,
            timestamp,
            message.body.as_bytes(),
        );
        let mut response = self
            .client
            .post(message.url)
            .header("content-type", "application/json")
            .header("webhook-id", message.id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(message.body.clone())
            .send()
            .await
            .map_err(describe)?;
        let status = response.status().as_u16();
        let mut kept = Vec::new();
        while kept.len() < SNIPPET_BYTES {
            match response.chunk().await {
                Ok(Some(chunk)) => kept.extend_from_slice(&chunk),
                // The status decides; a body cut short or slow to come is not the receiver's
                // answer changing.
                Ok(None) | Err(_) => break,
            }
        }
        kept.truncate(SNIPPET_BYTES);
        Ok((status, String::from_utf8_lossy(&kept).into_owned()))
    }
}

/// A failed request in words: the error and its causes, without the URL (its query may hold
/// the receiver's credentials).
fn describe(error: reqwest::Error) -> String {
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "could not connect"
    } else {
        "request failed"
    };
    let error = error.without_url();
    let mut text = kind.to_owned();
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
