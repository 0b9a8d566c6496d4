//! The authorization code grant end to end (DESIGN §4, examples §1).
//!
//! - RFC 6749 §4.1.1–4.1.2.1: the authorize request, its refusals (shown as a page when the
//!   client or redirect URI cannot be trusted, redirected otherwise), the sign-in and consent
//!   pages and their CSRF protection.
//! - RFC 6749 §4.1.3 and §5.1: the token request as JSON with the client in the body and as a
//!   form with HTTP Basic, and the token response.
//! - RFC 6749 §5.2: token errors, with the `api` envelope.
//! - RFC 6749 §6 and RFC 9700 §4.14.2: refresh with rotation, the idempotent retry grace,
//!   family revocation on reuse, and scope narrowing.

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::helpers::TestApp;
use crate::oauth_endpoints::{assert_oauth_error, pair_of, post_form, TILL};
use crate::oauth_support::*;
use crate::{backend_tests, backend_tests_with};

/// A full flow asking for `scope`: the token response.
pub(crate) async fn grant(app: &TestApp, scope: &str) -> Value {
    let (verifier, challenge) = pkce_pair();
    let request = Authorize {
        scope: scope.into(),
        ..Authorize::demo(Some(challenge))
    };
    let code = approved_code(app, &request).await;
    let (status, body) = exchange(app, &code, Some(&verifier)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers.get(name).map_or("", |v| v.to_str().unwrap())
}

/// The framing and script protections every authorization page carries.
fn assert_protected_page(answer: &Answer) {
    assert!(header(&answer.headers, "content-type").starts_with("text/html"));
    assert_eq!(header(&answer.headers, "x-frame-options"), "DENY");
    let csp = header(&answer.headers, "content-security-policy");
    assert!(
        csp.contains("frame-ancestors 'none'") && csp.contains("default-src 'none'"),
        "{csp}"
    );
}

/// The demo authorize query with some parameters replaced.
fn demo_query(change: &[(&str, &str)]) -> String {
    let mut fields = Authorize::demo(None).request_fields();
    for (k, v) in change {
        fields.retain(|(name, _)| name != k);
        fields.push((k.to_string(), v.to_string()));
    }
    serde_urlencoded::to_string(fields).unwrap()
}

/// A JSON authorization-code request for `client`, with `extra` fields (null ones are dropped).
fn code_request(code: &str, client: (&str, &str), extra: Value) -> Value {
    let mut body = json!({"grant_type": "authorization_code", "code": code,
        "redirect_uri": DEMO_REDIRECT, "client_id": client.0, "client_secret": client.1});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body.as_object_mut().unwrap().retain(|_, v| !v.is_null());
    body
}

/// A form refresh with HTTP Basic, optionally asking for `scope`.
async fn refresh_as(
    app: &TestApp,
    client: (&str, &str),
    token: &str,
    scope: &str,
) -> (StatusCode, Value) {
    let mut form = vec![("grant_type", "refresh_token"), ("refresh_token", token)];
    form.extend((!scope.is_empty()).then_some(("scope", scope)));
    let (status, body, _) = post_form(app, "/oauth/token", client, &form).await;
    (status, body)
}

const DEMO: (&str, &str) = (DEMO_CLIENT, DEMO_SECRET);
const STATE: &str = "Zq4p/2026-03-28";

// RFC 6749 §4.1.2.1: refusals that must not redirect, and refusals that must.
backend_tests! {
    async fn an_unknown_client_id_is_a_400_page_naming_invalid_client_and_no_redirect(app) {
        let page = Browser::new(&app).open(&demo_query(&[("client_id", "nobody")])).await;
        assert_eq!((page.status, page.location.as_deref()), (StatusCode::BAD_REQUEST, None));
        assert!(page.body.contains("invalid_client"), "{}", page.body);
        assert_protected_page(&page);
    }

    async fn a_redirect_uri_not_registered_is_a_400_page_and_no_redirect(app) {
        for uri in [
            "http://127.0.0.1:8976/callback/",
            "http://127.0.0.1:8976/callback?next=1",
            "http://127.0.0.2:8976/callback",
            "http://localhost:8976/callback",
            "http://127.0.0.1:8977/cb", // second-till's, not demo-pos's
        ] {
            let page = Browser::new(&app).open(&demo_query(&[("redirect_uri", uri)])).await;
            let refused = (page.status, page.location.as_deref());
            assert_eq!(refused, (StatusCode::BAD_REQUEST, None), "{uri}");
            assert!(page.body.contains("redirect_uri_mismatch"), "{uri}: {}", page.body);
        }
    }

    // RFC 8252 §7.3: a native app's loopback redirect matches on any port (merchantd login
    // listens on whatever port it gets), and the code goes back to that port.
    async fn a_loopback_redirect_matches_on_any_port(app) {
        let uri = "http://127.0.0.1:51234/callback";
        let page = Browser::new(&app).open(&demo_query(&[("redirect_uri", uri)])).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        let answer = Browser::new(&app).open(&demo_query(&[("redirect_uri", uri), ("response_type", "token")])).await;
        assert_eq!(answer.status, StatusCode::FOUND);
        assert!(answer.location.as_deref().unwrap().starts_with(uri), "{:?}", answer.location);
    }

    async fn response_type_token_redirects_with_unsupported_response_type_and_the_state(app) {
        let answer = Browser::new(&app).open(&demo_query(&[("response_type", "token")])).await;
        assert_eq!(answer.status, StatusCode::FOUND);
        assert!(answer.location.as_deref().unwrap().starts_with(DEMO_REDIRECT));
        let params = answer.redirect_params();
        assert_eq!(params["error"], "unsupported_response_type");
        assert_eq!(params["state"], STATE);
        assert!(!params.contains_key("code"));
    }

    async fn an_unknown_scope_redirects_with_invalid_scope_a_description_and_the_state(app) {
        let answer = Browser::new(&app).open(&demo_query(&[("scope", "read superpowers")])).await;
        assert_eq!(answer.status, StatusCode::FOUND);
        let params = answer.redirect_params();
        assert_eq!(params["error"], "invalid_scope");
        assert!(params["error_description"].contains("superpowers"), "{params:?}");
        assert_eq!(params["state"], STATE);
    }

    async fn the_state_comes_back_exactly_as_sent(app) {
        let state = "Zq4p/2026-03-28 a+b&c=d%e?f";
        let request = Authorize { state: Some(state.into()), ..Authorize::demo(None) };
        let answer = Browser::new(&app).authorize(&request, "approve").await;
        assert_eq!(answer.redirect_params()["state"], state);
        assert!(!answer.location.unwrap().contains(' '), "the redirect is a valid URL");
    }

    async fn deny_redirects_with_access_denied_and_the_state_and_no_code(app) {
        let answer = Browser::new(&app).authorize(&Authorize::demo(None), "deny").await;
        assert_eq!(answer.status, StatusCode::FOUND);
        assert!(answer.location.as_deref().unwrap().starts_with(DEMO_REDIRECT));
        let params = answer.redirect_params();
        assert_eq!((params["error"].as_str(), params["state"].as_str()), ("access_denied", STATE));
        assert!(!params.contains_key("code"));
    }

    async fn a_form_post_with_a_wrong_or_missing_csrf_token_is_400_and_gives_no_code(app) {
        let request = Authorize::demo(None);
        // Missing: a cross-site post carries neither the token nor our cookie.
        let mut form = request.request_fields();
        form.extend([("email".into(), OWNER.0.into()), ("password".into(), OWNER.1.into())]);
        let res = app.client.post(app.url("/oauth/authorize")).form(&form).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);
        // Wrong, at sign-in and at consent.
        let mut browser = Browser::new(&app);
        browser.open(&request.query()).await;
        let genuine = browser.csrf.clone();
        browser.csrf = "forged".into();
        let answer = browser.sign_in(&request).await;
        assert_eq!((answer.status, answer.location), (StatusCode::BAD_REQUEST, None));
        browser.csrf = genuine;
        assert_eq!(browser.sign_in(&request).await.status, StatusCode::OK);
        let genuine = browser.csrf.clone();
        browser.csrf = "forged".into();
        let answer = browser.post(&request, &[("decision", "approve")]).await;
        assert_eq!((answer.status, answer.location), (StatusCode::BAD_REQUEST, None));
        // The refusals were about the token alone: with it, the same consent gives a code.
        browser.csrf = genuine;
        let answer = browser.post(&request, &[("decision", "approve")]).await;
        assert!(answer.redirect_params().contains_key("code"));
    }

    async fn a_wrong_password_shows_the_sign_in_page_again_and_starts_no_session(app) {
        let request = Authorize { password: "not-the-password".into(), ..Authorize::demo(None) };
        let mut browser = Browser::new(&app);
        browser.open(&request.query()).await;
        let again = browser.sign_in(&request).await;
        assert!(matches!(again.status.as_u16(), 200 | 401), "{}", again.status);
        assert!(again.body.contains("name=\"password\""), "{}", again.body);
        assert!(!again.body.contains("not-the-password"));
        let cookies: Vec<_> = again.headers.get_all("set-cookie").iter().collect();
        let session = cookies.iter().find(|c| c.to_str().unwrap().starts_with("mcd_session"));
        assert_eq!(session, None);
        let answer = browser.post(&request, &[("decision", "approve")]).await;
        assert_eq!(answer.location, None, "no session, no code");
    }

    async fn the_pages_have_the_named_inputs_and_buttons_and_forbid_framing(app) {
        let request = Authorize::demo(None);
        let mut browser = Browser::new(&app);
        let sign_in = browser.open(&request.query()).await;
        assert_protected_page(&sign_in);
        for needle in ["name=\"email\"", "name=\"password\"", "name=\"csrf_token\""] {
            assert!(sign_in.body.contains(needle), "{needle} in {}", sign_in.body);
        }
        assert!(!sign_in.body.contains("<script"), "the pages work without JavaScript");
        let consent = browser.sign_in(&request).await;
        assert_protected_page(&consent);
        let buttons = ["name=\"decision\" value=\"approve\"", "name=\"decision\" value=\"deny\""];
        for needle in buttons.iter().chain(&["Demo POS"]) {
            assert!(consent.body.contains(needle), "{needle} in {}", consent.body);
        }
    }
}

