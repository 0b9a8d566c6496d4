//! Scopes and roles (DESIGN §5, examples §1.3 and §3.6; RFC 6750 §3.1 for the 403 challenge).
//!
//! - The scope gate: GET needs `read`, POST/PUT `write`, DELETE `admin`. It runs before routing,
//!   so routes that do not exist yet still prove it (a write token gets past it to a 404).
//! - The role caps a grant at consent: a guest asking for `admin` is granted `read`, and the
//!   token acts for the authorizing user's merchant, not the application's.
//! - An employee past their exit date can neither sign in nor use their tokens.
//! - Sign-in failures for one email are slowed down.

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::backend_tests;
use crate::contract::Checked;
use crate::helpers::TestApp;
use crate::oauth_endpoints::assert_oauth_error;
use crate::oauth_support::*;
use crate::oauth_token::grant;

async fn call(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
) -> (StatusCode, String, Value) {
    let res = app.api(method, path, token).checked().await.unwrap();
    let status = res.status();
    let www = res
        .headers()
        .get("www-authenticate")
        .map_or("", |v| v.to_str().unwrap())
        .to_owned();
    (status, www, res.json().await.unwrap())
}

fn access_of(body: &Value) -> String {
    body["access_token"].as_str().unwrap().to_owned()
}

/// The guest of the second merchant authorizing demo-pos (an application of another merchant).
fn guest_asking_admin() -> Authorize {
    Authorize {
        scope: "admin".into(),
        email: GUEST.0.into(),
        password: GUEST.1.into(),
        ..Authorize::demo(None)
    }
}

async fn guest_token(app: &TestApp) -> Value {
    let code = approved_code(app, &guest_asking_admin()).await;
    let (status, body) = exchange(app, &code, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

backend_tests! {
    async fn a_read_token_is_403_insufficient_scope_on_a_write(app) {
        let body = grant(&app, "read").await;
        assert_eq!(body["scope"], "read");
        let token = access_of(&body);
        let (status, www, body) = call(&app, Method::POST, "/product", &token).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert!(www.starts_with("Bearer") && www.contains("error=\"insufficient_scope\""), "{www}");
        assert!(www.contains("scope=\"write\""), "{www}");
        assert_eq!(body["api"]["message"]["error"]["103"]["code"], "insufficientScope", "{body}");
        assert_eq!(body["error"]["code"], 403);
        assert_eq!(call(&app, Method::GET, "/user", &token).await.0, StatusCode::OK);
    }

    async fn a_write_token_passes_the_gate_for_writes_but_not_for_deletes(app) {
        let token = access_of(&grant(&app, "write").await);
        // Past the scope gate: the handler itself answers (a body-less POST is 415).
        let (status, _, body) = call(&app, Method::POST, "/product", &token).await;
        assert_ne!(status, StatusCode::FORBIDDEN, "{body}");
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");
        let (status, www, body) = call(&app, Method::DELETE, "/product", &token).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert!(www.contains("insufficient_scope") && www.contains("scope=\"admin\""), "{www}");
        assert_eq!(body["api"]["message"]["error"]["103"]["statusCode"], 403, "{body}");
    }

    async fn a_guest_asking_for_admin_is_shown_and_granted_only_read(app) {
        let request = guest_asking_admin();
        let mut browser = Browser::new(&app);
        browser.open(&request.query()).await;
        let consent = browser.sign_in(&request).await;
        assert_eq!(consent.status, StatusCode::OK, "{}", consent.body);
        let listed: Vec<&str> = consent.body.split("<li>").skip(1).collect();
        assert_eq!(listed.len(), 1, "one scope listed: {}", consent.body);
        assert!(listed[0].contains("read"), "{}", listed[0]);
        assert!(consent.body.contains("admin"), "the page says what was asked: {}", consent.body);
        let answer = browser.post(&request, &[("decision", "approve")]).await;
        let code = answer.redirect_params()["code"].clone();
        let (status, body) = exchange(&app, &code, None).await;
        assert_eq!((status, body["scope"].as_str()), (StatusCode::OK, Some("read")), "{body}");
        let token = access_of(&body);
        assert_eq!(call(&app, Method::POST, "/product", &token).await.0, StatusCode::FORBIDDEN);
    }

    async fn a_token_acts_for_the_authorizing_user_s_merchant(app) {
        let second = app.tenant("second").id;
        let token = access_of(&guest_token(&app).await);
        let (status, _, user) = call(&app, Method::GET, "/user", &token).await;
        assert_eq!(status, StatusCode::OK, "{user}");
        assert_eq!(user["user"]["email"], GUEST.0);
        assert_eq!(user["user"]["employee"]["merchantId"], second);
        assert_eq!(user["user"]["employee"]["roleId"], 4);
        let (status, _, merchant) = call(&app, Method::GET, "/merchant", &token).await;
        assert_eq!(status, StatusCode::OK, "{merchant}");
        assert_eq!(merchant["merchant"]["id"], second);
        assert_eq!(merchant["merchant"]["name"], "Second Bakery Ltd");
        assert_ne!(second, app.tenant("demo").id);
    }

    async fn an_employee_past_their_exit_date_cannot_sign_in_and_their_grants_stop_working(app) {
        // Tokens and a code from before the exit. The access token is never used before the
        // update, so no cached lookup can answer for it.
        let (access, refresh_token) = login(&app).await;
        let code = approved_code(&app, &Authorize::demo(None)).await;
        sqlx::query("UPDATE employees SET exit_date = $1 WHERE email = $2")
            .bind(merchantd::domain::now_millis() - 1000)
            .bind(OWNER.0)
            .execute(&app.sql)
            .await
            .unwrap();
        let request = Authorize::demo(None);
        let mut browser = Browser::new(&app);
        browser.open(&request.query()).await;
        let again = browser.sign_in(&request).await;
        assert!(matches!(again.status.as_u16(), 200 | 401), "{}", again.status);
        assert!(!again.body.contains("decision"), "no consent page: {}", again.body);
        assert_eq!(browser.post(&request, &[("decision", "approve")]).await.location, None);
        assert_eq!(user_status(&app, &access).await, StatusCode::UNAUTHORIZED);
        let (status, body) = refresh(&app, &refresh_token).await;
        assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
        let (status, body) = exchange(&app, &code, None).await;
        assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
    }

    async fn repeated_wrong_passwords_for_one_email_are_slowed_down(app) {
        // The throttle keeps time in whole seconds and the first lockout is one second: start
        // early in a second so the attempts below share it.
        while merchantd::domain::now_millis() % 1000 > 300 {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let wrong = Authorize { password: "not-the-password".into(), ..Authorize::demo(None) };
        let mut browser = Browser::new(&app);
        browser.open(&wrong.query()).await;
        for attempt in 1..=5 {
            let page = browser.sign_in(&wrong).await;
            let status = page.status.as_u16();
            assert!(matches!(status, 200 | 401), "attempt {attempt}: {status}");
        }
        let right = Authorize::demo(None);
        let page = browser.sign_in(&right).await;
        assert_eq!(page.status, StatusCode::TOO_MANY_REQUESTS, "{}", page.body);
        assert!(page.body.contains("Too many"), "{}", page.body);
        assert!(page.body.contains("name=\"password\""), "the form to retry: {}", page.body);
        assert!(!page.body.contains("decision"), "no consent while throttled");
    }
}
