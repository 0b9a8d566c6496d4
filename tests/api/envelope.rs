//! Every response carries the `api` envelope and `x-api-version` (spec: Errors, Versioning;
//! DESIGN §6).

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::backend_tests;
use crate::contract::Checked;
use crate::helpers::TestApp;

/// Checks the envelope common to every JSON answer and returns the body.
async fn enveloped(res: reqwest::Response, status: StatusCode) -> Value {
    assert_eq!(res.status(), status);
    assert_eq!(
        res.headers()
            .get("x-api-version")
            .map(|v| v.to_str().unwrap()),
        Some("2.0")
    );
    assert!(res.headers().contains_key("x-request-id"));
    assert!(res
        .headers()
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap().starts_with("application/json")));
    let body: Value = res.json().await.expect("a JSON body");
    assert_eq!(body["api"]["codeBaseVersion"], "2.0", "{body}");
    assert!(body["api"]["executionTime_milliSeconds"].is_u64(), "{body}");
    assert!(body["api"]["message"].is_object(), "{body}");
    if status.is_client_error() || status.is_server_error() {
        assert_eq!(body["error"]["code"], status.as_u16(), "{body}");
        assert!(body["error"]["message"].is_string(), "{body}");
        assert!(body["error"]["details"].is_array(), "{body}");
    } else {
        assert!(body.get("error").is_none(), "{body}");
    }
    body
}

fn error_record<'a>(body: &'a Value, id: &str) -> &'a Value {
    let record = &body["api"]["message"]["error"][id];
    assert!(record.is_object(), "no error record {id} in {body}");
    record
}

async fn get(app: &TestApp, path: &str) -> reqwest::Response {
    app.client.get(app.url(path)).checked().await.unwrap()
}

