//! The endpoints beside the token endpoint (DESIGN §4, §7; examples §1.10).
//!
//! - RFC 7009: revocation. A refresh token takes its whole family down, an access token only
//!   itself; unknown tokens and other clients' tokens answer 200 and change nothing.
//! - RFC 7662: introspection, client-authenticated, `{"active": false}` for anything not live.
//! - RFC 8414: authorization server metadata.
//! - Observability and abuse: token metrics, and the 429 after repeated failed client
//!   authentications.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use reqwest::header::HeaderMap;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::helpers::TestApp;
use crate::oauth_support::*;
use crate::{backend_tests, backend_tests_with};

// Client-side helpers for the token, revoke and introspect endpoints, shared by the OAuth tests.

pub(crate) const TILL: (&str, &str) = ("second-till", "second-till-secret-0123");

/// `Authorization: Basic` as RFC 6749 §2.3.1 builds it: each part form-urlencoded first.
pub(crate) fn basic(id: &str, secret: &str) -> String {
    let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    format!(
        "Basic {}",
        STANDARD.encode(format!("{}:{}", enc(id), enc(secret)))
    )
}

/// POSTs a form with HTTP Basic client authentication, as OAuth libraries do.
pub(crate) async fn post_form(
    app: &TestApp,
    path: &str,
    client: (&str, &str),
    form: &[(&str, &str)],
) -> (StatusCode, Value, HeaderMap) {
    let res = app
        .client
        .post(app.url(path))
        .header("authorization", basic(client.0, client.1))
        .header(
            "content-type",
            "application/x-www-form-urlencoded;charset=UTF-8",
        )
        .body(serde_urlencoded::to_string(form).unwrap())
        .checked()
        .await
        .unwrap();
    let (status, headers) = (res.status(), res.headers().clone());
    (status, res.json().await.unwrap(), headers)
}

/// An RFC 6749 §5.2 error with the `api` envelope.
pub(crate) fn assert_oauth_error(status: StatusCode, body: &Value, want: StatusCode, error: &str) {
    assert_eq!(
        (status, body["error"].as_str()),
        (want, Some(error)),
        "{body}"
    );
    assert!(body["error_description"].is_string(), "{body}");
    assert_eq!(body["api"]["codeBaseVersion"], "2.0", "{body}");
    assert!(body["api"]["executionTime_milliSeconds"].is_u64(), "{body}");
}

const DEMO: (&str, &str) = (DEMO_CLIENT, DEMO_SECRET);

async fn revoke(app: &TestApp, client: (&str, &str), token: &str) -> StatusCode {
    let (status, body, headers) =
        post_form(app, "/oauth/revoke", client, &[("token", token)]).await;
    assert_eq!(body["api"]["codeBaseVersion"], "2.0", "{body}");
    assert_eq!(headers["cache-control"], "no-store");
    status
}