// RFC 6749 §4.1.3, §5.1: the token request in both encodings and the token response.
backend_tests! {
    async fn a_json_exchange_with_the_client_in_the_body_answers_the_token_response(app) {
        let (verifier, challenge) = pkce_pair();
        let code = approved_code(&app, &Authorize::demo(Some(challenge))).await;
        let request = code_request(&code, DEMO, json!({"code_verifier": verifier}));
        let (status, body, headers) = token_json(&app, request).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(header(&headers, "cache-control"), "no-store");
        assert_eq!(body["token_type"], "Bearer");
        assert_eq!(body["expires_in"], 3600, "the configured lifetime, in whole seconds");
        assert_eq!(body["scope"], "read write admin");
        assert!(body["access_token"].as_str().unwrap().starts_with("mcd_at_"));
        assert!(body["refresh_token"].as_str().unwrap().starts_with("mcd_rt_"));
        assert_eq!(body["api"]["codeBaseVersion"], "2.0");
        assert_eq!(body["api"]["message"], json!({}));
        assert!(body["api"]["executionTime_milliSeconds"].is_u64());
        assert_eq!(user_status(&app, body["access_token"].as_str().unwrap()).await, StatusCode::OK);
    }

    async fn a_form_exchange_with_http_basic_works(app) {
        let (verifier, challenge) = pkce_pair();
        let code = approved_code(&app, &Authorize::demo(Some(challenge))).await;
        let form = [("grant_type", "authorization_code"), ("code", code.as_str()),
            ("redirect_uri", DEMO_REDIRECT), ("code_verifier", verifier.as_str())];
        let (status, body, headers) = post_form(&app, "/oauth/token", DEMO, &form).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(header(&headers, "cache-control"), "no-store");
        assert_eq!(body["token_type"], "Bearer");
        assert_eq!(user_status(&app, body["access_token"].as_str().unwrap()).await, StatusCode::OK);
    }
}

