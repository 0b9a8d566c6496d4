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

/// Whether a `redirect_uri` of an authorization request names a registered one: the same text,
/// or for a loopback IP literal over `http` the same address, path and query on any port
/// (RFC 8252 §7.3: a native app listens on whatever port it could open).
pub fn matches(registered: &str, requested: &str) -> bool {
    if registered == requested {
        return true;
    }
    let (Ok(r), Ok(q)) = (Url::parse(registered), Url::parse(requested)) else {
        return false;
    };
    let loopback_ip = |u: &Url| match u.host() {
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        _ => false,
    };
    r.scheme() == "http"
        && q.scheme() == "http"
        && loopback_ip(&r)
        && r.host() == q.host()
        && r.path() == q.path()
        && r.query() == q.query()
        && q.fragment().is_none()
        && q.username().is_empty()
        && q.password().is_none()
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
    use super::{matches, validate};

    #[test]
    fn loopback_ip_redirects_match_on_any_port_and_nothing_else_does() {
        let registered = "http://127.0.0.1:8976/callback";
        assert!(matches(registered, registered));
        assert!(matches(registered, "http://127.0.0.1:51234/callback"));
        assert!(matches(registered, "http://127.0.0.1/callback"));
        assert!(matches("http://[::1]:1/cb", "http://[::1]:2/cb"));
        for other in [
            "http://127.0.0.1:51234/other",
            "http://127.0.0.1:51234/callback?x=1",
            "http://127.0.0.2:8976/callback",
            "http://localhost:8976/callback",
            "https://127.0.0.1:8976/callback",
            "http://u:p@127.0.0.1:1/callback",
            "http://127.0.0.1:1/callback#f",
        ] {
            assert!(!matches(registered, other), "{other}");
        }
        assert!(!matches(
            "https://app.example/cb",
            "https://app.example:8443/cb"
        ));
        assert!(!matches("http://localhost:1/cb", "http://localhost:2/cb"));
    }

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
