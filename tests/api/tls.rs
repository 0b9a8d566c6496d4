//! HTTPS served directly (`tls_cert`, `tls_key`): the OAuth flow and API calls over TLS, on
//! HTTP/1.1 and on HTTP/2 (negotiated by ALPN).

use reqwest::{Method, StatusCode, Version};

use crate::contract::Checked;
use crate::helpers::{spawn_app_with, Backend, TestApp};
use crate::oauth_support::login;

/// A server with a fresh self-signed certificate for 127.0.0.1, and that certificate.
async fn https_app() -> (TestApp, reqwest::Certificate) {
    let issued = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let dir = tempfile::tempdir().unwrap().keep();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, issued.cert.pem()).unwrap();
    std::fs::write(&key, issued.key_pair.serialize_pem()).unwrap();
    let (c, k) = (cert.clone(), key.clone());
    let app = spawn_app_with(Backend::Sqlite, move |s| {
        s.tls_cert = Some(c);
        s.tls_key = Some(k);
    })
    .await
    .expect("https app");
    let root = reqwest::Certificate::from_pem(issued.cert.pem().as_bytes()).unwrap();
    (app, root)
}

fn client(root: &reqwest::Certificate, http1: bool) -> reqwest::Client {
    let builder = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(root.clone())
        .redirect(reqwest::redirect::Policy::none())
        // Every request shakes hands afresh, so each sees the certificate served now.
        .pool_max_idle_per_host(0);
    let builder = if http1 { builder.http1_only() } else { builder };
    builder.build().unwrap()
}

#[actix_rt::test]
async fn the_oauth_flow_and_the_api_work_over_tls_on_http1_and_http2() {
    let (mut app, root) = https_app().await;
    app.address = format!("https://127.0.0.1:{}", app.port);
    for (http1, version) in [(true, Version::HTTP_11), (false, Version::HTTP_2)] {
        app.client = client(&root, http1);
        let status = app.client.get(app.url("/status")).checked().await.unwrap();
        assert_eq!(status.version(), version);
        assert_eq!(status.status(), StatusCode::OK);

        // Sign in, consent, exchange the code: the whole flow over TLS.
        let (access, _refresh) = login(&app).await;
        let res = app
            .api(Method::POST, "/category", &access)
            .json(&serde_json::json!({"categories": {"c": {"title": format!("over {version:?}")}}}))
            .checked()
            .await
            .unwrap();
        assert_eq!(res.version(), version);
        assert_eq!(res.status(), StatusCode::CREATED);
        let res = app
            .api(Method::GET, "/category", &access)
            .checked()
            .await
            .unwrap();
        let body: serde_json::Value = res.json().await.unwrap();
        assert!(body["categories"]
            .as_object()
            .unwrap()
            .values()
            .any(|c| c["title"] == format!("over {version:?}")));
    }
    // Plain HTTP on the TLS port is not served.
    let plain = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{}/status", app.port))
        .send()
        .await;
    assert!(plain.map(|r| !r.status().is_success()).unwrap_or(true));
}

#[actix_rt::test]
async fn a_key_that_does_not_fit_the_certificate_stops_the_start_with_both_files_named() {
    let one = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let other = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, one.cert.pem()).unwrap();
    std::fs::write(&key, other.key_pair.serialize_pem()).unwrap();
    let error = merchantd::tls::Certificates::load(&cert, &key).unwrap_err();
    let text = format!("{error:#}");
    assert!(
        text.contains("key.pem") && text.contains("cert.pem"),
        "{text}"
    );
    assert!(
        !text.contains("PRIVATE KEY"),
        "the key's content is never shown: {text}"
    );
}

/// A renewed certificate is served after SIGHUP, without a restart; a broken renewal keeps the
/// one in use.
#[actix_rt::test]
async fn sighup_reloads_the_certificate() {
    let db = crate::helpers::TestDb::new(Backend::Sqlite)
        .await
        .expect("db");
    let (old, new) = (
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap(),
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap(),
    );
    let (cert, key) = (db.dir().join("cert.pem"), db.dir().join("key.pem"));
    std::fs::write(&cert, old.cert.pem()).unwrap();
    std::fs::write(&key, old.key_pair.serialize_pem()).unwrap();
    let served = crate::process::serve_with(
        &db,
        "info",
        &[
            ("MERCHANTD_TLS_CERT", cert.to_str().unwrap()),
            ("MERCHANTD_TLS_KEY", key.to_str().unwrap()),
        ],
    );
    let url = format!("https://127.0.0.1:{}/status", served.port);
    let trusting = |issued: &rcgen::CertifiedKey| {
        client(
            &reqwest::Certificate::from_pem(issued.cert.pem().as_bytes()).unwrap(),
            true,
        )
    };
    let (trusts_old, trusts_new) = (trusting(&old), trusting(&new));
    assert!(trusts_old.get(&url).checked().await.is_ok());
    assert!(trusts_new.get(&url).checked().await.is_err());

    // A half-written renewal (the new certificate, the old key) is refused; the old stays.
    std::fs::write(&cert, new.cert.pem()).unwrap();
    served.signal("-HUP");
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(
        trusts_old.get(&url).checked().await.is_ok(),
        "the certificate in use stays"
    );

    std::fs::write(&key, new.key_pair.serialize_pem()).unwrap();
    served.signal("-HUP");
    let mut served_new = false;
    for _ in 0..50 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        if trusts_new.get(&url).checked().await.is_ok() {
            served_new = true;
            break;
        }
    }
    assert!(served_new, "the renewed certificate is served after SIGHUP");
    // Fresh connections no longer get the old certificate.
    assert!(trusting(&old).get(&url).checked().await.is_err());
}