// RFC 6749 §5.2: token errors.
backend_tests! {
    async fn a_wrong_client_secret_is_401_invalid_client_challenging_basic_if_basic_was_used(app) {
        let code = approved_code(&app, &Authorize::demo(None)).await;
        let request = code_request(&code, (DEMO_CLIENT, "wrong"), json!({}));
        let (status, body, headers) = token_json(&app, request).await;
        assert_oauth_error(status, &body, StatusCode::UNAUTHORIZED, "invalid_client");
        assert!(!header(&headers, "www-authenticate").starts_with("Basic"));
        let form = [("grant_type", "authorization_code"), ("code", code.as_str())];
        let wrong = (DEMO_CLIENT, "wrong");
        let (status, body, headers) = post_form(&app, "/oauth/token", wrong, &form).await;
        assert_oauth_error(status, &body, StatusCode::UNAUTHORIZED, "invalid_client");
        assert!(header(&headers, "www-authenticate").starts_with("Basic"), "{headers:?}");
    }

    async fn an_unknown_grant_type_is_unsupported_grant_type(app) {
        let form = [("grant_type", "password"), ("username", OWNER.0), ("password", OWNER.1)];
        let (status, body, _) = post_form(&app, "/oauth/token", DEMO, &form).await;
        assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "unsupported_grant_type");
    }

    async fn a_missing_code_is_invalid_request(app) {
        let request = code_request("", DEMO, json!({"code": null}));
        let (status, body, _) = token_json(&app, request).await;
        assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_request");
    }

    async fn a_malformed_json_body_is_400_invalid_request_with_the_envelope(app) {
        let res = app.client.post(app.url("/oauth/token"))
            .header("content-type", "application/json")
            .body(r#"{"grant_type": "authorization_code", "#)
            .checked().await.unwrap();
        assert_eq!(header(res.headers(), "x-api-version"), "2.0");
        let status = res.status();
        let body: Value = res.json().await.unwrap();
        assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_request");
    }

    async fn a_redirect_uri_differing_from_the_authorize_step_is_invalid_grant(app) {
        let code = approved_code(&app, &Authorize::demo(None)).await;
        for redirect in [json!("http://127.0.0.1:8976/callback/"), Value::Null] {
            let request = code_request(&code, DEMO, json!({"redirect_uri": redirect}));
            let (status, body, _) = token_json(&app, request).await;
            assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
        }
    }

    async fn a_reused_code_is_invalid_grant_and_revokes_its_tokens(app) {
        let code = approved_code(&app, &Authorize::demo(None)).await;
        let (status, first) = exchange(&app, &code, None).await;
        assert_eq!(status, StatusCode::OK, "{first}");
        let (access, refresh_token) = pair_of(&first);
        // Used once, so the revocation must also reach the access-token cache.
        assert_eq!(user_status(&app, &access).await, StatusCode::OK);
        let (status, body) = exchange(&app, &code, None).await;
        assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
        assert_eq!(user_status(&app, &access).await, StatusCode::UNAUTHORIZED);
        let (status, body) = refresh(&app, &refresh_token).await;
        assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
    }

    async fn a_code_issued_to_one_client_is_invalid_grant_for_another(app) {
        let (verifier, challenge) = pkce_pair();
        let code = approved_code(&app, &Authorize::demo(Some(challenge))).await;
        let request = code_request(&code, TILL, json!({"code_verifier": verifier}));
        let (status, body, _) = token_json(&app, request).await;
        assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
    }
}

