//! Webhook deliveries as the API lists and resends them, and the address guard both the API
//! (when a URL is written) and the dispatcher (when it connects) apply.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use crate::services::Services;
use domain::webhooks::webhook::{forbidden_ip, forbidden_name, Delivery, DeliveryQuery, Resend};
use domain::Failure;

/// How long a URL's host may take to resolve when it is written.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(3);

impl Services {
    pub async fn webhook_deliveries(
        &self,
        query: &DeliveryQuery,
    ) -> Result<Vec<Delivery>, Failure> {
        Ok(self.storage.webhook_deliveries(query).await?)
    }

    /// Queues finished deliveries again; gives those it found finished.
    pub async fn resend_deliveries(&self, resend: Resend<'_>) -> Result<Vec<i64>, Failure> {
        Ok(self.storage.resend_deliveries(resend).await?)
    }
}

/// Why a literal host may not receive deliveries: a forbidden name or address.
pub fn refused_host(host: &url::Host<&str>) -> Option<String> {
    let (shown, why) = match host {
        url::Host::Domain(name) => (*name, forbidden_name(name)?),
        url::Host::Ipv4(ip) => {
            return forbidden_ip(IpAddr::V4(*ip)).map(|why| refusal(&ip.to_string(), why))
        }
        url::Host::Ipv6(ip) => {
            return forbidden_ip(IpAddr::V6(*ip)).map(|why| refusal(&ip.to_string(), why))
        }
    };
    Some(refusal(shown, why))
}

fn refusal(host: &str, why: &str) -> String {
    format!(
        "{host} is {why}; webhooks are delivered to public addresses only \
         (an operator can allow others with the setting webhook_allow_private_addresses)."
    )
}

/// The addresses a host resolves to that deliveries may use, or why there are none. A name
/// that resolves to any forbidden address is refused whole: a receiver has no reason to mix
/// them, and an attacker's name might.
pub async fn allowed_addresses(host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
    let resolved: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| format!("{host} does not resolve ({e})."))?
        .collect();
    if let Some(bad) = resolved.iter().find(|a| forbidden_ip(a.ip()).is_some()) {
        let why = forbidden_ip(bad.ip()).unwrap_or("a forbidden address");
        return Err(format!(
            "{host} resolves to {}, {why}; webhooks are delivered to public addresses only \
             (an operator can allow others with the setting webhook_allow_private_addresses).",
            bad.ip()
        ));
    }
    if resolved.is_empty() {
        return Err(format!("{host} resolves to no address."));
    }
    Ok(resolved)
}

/// Why a URL being written may not receive deliveries, if it may not: its literal host, or
/// what its name resolves to now. A name that does not resolve yet is accepted (the receiver
/// may not be deployed yet); the dispatcher checks again at every connection.
pub async fn refused_url(text: &str) -> Option<String> {
    let url = url::Url::parse(text).ok()?;
    let host = url.host()?;
    if let Some(why) = refused_host(&host) {
        return Some(why);
    }
    let url::Host::Domain(name) = host else {
        return None;
    };
    let port = url.port_or_known_default().unwrap_or(443);
    match tokio::time::timeout(RESOLVE_TIMEOUT, allowed_addresses(name, port)).await {
        Ok(Err(why)) if !why.contains("does not resolve") && !why.contains("no address") => {
            Some(why)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn literal_private_hosts_are_refused_by_name() {
        let why = refused_url("http://10.0.0.7:8080/hook").await.unwrap();
        assert!(why.starts_with("10.0.0.7 is a private address;"), "{why}");
        assert!(refused_url("http://[::1]/")
            .await
            .unwrap()
            .contains("loopback"));
        assert!(refused_url("http://169.254.169.254/latest/meta-data")
            .await
            .unwrap()
            .contains("metadata"));
        assert!(refused_url("http://localhost:9/")
            .await
            .unwrap()
            .contains("loopback"));
        assert_eq!(refused_url("https://93.184.216.34/").await, None);
    }
}
