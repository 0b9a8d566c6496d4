//! The connected-applications page, `/account` (issue 13): an employee sees the applications
//! holding live tokens for them and revokes one; an owner also manages every other employee's
//! grants; nobody reaches another merchant's. The fixtures give two merchants: `demo` (an
//! owner) and `second` (an owner and a guest).

use std::time::{Duration, Instant};

use merchantd::crypto;
use merchantd::domain::now_millis;
use merchantd::domain::oauth::token::{NewFamily, NewPair};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::backend_tests;
use crate::contract::Checked;
use crate::helpers::TestApp;
use crate::oauth_support::{refresh, token_json, user_status, Authorize, Browser, GUEST, OWNER};

const SECOND_OWNER: (&str, &str) = ("owner@second.test", "second-owner-password");
const SECOND_TILL: (&str, &str) = ("second-till", "second-till-secret-0123");

/// A grant made straight in the store, as a code exchange would leave it.
struct Grant {
    family: String,
    access: String,
    refresh: String,
}

/// A live grant of `client_id` (any merchant's application) for `email` of merchant `key`.
async fn grant(app: &TestApp, key: &str, email: &str, client_id: &str, scope: &str) -> Grant {
    let tenant = app.tenant(key);
    let application_id = app
        .tenants
        .iter()
        .find_map(|t| t.applications.get(client_id).copied())
        .unwrap_or_else(|| panic!("no application {client_id}"));
    let family = NewFamily {
        id: uuid::Uuid::new_v4().to_string(),
        merchant_id: tenant.id,
        employee_id: tenant.users[email],
        application_id,
        scope: scope.to_owned(),
    };
    let (access, refresh) = (
        crypto::random_token("mcd_at_"),
        crypto::random_token("mcd_rt_"),
    );
    let pair = NewPair {
        access_hash: crypto::sha256_hex(&access),
        access_expires_at: now_millis() + 3_600_000,
        access_scope: scope.to_owned(),
        refresh_hash: crypto::sha256_hex(&refresh),
        refresh_expires_at: now_millis() + 86_400_000,
    };
    app.db
        .issue_family_pair(&family, &pair)
        .await
        .expect("store the grant");
    Grant {
        family: family.id,
        access,
        refresh,
    }
}

/// A browser signed in on `/account` as `who`.
async fn signed_in(app: &TestApp, who: (&str, &str)) -> Browser {
    let mut browser = Browser::new(app);
    let form = browser.get("/account").await;
    assert_eq!(form.status, StatusCode::OK, "{}", form.body);
    assert!(form.body.contains("name=\"password\""), "{}", form.body);
    let csrf = browser.csrf.clone();
    let answer = browser
        .post_form(
            "/account",
            &[("csrf_token", &csrf), ("email", who.0), ("password", who.1)],
        )
        .await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    assert_eq!(answer.location.as_deref(), Some("/account"));
    // Where a browser goes next: the page, whose forms carry the session's CSRF token.
    let page = browser.get("/account").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    browser
}

/// A grant as the page shows it.
#[derive(Debug)]
struct Shown {
    application: String,
    family: String,
    scopes: String,
    last_used: String,
    /// The employee it acts for, on an owner's list of other employees' grants.
    for_employee: Option<String>,
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = text.find(start)? + start.len();
    let len = text[from..].find(end)?;
    Some(&text[from..from + len])
}

fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// The grants on a listing page, in order.
fn shown(body: &str) -> Vec<Shown> {
    body.split("<li class=\"grant\">")
        .skip(1)
        .map(|item| Shown {
            application: between(item, "<strong class=\"application\">", "</strong>")
                .unwrap_or_default()
                .to_owned(),
            family: between(item, "name=\"family\" value=\"", "\"")
                .unwrap_or_default()
                .to_owned(),
            scopes: strip_tags(between(item, "class=\"scopes\">", "</dd>").unwrap_or_default()),
            last_used: between(item, "class=\"last-used\">", "</dd>")
                .unwrap_or_default()
                .to_owned(),
            for_employee: between(item, "<dt>For</dt><dd>", "</dd>").map(str::to_owned),
        })
        .collect()
}