backend_tests! {
    async fn status_answers_ok_without_a_token(app) {
        let body = enveloped(get(&app, "/status").await, StatusCode::OK).await;
        assert_eq!(body["status"], "OK");
        assert!(body["serverTimestamp"].as_str().unwrap().ends_with('Z'));
        assert_eq!(body["api"]["message"], serde_json::json!({}));
    }

    async fn an_api_route_without_a_token_is_401_with_message_100(app) {
        let res = get(&app, "/product").await;
        let www = res.headers().get("www-authenticate").unwrap().to_str().unwrap().to_owned();
        assert!(www.starts_with("Bearer") && www.contains("invalid_token"), "{www}");
        let body = enveloped(res, StatusCode::UNAUTHORIZED).await;
        let record = error_record(&body, "100");
        assert_eq!(record["code"], "tokenInvalid");
        assert_eq!(record["statusCode"], 401);
    }

    async fn an_unknown_token_is_401_and_the_legacy_oauth_scheme_is_accepted(app) {
        let res = app.api(Method::GET, "/product", "mcd_at_nobodyissuedthis").checked().await.unwrap();
        enveloped(res, StatusCode::UNAUTHORIZED).await;
        let token = app.owner_token().await;
        let res = app
            .client
            .get(app.url("/no-such-resource"))
            .header("authorization", format!("OAuth {token}"))
            .header("x-accept-version", "2")
            .checked()
            .await
            .unwrap();
        // Past authentication and the version check: the route does not exist.
        enveloped(res, StatusCode::NOT_FOUND).await;
    }

    async fn an_expired_token_is_401_with_message_102(app) {
        let token = app.token_for("demo", "owner@demo.test", "read", -5).await;
        let res = app.api(Method::GET, "/product", &token).checked().await.unwrap();
        assert!(res.headers()["www-authenticate"].to_str().unwrap().contains("expired"));
        let body = enveloped(res, StatusCode::UNAUTHORIZED).await;
        assert_eq!(error_record(&body, "102")["code"], "tokenExpired");
    }

    async fn authorization_is_checked_before_the_version(app) {
        let res = app.client.get(app.url("/product")).checked().await.unwrap();
        let body = enveloped(res, StatusCode::UNAUTHORIZED).await;
        error_record(&body, "100");
    }

    async fn a_missing_or_unsupported_version_is_400_with_message_101(app) {
        // The second merchant keeps legacy_clients off (the demo turns it on: see
        // tests/api/legacy_clients.rs).
        let token = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let res = app.client.get(app.url("/product")).bearer_auth(&token).checked().await.unwrap();
        let body = enveloped(res, StatusCode::BAD_REQUEST).await;
        assert_eq!(error_record(&body, "101")["code"], "validationError");
        assert!(body["error"]["details"][0].as_str().unwrap().contains("supported versions: 2.0"));
        let res = app
            .client
            .get(app.url("/product"))
            .bearer_auth(&token)
            .header("x-accept-version", "9.9")
            .checked()
            .await
            .unwrap();
        let body = enveloped(res, StatusCode::BAD_REQUEST).await;
        assert!(body["error"]["details"][0].as_str().unwrap().contains("\"9.9\""));
    }

    async fn an_unknown_route_is_404_with_message_104(app) {
        let token = app.owner_token().await;
        let res = app.api(Method::GET, "/no-such-resource", &token).checked().await.unwrap();
        let body = enveloped(res, StatusCode::NOT_FOUND).await;
        assert_eq!(error_record(&body, "104")["code"], "notFound");
        assert_eq!(body["error"]["details"][0], "No route GET /no-such-resource.");
    }

    async fn a_wrong_method_is_405_with_message_105(app) {
        let res = app.client.post(app.url("/status")).checked().await.unwrap();
        let body = enveloped(res, StatusCode::METHOD_NOT_ALLOWED).await;
        assert_eq!(error_record(&body, "105")["code"], "methodNotAllowed");
    }

    async fn a_body_over_the_limit_is_413_with_message_107(app) {
        let token = app.owner_token().await;
        let big = vec![b'x'; 1024 * 1024 + 1];
        let res = app
            .api(Method::POST, "/product", &token)
            .header("content-type", "application/json")
            .body(big)
            .checked()
            .await
            .unwrap();
        let body = enveloped(res, StatusCode::PAYLOAD_TOO_LARGE).await;
        assert_eq!(error_record(&body, "107")["code"], "payloadTooLarge");
    }

    async fn a_chunked_body_over_the_limit_is_413_without_being_buffered(app) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        // No Content-Length: the limit must hold while the body streams in.
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", app.port)).await.unwrap();
        let head = "POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
                    Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
        stream.write_all(head.as_bytes()).await.unwrap();
        let chunk = vec![b' '; 64 * 1024];
        for _ in 0..20 {
            let framed = [format!("{:x}\r\n", chunk.len()).as_bytes(), &chunk, b"\r\n"].concat();
            if stream.write_all(&framed).await.is_err() {
                break; // the server may close early once over the limit
            }
        }
        let _ = stream.write_all(b"0\r\n\r\n").await;
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer).await;
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 413"), "{text}");
        assert!(text.to_ascii_lowercase().contains("x-api-version: 2.0"), "{text}");
        assert!(text.contains("\"codeBaseVersion\":\"2.0\""), "{text}");
        assert!(text.contains("\"payloadTooLarge\""), "{text}");
    }

    async fn malformed_json_is_400_with_the_envelope(app) {
        let res = app
            .client
            .post(app.url("/oauth/token"))
            .header("content-type", "application/json")
            .body("{\"grant_type\": ")
            .checked()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);
        assert_eq!(res.headers()["x-api-version"], "2.0");
        assert_eq!(res.headers()["cache-control"], "no-store");
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["api"]["codeBaseVersion"], "2.0");
        assert!(body["api"]["executionTime_milliSeconds"].is_u64());
        // OAuth endpoints carry the RFC 6749 error string as the top-level `error`.
        assert_eq!(body["error"], "invalid_request");
        assert!(body["error_description"].as_str().unwrap().contains("not valid JSON"));
    }

    async fn a_scope_too_small_is_403_with_message_103(app) {
        let token = app.token_for("demo", "owner@demo.test", "read", 3600).await;
        let res = app.api(Method::POST, "/product", &token).checked().await.unwrap();
        let www = res.headers()["www-authenticate"].to_str().unwrap().to_owned();
        assert!(www.contains("insufficient_scope") && www.contains("scope=\"write\""), "{www}");
        let body = enveloped(res, StatusCode::FORBIDDEN).await;
        assert_eq!(error_record(&body, "103")["code"], "insufficientScope");
        let write = app.token_for("demo", "owner@demo.test", "write", 3600).await;
        let res = app.api(Method::DELETE, "/product", &write).checked().await.unwrap();
        enveloped(res, StatusCode::FORBIDDEN).await;
    }

    async fn a_panic_in_a_handler_is_500_with_message_120(app) {
        let res = get(&app, "/__test/panic").await;
        let body = enveloped(res, StatusCode::INTERNAL_SERVER_ERROR).await;
        let record = error_record(&body, "120");
        assert_eq!(record["code"], "internalError");
        assert!(!record["details"].as_str().unwrap().contains("panic"));
        // The worker survived: the next request is answered.
        enveloped(get(&app, "/status").await, StatusCode::OK).await;
    }

    async fn health_endpoints_answer_without_a_token(app) {
        let live = enveloped(get(&app, "/health/live").await, StatusCode::OK).await;
        assert_eq!(live["status"], "live");
        let ready = enveloped(get(&app, "/health/ready").await, StatusCode::OK).await;
        assert_eq!(ready["status"], "ready");
    }

    async fn readiness_fails_when_the_database_is_gone(app) {
        app.db.close().await;
        let body = enveloped(get(&app, "/health/ready").await, StatusCode::SERVICE_UNAVAILABLE).await;
        assert_eq!(error_record(&body, "121")["code"], "serviceUnavailable");
        enveloped(get(&app, "/health/live").await, StatusCode::OK).await;
    }

    async fn metrics_count_requests_by_route_pattern(app) {
        get(&app, "/status").await;
        get(&app, "/health/ready").await;
        app.client.post(app.url("/status")).checked().await.unwrap();
        get(&app, "/product/12345").await;
        let text = get(&app, "/metrics").await.text().await.unwrap();
        assert!(
            text.contains(r#"http_requests_total{method="GET",route="/status",status="200"} 1"#),
            "{text}"
        );
        assert!(text.contains(r#"http_requests_total{method="POST",route="/status",status="405"} 1"#));
        assert!(text.contains("http_request_duration_seconds_bucket{method=\"GET\",route=\"/status\""));
        assert!(!text.contains("12345"), "raw paths must not become labels");
        assert!(text.contains("db_query_duration_seconds"));
    }

    async fn responses_are_compressed_when_asked(app) {
        let res = app
            .client
            .get(app.url("/status"))
            .header("accept-encoding", "gzip")
            .checked()
            .await
            .unwrap();
        assert_eq!(res.headers().get("content-encoding").unwrap(), "gzip");
    }
}