backend_tests_with! { |s| s.auth_code_ttl_secs = 1;
    async fn an_expired_code_is_invalid_grant(app) {
        let code = approved_code(&app, &Authorize::demo(None)).await;
        tokio::time::sleep(std::time::Duration::from_millis(2200)).await;
        let (status, body) = exchange(&app, &code, None).await;
        assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
    }
}

// RFC 6749 §6, RFC 9700 §4.14.2: rotation, the retry grace and reuse detection.
backend_tests! {
    async fn a_refresh_rotates_the_pair_and_the_old_access_token_lives_until_expiry(app) {
        let (a0, r0) = login(&app).await;
        let (status, body) = refresh(&app, &r0).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (a1, r1) = pair_of(&body);
        assert!(a1 != a0 && r1 != r0 && r1.starts_with("mcd_rt_"));
        assert_eq!(body["token_type"], "Bearer");
        assert_eq!(body["scope"], "read write admin");
        assert_eq!(user_status(&app, &a0).await, StatusCode::OK);
        assert_eq!(user_status(&app, &a1).await, StatusCode::OK);
    }

    async fn the_old_refresh_token_within_the_grace_returns_exactly_the_same_pair(app) {
        let (_, r0) = login(&app).await;
        let (_, first) = refresh(&app, &r0).await;
        let (status, retry) = refresh(&app, &r0).await;
        assert_eq!(status, StatusCode::OK, "{retry}");
        assert_eq!(pair_of(&retry), pair_of(&first), "a retry, not a second branch");
        let (a1, r1) = pair_of(&first);
        assert_eq!(user_status(&app, &a1).await, StatusCode::OK);
        assert_eq!(refresh(&app, &r1).await.0, StatusCode::OK, "the successor stays usable");
    }

    // Inside the grace, but r0's successor was already rotated: not a retry.
    async fn a_grandparent_refresh_token_is_invalid_grant_and_revokes_the_family(app) {
        let (a0, r0) = login(&app).await;
        let (a1, r1) = pair_of(&refresh(&app, &r0).await.1);
        let (a2, r2) = pair_of(&refresh(&app, &r1).await.1);
        assert_eq!(user_status(&app, &a2).await, StatusCode::OK);
        let (status, body) = refresh(&app, &r0).await;
        assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
        for access in [&a0, &a1, &a2] {
            assert_eq!(user_status(&app, access).await, StatusCode::UNAUTHORIZED);
        }
        assert_eq!(refresh(&app, &r2).await.1["error"], "invalid_grant");
    }

    async fn a_refresh_may_narrow_the_scope_and_a_narrowed_token_cannot_write(app) {
        let (_, r0) = login(&app).await;
        let (status, body) = refresh_as(&app, DEMO, &r0, "read").await;
        assert_eq!((status, &body["scope"]), (StatusCode::OK, &json!("read")), "{body}");
        let (access, _) = pair_of(&body);
        let res = app.api(Method::POST, "/product", &access).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::FORBIDDEN);
    }

    async fn a_refresh_asking_wider_than_the_grant_is_invalid_scope_and_burns_nothing(app) {
        let (_, r0) = pair_of(&grant(&app, "read").await);
        let (status, body) = refresh_as(&app, DEMO, &r0, "read write").await;
        assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_scope");
        let (status, body) = refresh(&app, &r0).await;
        assert_eq!((status, &body["scope"]), (StatusCode::OK, &json!("read")), "{body}");
    }

    async fn a_refresh_token_presented_by_another_client_is_invalid_grant(app) {
        let (_, r0) = login(&app).await;
        let (status, body) = refresh_as(&app, TILL, &r0, "").await;
        assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
    }
}