async fn listing(browser: &mut Browser) -> Vec<Shown> {
    let page = browser.get("/account").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(
        page.body.contains("Sign out"),
        "not signed in: {}",
        page.body
    );
    shown(&page.body)
}

async fn revoke(browser: &mut Browser, family: &str) -> crate::oauth_support::Answer {
    let csrf = browser.csrf.clone();
    browser
        .post_form(
            "/account/revoke",
            &[("csrf_token", &csrf), ("family", family)],
        )
        .await
}

async fn product_status(app: &TestApp, access: &str) -> StatusCode {
    app.api(Method::GET, "/product", access)
        .checked()
        .await
        .expect("GET /product")
        .status()
}

async fn refresh_with(app: &TestApp, client: (&str, &str), token: &str) -> StatusCode {
    let (status, _, _) = token_json(
        app,
        json!({"grant_type": "refresh_token", "refresh_token": token,
               "client_id": client.0, "client_secret": client.1}),
    )
    .await;
    status
}

backend_tests! {
    async fn the_page_lists_each_live_grant_with_its_name_scopes_and_times(app) {
        let pos = grant(&app, "demo", OWNER.0, "demo-pos", "read write").await;
        // Not grants any more: a revoked family, and one whose only token has expired.
        let revoked = grant(&app, "demo", OWNER.0, "demo-pos", "read").await;
        let mut owner = signed_in(&app, OWNER).await;
        assert_eq!(revoke(&mut owner, &revoked.family).await.status, StatusCode::SEE_OTHER);
        let expired = NewFamily {
            id: uuid::Uuid::new_v4().to_string(),
            merchant_id: app.tenant("demo").id,
            employee_id: app.tenant("demo").users[OWNER.0],
            application_id: app.tenant("demo").applications["demo-pos"],
            scope: "read".into(),
        };
        app.db
            .issue_access_token(&expired, &crypto::sha256_hex("mcd_at_gone"), now_millis() - 1_000)
            .await
            .unwrap();

        let page = owner.get("/account").await;
        assert!(page.body.contains("owner@demo.test"), "{}", page.body);
        assert!(page.body.contains("Demo Coffee Ltd"), "{}", page.body);
        assert!(page.body.contains(">Authorized<"), "{}", page.body);
        assert!(page.body.contains("UTC</time>"), "{}", page.body);
        let grants = shown(&page.body);
        assert_eq!(grants.len(), 1, "{grants:?}");
        assert_eq!(grants[0].application, "Demo POS");
        assert_eq!(grants[0].family, pos.family);
        assert_eq!(grants[0].scopes, "read write");
        assert_eq!(grants[0].last_used, "never");
        assert_eq!(grants[0].for_employee, None);

        // A use is recorded off the request path, so it shows shortly after.
        assert_eq!(product_status(&app, &pos.access).await, StatusCode::OK);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let grants = listing(&mut owner).await;
            if grants[0].last_used.contains("<time") {
                break;
            }
            assert!(Instant::now() < deadline, "last used never updated: {grants:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn revoking_one_grant_leaves_the_others_working(app) {
        let pos = grant(&app, "demo", OWNER.0, "demo-pos", "read write admin").await;
        let till = grant(&app, "demo", OWNER.0, "second-till", "read").await;
        // Both tokens are in the cache before the revocation.
        assert_eq!(product_status(&app, &pos.access).await, StatusCode::OK);
        assert_eq!(product_status(&app, &till.access).await, StatusCode::OK);
        let mut owner = signed_in(&app, OWNER).await;
        assert_eq!(listing(&mut owner).await.len(), 2);

        let answer = revoke(&mut owner, &pos.family).await;
        assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
        assert_eq!(answer.location.as_deref(), Some("/account?revoked=1"));
        let page = owner.get("/account?revoked=1").await;
        assert!(page.body.contains("Access revoked"), "{}", page.body);
        let grants = shown(&page.body);
        assert_eq!(grants.len(), 1, "{grants:?}");
        assert_eq!(grants[0].application, "Second Till");

        // At once: the next call is refused and the refresh token buys nothing.
        assert_eq!(product_status(&app, &pos.access).await, StatusCode::UNAUTHORIZED);
        let (status, body) = refresh(&app, &pos.refresh).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["error"], "invalid_grant", "{body}");
        // The other grant is untouched.
        assert_eq!(product_status(&app, &till.access).await, StatusCode::OK);
        assert_eq!(refresh_with(&app, SECOND_TILL, &till.refresh).await, StatusCode::OK);
        // Revoking it again finds nothing.
        assert_eq!(revoke(&mut owner, &pos.family).await.status, StatusCode::NOT_FOUND);
    }

    async fn a_non_owner_sees_and_revokes_only_their_own_grants(app) {
        let mine = grant(&app, "second", GUEST.0, "demo-pos", "read").await;
        let owners = grant(&app, "second", SECOND_OWNER.0, "demo-pos", "read write").await;
        let mut guest = signed_in(&app, GUEST).await;
        let page = guest.get("/account").await;
        assert!(!page.body.contains(&owners.family), "{}", page.body);
        assert!(!page.body.contains("Other employees"), "{}", page.body);
        let grants = shown(&page.body);
        assert_eq!(grants.len(), 1, "{grants:?}");
        assert_eq!(grants[0].family, mine.family);

        let answer = revoke(&mut guest, &owners.family).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{}", answer.body);
        assert!(!answer.body.contains(&owners.family), "{}", answer.body);
        assert_eq!(user_status(&app, &owners.access).await, StatusCode::OK);
        assert_eq!(refresh(&app, &owners.refresh).await.0, StatusCode::OK);

        assert_eq!(revoke(&mut guest, &mine.family).await.status, StatusCode::SEE_OTHER);
        assert_eq!(user_status(&app, &mine.access).await, StatusCode::UNAUTHORIZED);
    }

    async fn an_owner_sees_and_revokes_an_employees_grant(app) {
        let guests = grant(&app, "second", GUEST.0, "demo-pos", "read").await;
        let own = grant(&app, "second", SECOND_OWNER.0, "second-till", "read write admin").await;
        let mut owner = signed_in(&app, SECOND_OWNER).await;
        let page = owner.get("/account").await;
        assert!(page.body.contains("Other employees' applications"), "{}", page.body);
        let grants = shown(&page.body);
        assert_eq!(grants.len(), 2, "{grants:?}");
        assert_eq!(grants[0].family, own.family);
        assert_eq!(grants[0].for_employee, None);
        assert_eq!(grants[1].family, guests.family);
        assert_eq!(grants[1].application, "Demo POS");
        assert_eq!(grants[1].for_employee.as_deref(), Some("guest@second.test"));

        let answer = revoke(&mut owner, &guests.family).await;
        assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
        assert_eq!(user_status(&app, &guests.access).await, StatusCode::UNAUTHORIZED);
        assert_eq!(refresh(&app, &guests.refresh).await.1["error"], "invalid_grant");
        assert_eq!(user_status(&app, &own.access).await, StatusCode::OK);
        let grants = listing(&mut owner).await;
        assert_eq!(grants.len(), 1, "{grants:?}");
    }

    async fn another_merchants_grant_is_refused_like_an_unknown_one(app) {
        let theirs = grant(&app, "second", SECOND_OWNER.0, "demo-pos", "read write").await;
        let mut owner = signed_in(&app, OWNER).await;
        let page = owner.get("/account").await;
        assert!(!page.body.contains(&theirs.family), "{}", page.body);
        assert!(shown(&page.body).is_empty(), "{}", page.body);

        let foreign = revoke(&mut owner, &theirs.family).await;
        let unknown = revoke(&mut owner, &uuid::Uuid::new_v4().to_string()).await;
        let malformed = revoke(&mut owner, &"x".repeat(500)).await;
        for answer in [&foreign, &unknown, &malformed] {
            assert_eq!(answer.status, StatusCode::NOT_FOUND, "{}", answer.body);
        }
        assert_eq!(foreign.body, unknown.body);
        assert_eq!(foreign.body, malformed.body);
        assert_eq!(user_status(&app, &theirs.access).await, StatusCode::OK);
        assert_eq!(refresh(&app, &theirs.refresh).await.0, StatusCode::OK);
    }

    async fn a_form_post_with_a_wrong_or_missing_csrf_token_is_refused(app) {
        let pos = grant(&app, "demo", OWNER.0, "demo-pos", "read").await;
        let mut owner = signed_in(&app, OWNER).await;
        for form in [
            vec![("csrf_token", "wrong"), ("family", pos.family.as_str())],
            vec![("family", pos.family.as_str())],
        ] {
            let answer = owner.post_form("/account/revoke", &form).await;
            assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.body);
            assert!(answer.body.contains("CSRF"), "{}", answer.body);
        }
        assert_eq!(user_status(&app, &pos.access).await, StatusCode::OK);
        let answer = owner.post_form("/account/sign-out", &[("csrf_token", "wrong")]).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.body);
        assert_eq!(listing(&mut owner).await.len(), 1);

        // A sign-in form posted by another site carries no matching cookie.
        let mut stranger = Browser::new(&app);
        let answer = stranger
            .post_form(
                "/account",
                &[("csrf_token", "forged"), ("email", OWNER.0), ("password", OWNER.1)],
            )
            .await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.body);
        assert_eq!(stranger.cookie("mcd_account"), None);

        // A CSRF cookie planted by a sibling site (same site, so SameSite does not stop it)
        // does not stand in for the session's own token.
        let planted = "a".repeat(43);
        owner.set_cookie("mcd_account_csrf", &planted);
        let answer = owner
            .post_form("/account/revoke", &[("csrf_token", &planted), ("family", pos.family.as_str())])
            .await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.body);
        assert_eq!(user_status(&app, &pos.access).await, StatusCode::OK);
    }

    async fn a_nul_character_in_a_form_is_an_unknown_value_not_an_error(app) {
        let mut browser = Browser::new(&app);
        browser.get("/account").await;
        let csrf = browser.csrf.clone();
        let answer = browser
            .post_form("/account", &[("csrf_token", &csrf), ("email", "owner\u{0}@demo.test"), ("password", OWNER.1)])
            .await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{}", answer.body);
        let pos = grant(&app, "demo", OWNER.0, "demo-pos", "read").await;
        let mut owner = signed_in(&app, OWNER).await;
        let answer = revoke(&mut owner, "fam\u{0}ily").await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{}", answer.body);
        assert_eq!(user_status(&app, &pos.access).await, StatusCode::OK);
        // The authorization server's own look-ups: an unknown client, never a 500.
        let res = app.client.get(app.url("/oauth/authorize?response_type=code&client_id=%00&scope=read")).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);
        let res = app.client.get(app.url("/login?client_id=%00")).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::NOT_FOUND);
        let res = app.client.post(app.url("/oauth/token"))
            .form(&[("grant_type", "refresh_token"), ("refresh_token", "x"), ("client_id", "demo\u{0}"), ("client_secret", "s")])
            .checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    }

    async fn a_wrong_password_shows_the_form_again(app) {
        let mut browser = Browser::new(&app);
        browser.get("/account").await;
        let csrf = browser.csrf.clone();
        let answer = browser
            .post_form(
                "/account",
                &[("csrf_token", &csrf), ("email", OWNER.0), ("password", "not-it")],
            )
            .await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{}", answer.body);
        assert!(answer.body.contains("name=\"password\""), "{}", answer.body);
        assert!(answer.body.contains("not right"), "{}", answer.body);
        assert!(answer.body.contains("value=\"owner@demo.test\""), "{}", answer.body);
        assert_eq!(browser.cookie("mcd_account"), None);
        let page = browser.get("/account").await;
        assert!(!page.body.contains("Sign out"), "{}", page.body);
    }

    async fn failures_on_the_account_page_slow_the_authorize_page_too(app) {
        let mut browser = Browser::new(&app);
        browser.get("/account").await;
        for _ in 0..5 {
            let csrf = browser.csrf.clone();
            let answer = browser
                .post_form(
                    "/account",
                    &[("csrf_token", &csrf), ("email", OWNER.0), ("password", "guess")],
                )
                .await;
            assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{}", answer.body);
        }
        let request = Authorize::demo(None);
        let mut authorize = Browser::new(&app);
        authorize.open(&request.query()).await;
        let answer = authorize.sign_in(&request).await;
        assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS, "{}", answer.body);
    }

    async fn the_pages_forbid_framing_and_carry_the_csp_and_strict_cookies(app) {
        let mut browser = Browser::new(&app);
        let form = browser.get("/account").await;
        let csrf_cookie = cookie_line(&form.headers, "mcd_account_csrf");
        let csrf = browser.csrf.clone();
        let signed = browser
            .post_form(
                "/account",
                &[("csrf_token", &csrf), ("email", OWNER.0), ("password", OWNER.1)],
            )
            .await;
        let session_cookie = cookie_line(&signed.headers, "mcd_account");
        for line in [&csrf_cookie, &session_cookie] {
            for attribute in ["HttpOnly", "SameSite=Strict", "Path=/account"] {
                assert!(line.contains(attribute), "{line}");
            }
            // Served over http here; over https it would be Secure.
            assert!(!line.contains("Secure"), "{line}");
        }
        assert!(session_cookie.contains("Max-Age=1800"), "{session_cookie}");
        let listing = browser.get("/account").await;
        assert!(listing.body.contains("Sign out"), "{}", listing.body);
        for page in [&form, &listing] {
            let csp = page.headers["content-security-policy"].to_str().unwrap();
            for directive in [
                "default-src 'none'",
                "frame-ancestors 'none'",
                "form-action 'self'",
                "base-uri 'none'",
            ] {
                assert!(csp.contains(directive), "{csp}");
            }
            assert!(!csp.contains("script-src"), "{csp}");
            assert_eq!(page.headers["x-frame-options"], "DENY");
            assert_eq!(page.headers["cache-control"], "no-store");
            assert_eq!(page.headers["x-content-type-options"], "nosniff");
            assert!(!page.body.contains("<script"), "{}", page.body);
        }
    }

    async fn signing_out_ends_the_session_on_the_server(app) {
        let mut owner = signed_in(&app, OWNER).await;
        let session = owner.cookie("mcd_account").expect("a session cookie");
        let csrf = owner.csrf.clone();
        let answer = owner.post_form("/account/sign-out", &[("csrf_token", &csrf)]).await;
        assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
        assert!(cookie_line(&answer.headers, "mcd_account").contains("Max-Age=0"));
        assert_eq!(owner.cookie("mcd_account"), None);
        // The old cookie, replayed, is no session any more.
        owner.set_cookie("mcd_account", &session);
        let page = owner.get("/account").await;
        assert!(page.body.contains("name=\"password\""), "{}", page.body);
        assert!(!page.body.contains("Sign out"), "{}", page.body);
    }

    async fn a_consent_session_does_not_open_the_account_page(app) {
        let request = Authorize::demo(None);
        let mut browser = Browser::new(&app);
        browser.open(&request.query()).await;
        let consent = browser.sign_in(&request).await;
        assert_eq!(consent.status, StatusCode::OK, "{}", consent.body);
        let session = browser.cookie("mcd_session").expect("a consent session");
        browser.set_cookie("mcd_account", &session);
        let page = browser.get("/account").await;
        assert!(!page.body.contains("Sign out"), "{}", page.body);
        assert!(page.body.contains("name=\"password\""), "{}", page.body);
    }
}

/// The `Set-Cookie` line of cookie `name`.
fn cookie_line(headers: &reqwest::header::HeaderMap, name: &str) -> String {
    headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|line| line.starts_with(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no cookie {name} in {headers:?}"))
        .to_owned()
}
