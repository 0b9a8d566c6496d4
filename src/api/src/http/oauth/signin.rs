//! What the two sign-in pages share, `/oauth/authorize` and `/account`: one password check
//! with one slowdown per email and per IP (failures on either page count together), sign-in
//! sessions stored by hash, and the double-submit CSRF check of their forms.

use actix_web::{HttpRequest, HttpResponse};

use crate::http::oauth::pages;
use crate::http::AppState;
use domain::crypto::{self, constant_time_eq, random_token, sha256_hex};
use domain::now_millis;
use domain::oauth::token::{NewSession, SessionPurpose, SignInCandidate};

/// Failed sign-ins allowed before slowing down, per email and per IP.
const FREE_FAILURES_PER_EMAIL: u32 = 5;
const FREE_FAILURES_PER_IP: u32 = 20;

/// Why a sign-in was refused.
pub enum Refused {
    /// Too many recent failures for this email or IP: try again after this many seconds.
    Slowed(u64),
    /// Unknown email, wrong password, or an employee who has left.
    Wrong,
    /// The store could not be asked.
    Unavailable,
}

/// The email as sign-in compares it.
pub fn normalize_email(email: Option<&String>) -> String {
    email.map(|e| e.trim().to_lowercase()).unwrap_or_default()
}

/// Checks an email and password: the employee they sign in, or why not. Failures are counted
/// per email and per IP, and past the free ones each further attempt waits longer.
pub async fn check_password(
    req: &HttpRequest,
    state: &AppState,
    email: &str,
    password: String,
) -> Result<SignInCandidate, Refused> {
    let ip = req
        .peer_addr()
        .map(|a| a.ip().to_string())
        .unwrap_or_default();
    let (email_key, ip_key) = (format!("email:{email}"), format!("ip:{ip}"));
    let throttle = &state.oauth.sign_in;
    if let Some(wait) = throttle
        .wait_for(&email_key, FREE_FAILURES_PER_EMAIL)
        .or_else(|| throttle.wait_for(&ip_key, FREE_FAILURES_PER_IP))
    {
        return Err(Refused::Slowed(wait));
    }
    let candidates = match state.tokens.sign_in_candidates(email).await {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "sign-in lookup failed");
            return Err(Refused::Unavailable);
        }
    };
    let verified = verify(candidates, password, state.settings.pbkdf2_iterations).await;
    let now = now_millis();
    match verified {
        Some(e) if e.exit_date.is_none_or(|exit| exit > now) => {
            throttle.clear(&email_key);
            Ok(e)
        }
        _ => {
            throttle.fail(&email_key);
            throttle.fail(&ip_key);
            tracing::info!(target: "merchantd::audit", event = "sign_in", outcome = "failed", "sign-in failed");
            Err(Refused::Wrong)
        }
    }
}

/// Checks the password against every candidate off the async workers (PBKDF2 is CPU-bound).
/// With no candidate a dummy hash is checked, so the answer takes as long for unknown emails
/// as for wrong passwords.
async fn verify(
    candidates: Vec<SignInCandidate>,
    password: String,
    iterations: u32,
) -> Option<SignInCandidate> {
    tokio::task::spawn_blocking(move || {
        let mut checked = false;
        for c in &candidates {
            if let Some(hash) = &c.password_hash {
                checked = true;
                if crypto::verify_password(&password, hash) {
                    return Some(c.clone());
                }
            }
        }
        if !checked {
            let _ = crypto::verify_password(&password, &crypto::hash_password("", iterations));
        }
        None
    })
    .await
    .ok()
    .flatten()
}

/// Stores a sign-in session for `purpose` lasting `max_age_secs`; the session token for the
/// cookie (only its hash is stored), or the page to answer when it cannot be stored.
pub async fn start_session(
    state: &AppState,
    employee: &SignInCandidate,
    purpose: SessionPurpose,
    max_age_secs: i64,
) -> Result<String, HttpResponse> {
    let session = random_token("");
    let record = NewSession {
        merchant_id: employee.merchant_id,
        employee_id: employee.employee_id,
        purpose,
        expires_at: now_millis() + max_age_secs * 1000,
    };
    if let Err(e) = state
        .tokens
        .create_session(&sha256_hex(&session), &record)
        .await
    {
        tracing::error!(error = %e, "session store failed");
        return Err(pages::unavailable());
    }
    tracing::info!(
        target: "merchantd::audit",
        event = "sign_in",
        merchant_id = employee.merchant_id,
        employee_id = employee.employee_id,
        purpose = purpose.as_str(),
        outcome = "ok",
        "signed in"
    );
    Ok(session)
}

/// Cookies are `Secure` when the pages are served over https.
pub fn secure_cookies(state: &AppState) -> bool {
    state.settings.public_auth_url().starts_with("https://")
}

/// The CSRF token of a form post when it matches the cookie set with the page (double
/// submit: another site can make a browser post, but can neither read nor set the cookie).
pub fn csrf_of(req: &HttpRequest, cookie: &str, form: Option<&String>) -> Option<String> {
    let cookie = req.cookie(cookie)?.value().to_owned();
    let form = form?;
    (!cookie.is_empty() && constant_time_eq(cookie.as_bytes(), form.as_bytes())).then_some(cookie)
}