backend_tests_with! { |s| s.refresh_retry_grace_secs = 1;
    async fn the_old_refresh_token_after_the_grace_is_invalid_grant_and_revokes_the_family(app) {
        let (a0, r0) = login(&app).await;
        let (a1, r1) = pair_of(&refresh(&app, &r0).await.1);
        assert_eq!(user_status(&app, &a1).await, StatusCode::OK);
        tokio::time::sleep(std::time::Duration::from_millis(2200)).await;
        let (status, body) = refresh(&app, &r0).await;
        assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
        assert_eq!(user_status(&app, &a0).await, StatusCode::UNAUTHORIZED);
        assert_eq!(user_status(&app, &a1).await, StatusCode::UNAUTHORIZED, "the newest too");
        assert_eq!(refresh(&app, &r1).await.1["error"], "invalid_grant");
    }
}

backend_tests_with! { |s| s.access_token_ttl_secs = 1;
    async fn an_expired_access_token_is_401_with_message_102_and_a_refresh_recovers(app) {
        let (access, r0) = login(&app).await;
        tokio::time::sleep(std::time::Duration::from_millis(2200)).await;
        let res = app.api(Method::GET, "/user", &access).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
        assert!(header(res.headers(), "www-authenticate").contains("invalid_token"));
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["api"]["message"]["error"]["102"]["code"], "tokenExpired", "{body}");
        assert_eq!(refresh(&app, &r0).await.0, StatusCode::OK);
    }
}
