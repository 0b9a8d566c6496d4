//! `/account`: the connected-applications page (issue 13). An employee signs in (the password
//! check and slowdown of `/oauth/authorize`), sees the applications holding live tokens for
//! them, revokes one, and signs out. Owners also see and revoke every other employee's grants
//! of their merchant. Pages are served like the authorization pages: no JavaScript, the same
//! CSP and `X-Frame-Options`; the sign-in form carries a double-submit CSRF token, the
//! signed-in forms one derived from the session.
//!
//! The session is an `account` session in `oauth_sessions` (a consent session cannot stand in
//! for it), in a cookie of its own sent to `/account` only, HttpOnly and SameSite=Strict.

mod pages;

use std::collections::BTreeMap;

use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};

use crate::http::oauth::pages::{scoped_cookie, unavailable};
use crate::http::oauth::signin::{self, Refused};
use crate::http::AppState;
use domain::crypto::{constant_time_eq, random_token, sha256_hex};
use domain::now_millis;
use domain::oauth::token::{GrantsOf, SessionPurpose, SessionRecord};
use domain::Role;

const PATH: &str = "/account";
const SESSION_COOKIE: &str = "mcd_account";
const CSRF_COOKIE: &str = "mcd_account_csrf";
/// An account session lasts half an hour from sign-in, then the page asks again: it can cut
/// off every application of a merchant, so it should not outlive a break at the counter.
const SESSION_MAX_AGE_SECS: i64 = 30 * 60;
/// Family ids are UUIDs; anything much longer is not one and is not looked up.
const MAX_FAMILY_ID: usize = 64;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/account")
            .route(web::get().to(show))
            .route(web::post().to(sign_in)),
    )
    .service(web::resource("/account/revoke").route(web::post().to(revoke)))
    .service(web::resource("/account/sign-out").route(web::post().to(sign_out)));
}

/// A form's fields; for a repeated name the last value counts (no field here is a list).
fn fields(form: web::Form<Vec<(String, String)>>) -> BTreeMap<String, String> {
    form.into_inner().into_iter().collect()
}

/// A cookie of this page: sent to `/account` only and never on a request another site starts.
fn cookie(
    name: &'static str,
    value: String,
    state: &AppState,
    max_age: Option<i64>,
) -> Cookie<'static> {
    scoped_cookie(
        name,
        value,
        PATH,
        SameSite::Strict,
        signin::secure_cookies(state),
        max_age,
    )
}

