//! Redirect URIs registered for an application (api-reference.md, Application).

use url::{Host, Url};

/// Accepts an absolute URL that is `https`, `http` on a loopback host, or a custom scheme (mobile
/// apps), with no fragment (RFC 6749 §3.1.2). `Err` says what is wrong.
pub fn validate(uri: &str) -> Result<(), String> {
    let parsed = Url::parse(uri).map_err(|e| format!("\"{uri}\" is not an absolute URL ({e})"))?;
    if parsed.fragment().is_some() {
        return Err(format!("\"{uri}\" must not contain a fragment"));
    }
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(&parsed) => Ok(()),
        "http" => Err(format!(
            "\"{uri}\" uses http on a non-loopback host; use https"
        )),
        "javascript" | "data" | "file" | "about" | "blob" | "vbscript" => Err(format!(
            "\"{uri}\" uses a scheme that cannot be a redirect target"
        )),
        _ => Ok(()),
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::validate;

    #[test]
    fn accepts_https_loopback_http_and_custom_schemes() {
        for ok in [
            "https://till.example.com/oauth/callback",
            "http://127.0.0.1:8976/callback",
            "http://localhost/cb",
            "http://[::1]:9000/cb",
            "com.example.pos:/oauth",
        ] {
            assert_eq!(validate(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn rejects_plain_http_fragments_relative_and_script_urls() {
        for bad in [
            "http://evil.example/cb",
            "https://a.example/cb#frag",
            "/relative",
            "javascript:alert(1)",
            "not a url",
        ] {
            assert!(validate(bad).is_err(), "{bad}");
        }
    }
}