async fn introspect(app: &TestApp, client: (&str, &str), token: &str) -> Value {
    let (status, body, _) = post_form(app, "/oauth/introspect", client, &[("token", token)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// `{"active": false}` and nothing else besides the envelope (RFC 7662 §2.2).
fn assert_inactive(body: &Value) {
    let mut fields = body.as_object().unwrap().clone();
    assert!(fields.remove("api").is_some(), "{body}");
    assert_eq!(Value::Object(fields), json!({"active": false}));
}

pub(crate) fn pair_of(body: &Value) -> (String, String) {
    let field = |k: &str| {
        body[k]
            .as_str()
            .unwrap_or_else(|| panic!("{k} in {body}"))
            .to_owned()
    };
    (field("access_token"), field("refresh_token"))
}

// RFC 7009.
backend_tests! {
    async fn revoking_a_refresh_token_kills_its_family_s_access_tokens(app) {
        let (a0, r0) = login(&app).await;
        let (_, rotated) = refresh(&app, &r0).await;
        let (a1, r1) = pair_of(&rotated);
        // Both were used, so revocation must also reach the access-token cache.
        assert_eq!(user_status(&app, &a0).await, StatusCode::OK);
        assert_eq!(user_status(&app, &a1).await, StatusCode::OK);
        assert_eq!(revoke(&app, DEMO, &r1).await, StatusCode::OK);
        assert_eq!(user_status(&app, &a0).await, StatusCode::UNAUTHORIZED);
        assert_eq!(user_status(&app, &a1).await, StatusCode::UNAUTHORIZED);
        assert_eq!(refresh(&app, &r1).await.1["error"], "invalid_grant");
    }

    async fn revoking_an_access_token_kills_only_that_token(app) {
        let (a0, r0) = login(&app).await;
        let (_, rotated) = refresh(&app, &r0).await;
        let (a1, r1) = pair_of(&rotated);
        assert_eq!(user_status(&app, &a0).await, StatusCode::OK);
        assert_eq!(revoke(&app, DEMO, &a0).await, StatusCode::OK);
        assert_eq!(user_status(&app, &a0).await, StatusCode::UNAUTHORIZED);
        assert_eq!(user_status(&app, &a1).await, StatusCode::OK, "its sibling lives");
        assert_eq!(refresh(&app, &r1).await.0, StatusCode::OK, "the grant lives");
    }

    async fn revoking_an_unknown_token_answers_200(app) {
        assert_eq!(revoke(&app, DEMO, "mcd_rt_nobodyissuedthis").await, StatusCode::OK);
    }

    async fn revoking_another_client_s_token_answers_200_and_leaves_it_working(app) {
        let (access, refresh_token) = login(&app).await;
        assert_eq!(revoke(&app, TILL, &refresh_token).await, StatusCode::OK);
        assert_eq!(revoke(&app, TILL, &access).await, StatusCode::OK);
        assert_eq!(user_status(&app, &access).await, StatusCode::OK);
        assert_eq!(refresh(&app, &refresh_token).await.0, StatusCode::OK);
    }

    async fn revocation_needs_client_authentication(app) {
        let (access, _) = login(&app).await;
        let (status, body, _) =
            post_form(&app, "/oauth/revoke", (DEMO_CLIENT, "wrong"), &[("token", &access)]).await;
        assert_oauth_error(status, &body, StatusCode::UNAUTHORIZED, "invalid_client");
        assert_eq!(user_status(&app, &access).await, StatusCode::OK);
    }
}

// RFC 7662.
backend_tests! {
    async fn introspecting_a_live_access_token_describes_it(app) {
        let (access, _) = login(&app).await;
        let body = introspect(&app, DEMO, &access).await;
        assert_eq!(body["active"], true, "{body}");
        assert_eq!(body["scope"], "read write admin");
        assert_eq!(body["client_id"], DEMO_CLIENT);
        assert_eq!(body["token_type"], "Bearer");
        let now = merchantd::domain::now_millis() / 1000;
        let exp = body["exp"].as_i64().expect("exp is an integer");
        assert!((now + 3590..=now + 3600).contains(&exp), "exp {exp}, now {now}");
    }

    async fn introspecting_a_revoked_unknown_or_foreign_token_answers_only_active_false(app) {
        let (access, refresh_token) = login(&app).await;
        assert_inactive(&introspect(&app, TILL, &access).await);
        assert_inactive(&introspect(&app, DEMO, "mcd_at_nobodyissuedthis").await);
        assert_eq!(revoke(&app, DEMO, &refresh_token).await, StatusCode::OK);
        assert_inactive(&introspect(&app, DEMO, &access).await);
        assert_inactive(&introspect(&app, DEMO, &refresh_token).await);
    }

    async fn introspection_needs_client_authentication(app) {
        let (access, _) = login(&app).await;
        let wrong = (DEMO_CLIENT, "wrong");
        let form = [("token", access.as_str())];
        let (status, body, _) = post_form(&app, "/oauth/introspect", wrong, &form).await;
        assert_oauth_error(status, &body, StatusCode::UNAUTHORIZED, "invalid_client");
        assert!(body.get("active").is_none(), "{body}");
        let anonymous = app.client.post(app.url("/oauth/introspect")).form(&[("token", &access)]);
        let res = anonymous.checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    }
}

// RFC 8414, metrics and rate limits.
backend_tests! {
    async fn the_metadata_names_every_endpoint_and_capability(app) {
        let url = app.url("/.well-known/oauth-authorization-server");
        let res = app.client.get(url).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(res.headers()["x-api-version"], "2.0");
        let body: Value = res.json().await.unwrap();
        let issuer = body["issuer"].as_str().expect("issuer");
        assert!(issuer.starts_with("http") && !issuer.ends_with('/'), "{issuer}");
        for (field, path) in [
            ("authorization_endpoint", "/oauth/authorize"),
            ("token_endpoint", "/oauth/token"),
            ("revocation_endpoint", "/oauth/revoke"),
            ("introspection_endpoint", "/oauth/introspect"),
        ] {
            assert_eq!(body[field], format!("{issuer}{path}"), "{field}");
        }
        assert_eq!(body["response_types_supported"], json!(["code"]));
        assert_eq!(body["grant_types_supported"], json!(["authorization_code", "refresh_token"]));
        assert_eq!(body["code_challenge_methods_supported"], json!(["S256"]));
        assert_eq!(body["scopes_supported"], json!(["read", "write", "admin"]));
        assert_eq!(
            body["token_endpoint_auth_methods_supported"],
            json!(["client_secret_basic", "client_secret_post"])
        );
        assert_eq!(body["api"]["codeBaseVersion"], "2.0");
        assert_eq!(body["api"]["message"], json!({}));
        assert!(body["api"]["executionTime_milliSeconds"].is_u64());
    }

    async fn grants_and_failed_grants_are_counted_in_metrics(app) {
        let (_, refresh_token) = login(&app).await;
        refresh(&app, &refresh_token).await;
        let (status, _) = refresh(&app, "mcd_rt_nobodyissuedthis").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let text = app.metrics_text().await;
        for line in [
            r#"oauth_tokens_issued_total{grant_type="authorization_code"} 1"#,
            r#"oauth_tokens_issued_total{grant_type="refresh_token"} 1"#,
            r#"oauth_token_errors_total{error="invalid_grant"} 1"#,
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
    }
}

backend_tests_with! { |s| s.oauth_failed_auths_per_minute = 3;
    async fn failed_client_authentications_over_the_limit_get_429_with_retry_after(app) {
        // The limiter counts in whole-minute windows: start early in one so all requests share it.
        let second = merchantd::domain::now_millis() / 1000 % 60;
        if second > 50 {
            tokio::time::sleep(std::time::Duration::from_secs(61 - second as u64)).await;
        }
        let form = [("grant_type", "refresh_token"), ("refresh_token", "mcd_rt_x")];
        for attempt in 0..4 {
            let wrong = (DEMO_CLIENT, "wrong");
            let (status, body, _) = post_form(&app, "/oauth/token", wrong, &form).await;
            // The fourth may already be refused: three failures reach the limit.
            if attempt < 3 || status == StatusCode::UNAUTHORIZED {
                assert_oauth_error(status, &body, StatusCode::UNAUTHORIZED, "invalid_client");
            }
        }
        let (status, body, headers) = post_form(&app, "/oauth/token", DEMO, &form).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
        let retry_after: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=60).contains(&retry_after), "{retry_after}");
        assert_eq!(body["api"]["message"]["error"]["108"]["statusCode"], 429, "{body}");
        assert_eq!(body["api"]["codeBaseVersion"], "2.0");
        assert_eq!(body["error"]["code"], 429);
        assert!(body["api"]["executionTime_milliSeconds"].is_u64());
    }
}