/// The CSRF token for the page about to be shown: the browser's own while it holds one that
/// looks like ours (so two open tabs keep working), a new one otherwise.
fn page_csrf(req: &HttpRequest) -> String {
    req.cookie(CSRF_COOKIE)
        .map(|c| c.value().to_owned())
        .filter(|v| {
            (32..=64).contains(&v.len())
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .unwrap_or_else(|| random_token(""))
}

/// The CSRF token of a signed-in browser's forms: derived from its session cookie, which
/// another site cannot read or set (unlike the double-submit cookie, which a sibling
/// subdomain could plant), so a forged revoke or sign-out needs the session itself.
fn session_csrf(req: &HttpRequest) -> Option<String> {
    req.cookie(SESSION_COOKIE)
        .map(|c| sha256_hex(&format!("account-csrf:{}", c.value())))
}

/// True when a signed-in form carries its session's CSRF token.
fn session_form(req: &HttpRequest, p: &BTreeMap<String, String>) -> bool {
    match (session_csrf(req), p.get("csrf_token")) {
        (Some(expected), Some(sent)) => constant_time_eq(expected.as_bytes(), sent.as_bytes()),
        _ => false,
    }
}

fn with_csrf_cookie(mut response: HttpResponse, csrf: String, state: &AppState) -> HttpResponse {
    let _ = response.add_cookie(&cookie(CSRF_COOKIE, csrf, state, None));
    response
}

/// `303 See Other` to a page of `/account`, so reloading it never posts the form again.
fn see_other(location: &'static str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, location))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .finish()
}

/// The live account session of this browser; the page to answer when the store is away.
async fn signed_in(
    req: &HttpRequest,
    state: &AppState,
) -> Result<Option<SessionRecord>, HttpResponse> {
    let Some(cookie) = req.cookie(SESSION_COOKIE) else {
        return Ok(None);
    };
    let hash = sha256_hex(cookie.value());
    match state.tokens.session(&hash, SessionPurpose::Account).await {
        Ok(session) => {
            let now = now_millis();
            Ok(session.filter(|s| s.exit_date.is_none_or(|exit| exit > now)))
        }
        Err(e) => {
            tracing::error!(error = %e, "account session lookup failed");
            Err(unavailable())
        }
    }
}

/// Whose grants the signed-in employee may see and revoke: an owner every employee's of the
/// merchant, anyone else their own. The role is read with the session, so a changed role
/// applies at once.
fn grants_of(session: &SessionRecord) -> GrantsOf {
    let owner = Role::from_id(session.role_id) == Some(Role::Owner);
    GrantsOf {
        merchant_id: session.merchant_id,
        employee_id: (!owner).then_some(session.employee_id),
    }
}

/// `GET /account`: the grants of the signed-in employee, or the sign-in form.
pub async fn show(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let csrf = page_csrf(&req);
    let response = match signed_in(&req, &state).await {
        Ok(Some(session)) => {
            let revoked = req.query_string().split('&').any(|kv| kv == "revoked=1");
            let forms = session_csrf(&req).unwrap_or_default();
            listing(&state, &session, &forms, revoked).await
        }
        Ok(None) => pages::sign_in(StatusCode::OK, &csrf, None, ""),
        Err(page) => page,
    };
    with_csrf_cookie(response, csrf, &state)
}

async fn listing(
    state: &AppState,
    session: &SessionRecord,
    csrf: &str,
    revoked: bool,
) -> HttpResponse {
    let of = grants_of(session);
    let grants = match state.tokens.connected_grants(of).await {
        Ok(grants) => grants,
        Err(e) => {
            tracing::error!(error = %e, "listing connected applications failed");
            return unavailable();
        }
    };
    let merchant_name = match state.services.merchant(session.merchant_id).await {
        Ok(Some(m)) => m.name,
        _ => String::new(),
    };
    let (own, others) = grants
        .into_iter()
        .partition(|g| g.employee_id == session.employee_id);
    pages::listing(pages::Listing {
        email: &session.email,
        merchant_name: &merchant_name,
        own,
        others: of.employee_id.is_none().then_some(others),
        csrf,
        notice: revoked.then_some("Access revoked: the application can no longer act for you."),
    })
}

/// `POST /account`: signs in and starts an account session.
pub async fn sign_in(
    req: HttpRequest,
    form: web::Form<Vec<(String, String)>>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let p = fields(form);
    let Some(csrf) = signin::csrf_of(&req, CSRF_COOKIE, p.get("csrf_token")) else {
        return pages::forged();
    };
    let email = signin::normalize_email(p.get("email"));
    let password = p.get("password").cloned().unwrap_or_default();
    let employee = match signin::check_password(&req, &state, &email, password).await {
        Ok(employee) => employee,
        Err(Refused::Slowed(wait)) => {
            let error = format!("Too many failed sign-ins. Try again in {wait} seconds.");
            return pages::sign_in(StatusCode::TOO_MANY_REQUESTS, &csrf, Some(&error), &email);
        }
        Err(Refused::Wrong) => {
            let error = "The email or password is not right, or the account cannot sign in.";
            return pages::sign_in(StatusCode::UNAUTHORIZED, &csrf, Some(error), &email);
        }
        Err(Refused::Unavailable) => return unavailable(),
    };
    // A new sign-in replaces whatever session this browser held (no session fixation).
    end_session(&req, &state).await;
    let session = match signin::start_session(
        &state,
        &employee,
        SessionPurpose::Account,
        SESSION_MAX_AGE_SECS,
    )
    .await
    {
        Ok(session) => session,
        Err(page) => return page,
    };
    let mut response = see_other(PATH);
    let _ = response.add_cookie(&cookie(
        SESSION_COOKIE,
        session,
        &state,
        Some(SESSION_MAX_AGE_SECS),
    ));
    response
}

/// `POST /account/revoke`: revokes one grant the signed-in employee may manage. A family id
/// that is not one of those (unknown, another merchant's, for a non-owner another
/// employee's, already revoked) is the same 404 page, naming nothing.
pub async fn revoke(
    req: HttpRequest,
    form: web::Form<Vec<(String, String)>>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let p = fields(form);
    let session = match signed_in(&req, &state).await {
        Ok(Some(session)) => session,
        Ok(None) => {
            let error = "Your sign-in expired. Sign in again.";
            let csrf = page_csrf(&req);
            let page = pages::sign_in(StatusCode::UNAUTHORIZED, &csrf, Some(error), "");
            return with_csrf_cookie(page, csrf, &state);
        }
        Err(page) => return page,
    };
    if !session_form(&req, &p) {
        return pages::forged();
    }
    let family = p
        .get("family")
        .map(String::as_str)
        .filter(|f| !f.is_empty() && f.len() <= MAX_FAMILY_ID);
    let of = grants_of(&session);
    let revoked = match family {
        Some(family) => state.tokens.revoke_grant(of, family).await,
        None => Ok(None),
    };
    match revoked {
        Ok(Some(grant)) => {
            tracing::info!(
                target: "merchantd::audit",
                event = "revoke_grant",
                merchant_id = session.merchant_id,
                application_id = grant.application_id,
                employee_id = grant.employee_id,
                revoked_by = session.employee_id,
                revoked_access_tokens = grant.access_tokens,
                outcome = "ok",
                "an employee revoked a connected application"
            );
            state
                .metrics
                .oauth_revocations
                .with_label_values(&["account_page"])
                .inc();
            see_other("/account?revoked=1")
        }
        Ok(None) => {
            tracing::info!(
                target: "merchantd::audit",
                event = "revoke_grant",
                merchant_id = session.merchant_id,
                revoked_by = session.employee_id,
                outcome = "not_found",
                "a revocation named no grant this employee may manage"
            );
            pages::not_found()
        }
        Err(e) => {
            tracing::error!(error = %e, "revoking a connected application failed");
            unavailable()
        }
    }
}

/// `POST /account/sign-out`: ends the session and forgets its cookie.
pub async fn sign_out(
    req: HttpRequest,
    form: web::Form<Vec<(String, String)>>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let p = fields(form);
    if req.cookie(SESSION_COOKIE).is_some() && !session_form(&req, &p) {
        return pages::forged();
    }
    end_session(&req, &state).await;
    let mut response = see_other(PATH);
    let _ = response.add_cookie(&cookie(SESSION_COOKIE, String::new(), &state, Some(0)));
    response
}

/// Ends the account session this browser presents, if any.
async fn end_session(req: &HttpRequest, state: &AppState) {
    let Some(cookie) = req.cookie(SESSION_COOKIE) else {
        return;
    };
    let hash = sha256_hex(cookie.value());
    if let Ok(Some(session)) = state.tokens.session(&hash, SessionPurpose::Account).await {
        tracing::info!(
            target: "merchantd::audit",
            event = "sign_out",
            merchant_id = session.merchant_id,
            employee_id = session.employee_id,
            outcome = "ok",
            "account session ended"
        );
    }
    if let Err(e) = state.tokens.end_session(&hash).await {
        // The session still expires on its own; the browser forgets the cookie anyway.
        tracing::warn!(error = %e, "ending an account session failed");
    }
}
