//! `GET/POST /oauth/authorize` (RFC 6749 §4.1.1–4.1.2, DESIGN §4): validate the request, sign
//! the user in, ask for consent, and redirect with a code (or an error).

use std::collections::BTreeMap;
use std::sync::Arc;

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};

use crate::http::oauth::pages::{
    self, Consent, SignIn, CSRF_COOKIE, SESSION_COOKIE, SESSION_MAX_AGE_SECS,
};
use crate::http::oauth::signin::{self, Refused};
use crate::http::AppState;
use domain::crypto::{random_token, sha256_hex};
use domain::now_millis;
use domain::oauth::pkce;
use domain::oauth::token::{Client, CodeFacts, NewFamily, SessionPurpose, SessionRecord};
use domain::{Role, ScopeSet};

/// The request parameters echoed as hidden inputs, in this order.
const REQUEST_FIELDS: [&str; 7] = [
    "client_id",
    "redirect_uri",
    "response_type",
    "scope",
    "state",
    "code_challenge",
    "code_challenge_method",
];

/// A validated authorization request.
struct Request {
    app: Arc<Client>,
    redirect_uri: String,
    scope: ScopeSet,
    scope_text: String,
    state: Option<String>,
    code_challenge: Option<String>,
    fields: Vec<(String, String)>,
}

enum Refusal {
    /// Shown, never redirected: the redirect target cannot be trusted.
    Page(StatusCode, &'static str, String),
    /// Sent back to the client's redirect URI.
    Redirect {
        redirect_uri: String,
        error: &'static str,
        description: String,
        state: Option<String>,
    },
}

impl Refusal {
    fn into_response(self) -> HttpResponse {
        match self {
            Refusal::Page(status, error, description) => {
                pages::error_page(status, error, &description)
            }
            Refusal::Redirect {
                redirect_uri,
                error,
                description,
                state,
            } => redirect(
                &redirect_uri,
                &[("error", error), ("error_description", &description)],
                state.as_deref(),
            ),
        }
    }
}

fn redirect(redirect_uri: &str, params: &[(&str, &str)], state: Option<&str>) -> HttpResponse {
    let location = match url::Url::parse(redirect_uri) {
        Ok(mut url) => {
            {
                let mut query = url.query_pairs_mut();
                for (k, v) in params {
                    query.append_pair(k, v);
                }
                if let Some(state) = state {
                    query.append_pair("state", state);
                }
            }
            url.to_string()
        }
        // Registered URIs were validated as absolute URLs; this is unreachable in practice.
        Err(_) => {
            return pages::error_page(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "Bad redirect URI.",
            )
        }
    };
    HttpResponse::Found()
        .insert_header((header::LOCATION, location))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .finish()
}

/// Parameters as a map; a repeated request parameter is refused (RFC 6749 §3.1).
fn parse_pairs(pairs: Vec<(String, String)>) -> Result<BTreeMap<String, String>, Refusal> {
    let mut map = BTreeMap::new();
    for (k, v) in pairs {
        if map.insert(k.clone(), v).is_some() && REQUEST_FIELDS.contains(&k.as_str()) {
            return Err(Refusal::Page(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                format!("The parameter {k} is repeated."),
            ));
        }
    }
    Ok(map)
}

/// The live application `client_id` names. These refusals are pages: without a known client
/// there is no redirect URI to send the browser back to.
async fn registered_client(
    state: &AppState,
    client_id: Option<&str>,
) -> Result<Arc<Client>, Refusal> {
    let client_id = client_id.ok_or_else(|| {
        Refusal::Page(
            StatusCode::BAD_REQUEST,
            "invalid_client",
            "client_id is required.".into(),
        )
    })?;
    state
        .tokens
        .client(client_id)
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "application lookup failed");
            Refusal::Page(
                StatusCode::SERVICE_UNAVAILABLE,
                "temporarily_unavailable",
                "Try again shortly.".into(),
            )
        })?
        .ok_or_else(|| {
            Refusal::Page(
                StatusCode::BAD_REQUEST,
                "invalid_client",
                "The client_id is not registered.".into(),
            )
        })
}

async fn validate(state: &AppState, p: &BTreeMap<String, String>) -> Result<Request, Refusal> {
    let get = |k: &str| p.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let app = registered_client(state, get("client_id")).await?;
    let redirect_uri = get("redirect_uri")
        .filter(|uri| {
            app.redirect_uris
                .iter()
                .any(|r| domain::oauth::redirect_uri::matches(r, uri))
        })
        .ok_or_else(|| {
            Refusal::Page(
                StatusCode::BAD_REQUEST,
                "redirect_uri_mismatch",
                "The redirect_uri is not one of the URIs registered for this application (a loopback IP address may differ only in its port)."
                    .into(),
            )
        })?
        .to_owned();
    let state_param = get("state").map(str::to_owned);
    let back = |error: &'static str, description: String| Refusal::Redirect {
        redirect_uri: redirect_uri.clone(),
        error,
        description,
        state: state_param.clone(),
    };
    if get("response_type") != Some("code") {
        return Err(back(
            "unsupported_response_type",
            "response_type must be code.".into(),
        ));
    }
    let scope_text = get("scope").unwrap_or("").to_owned();
    let parsed = if app.legacy {
        ScopeSet::parse_legacy(&scope_text)
    } else {
        ScopeSet::parse(&scope_text)
    };
    let scope = match parsed {
        Ok(Some(scope)) => scope,
        Ok(None) => return Err(back("invalid_scope", "scope is required.".into())),
        Err(unknown) => return Err(back("invalid_scope", format!("Unknown scope {unknown}"))),
    };
    let code_challenge = match (get("code_challenge"), get("code_challenge_method")) {
        (None, None) => None,
        (Some(c), Some("S256")) if pkce::valid_challenge(c) => Some(c.to_owned()),
        (Some(_), Some("S256")) => {
            return Err(back(
                "invalid_request",
                "code_challenge must be 43 base64url characters.".into(),
            ))
        }
        (Some(_), None) | (Some(_), Some(_)) | (None, Some(_)) => {
            return Err(back(
                "invalid_request",
                "PKCE needs code_challenge with code_challenge_method=S256.".into(),
            ))
        }
    };
    let fields = REQUEST_FIELDS
        .iter()
        .filter_map(|k| p.get(*k).map(|v| ((*k).to_owned(), v.clone())))
        .collect();
    Ok(Request {
        app,
        redirect_uri,
        scope,
        scope_text,
        state: state_param,
        code_challenge,
        fields,
    })
}

fn origin_of(uri: &str) -> String {
    url::Url::parse(uri)
        .map(|u| u.origin().ascii_serialization())
        .ok()
        .filter(|o| o != "null")
        .unwrap_or_else(|| uri.split(':').next().unwrap_or("").to_owned() + ":")
}

pub async fn get(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(req.query_string()).unwrap_or_default();
    let request = match parse_pairs(pairs) {
        Ok(p) => match validate(&state, &p).await {
            Ok(r) => r,
            Err(refusal) => return refusal.into_response(),
        },
        Err(refusal) => return refusal.into_response(),
    };
    let csrf = random_token("");
    let (mut builder, body) = pages::sign_in(
        StatusCode::OK,
        SignIn {
            app_name: &request.app.name,
            fields: &request.fields,
            csrf: &csrf,
            error: None,
            email: "",
        },
    );
    builder
        .cookie(pages::cookie(
            CSRF_COOKIE,
            csrf,
            signin::secure_cookies(&state),
            None,
        ))
        .body(body)
}

pub async fn post(
    req: HttpRequest,
    form: web::Form<Vec<(String, String)>>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let p = match parse_pairs(form.into_inner()) {
        Ok(p) => p,
        Err(refusal) => return refusal.into_response(),
    };
    // The form must come from our own page: its token must match the cookie set with it.
    let csrf = match signin::csrf_of(&req, CSRF_COOKIE, p.get("csrf_token")) {
        Some(csrf) => csrf,
        None => {
            return pages::error_page(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "The form's CSRF token does not match; open the authorization link again.",
            )
        }
    };
    let request = match validate(&state, &p).await {
        Ok(r) => r,
        Err(refusal) => return refusal.into_response(),
    };
    match p.get("decision") {
        Some(decision) => decide(&req, &state, &request, &csrf, decision).await,
        None => sign_in(&req, &state, &request, &csrf, &p).await,
    }
}

fn sign_in_again(
    request: &Request,
    csrf: &str,
    status: StatusCode,
    error: &str,
    email: &str,
) -> HttpResponse {
    let (mut builder, body) = pages::sign_in(
        status,
        SignIn {
            app_name: &request.app.name,
            fields: &request.fields,
            csrf,
            error: Some(error),
            email,
        },
    );
    builder.body(body)
}

async fn sign_in(
    req: &HttpRequest,
    state: &AppState,
    request: &Request,
    csrf: &str,
    p: &BTreeMap<String, String>,
) -> HttpResponse {
    let email = signin::normalize_email(p.get("email"));
    let password = p.get("password").cloned().unwrap_or_default();
    let employee = match signin::check_password(req, state, &email, password).await {
        Ok(employee) => employee,
        Err(Refused::Slowed(wait)) => {
            return sign_in_again(
                request,
                csrf,
                StatusCode::TOO_MANY_REQUESTS,
                &format!("Too many failed sign-ins. Try again in {wait} seconds."),
                &email,
            )
        }
        Err(Refused::Wrong) => {
            return sign_in_again(
                request,
                csrf,
                StatusCode::UNAUTHORIZED,
                "The email or password is not right, or the account cannot sign in.",
                &email,
            )
        }
        Err(Refused::Unavailable) => return pages::unavailable(),
    };
    let session = match signin::start_session(
        state,
        &employee,
        SessionPurpose::Consent,
        SESSION_MAX_AGE_SECS,
    )
    .await
    {
        Ok(session) => session,
        Err(page) => return page,
    };
    let session_record = SessionRecord {
        merchant_id: employee.merchant_id,
        employee_id: employee.employee_id,
        email: email.clone(),
        role_id: employee.role_id,
        exit_date: employee.exit_date,
    };
    let mut response = consent_page(state, request, csrf, &session_record, &email).await;
    let cookie = pages::cookie(
        SESSION_COOKIE,
        session,
        signin::secure_cookies(state),
        Some(SESSION_MAX_AGE_SECS),
    );
    let _ = response.add_cookie(&cookie);
    response
}

/// The scope a user may grant: what was asked, capped by the role.
fn granted_scope(request: &Request, role_id: i64) -> Option<ScopeSet> {
    Role::from_id(role_id).map(|role| request.scope.capped(role.highest_scope()))
}

/// The page for a user whose role lets them grant nothing.
fn cannot_grant() -> HttpResponse {
    pages::error_page(
        StatusCode::FORBIDDEN,
        "access_denied",
        "Your role cannot grant access.",
    )
}

async fn consent_page(
    state: &AppState,
    request: &Request,
    csrf: &str,
    session: &SessionRecord,
    email: &str,
) -> HttpResponse {
    let Some(granted) = granted_scope(request, session.role_id) else {
        return cannot_grant();
    };
    let merchant_name = match state.services.merchant(session.merchant_id).await {
        Ok(Some(m)) => m.name,
        _ => String::new(),
    };
    let granted_text = granted.to_scope_string();
    let granted_list: Vec<&str> = granted_text.split(' ').collect();
    let narrowed = (granted != request.scope).then_some(request.scope_text.as_str());
    let (mut builder, body) = pages::consent(Consent {
        app_name: &request.app.name,
        merchant_name: &merchant_name,
        email,
        granted: &granted_list,
        narrowed_from: narrowed,
        fields: &request.fields,
        csrf,
        redirect_origin: &origin_of(&request.redirect_uri),
    });
    builder.body(body)
}

async fn decide(
    req: &HttpRequest,
    state: &AppState,
    request: &Request,
    csrf: &str,
    decision: &str,
) -> HttpResponse {
    let session_token = req.cookie(SESSION_COOKIE).map(|c| c.value().to_owned());
    let session_hash = session_token.as_deref().map(sha256_hex);
    let session = match &session_hash {
        Some(hash) => state
            .tokens
            .session(hash, SessionPurpose::Consent)
            .await
            .ok()
            .flatten(),
        None => None,
    };
    let now = now_millis();
    let Some(session) = session.filter(|s| s.exit_date.is_none_or(|exit| exit > now)) else {
        return sign_in_again(
            request,
            csrf,
            StatusCode::OK,
            "Your sign-in expired. Sign in again.",
            "",
        );
    };
    // A consent is used once.
    if let Some(hash) = &session_hash {
        let _ = state.tokens.end_session(hash).await;
    }
    match decision {
        "approve" => {}
        "deny" => {
            tracing::info!(
                target: "merchantd::audit",
                event = "consent",
                merchant_id = session.merchant_id,
                application_id = request.app.id,
                employee_id = session.employee_id,
                outcome = "denied",
                "the user denied access"
            );
            return redirect(
                &request.redirect_uri,
                &[
                    ("error", "access_denied"),
                    ("error_description", "The user denied access"),
                ],
                request.state.as_deref(),
            );
        }
        _ => {
            return pages::error_page(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "decision must be approve or deny.",
            )
        }
    }
    approve(state, request, &session, now).await
}

/// Approved: issues a code for what the user's role lets them grant and sends the browser back.
async fn approve(
    state: &AppState,
    request: &Request,
    session: &SessionRecord,
    now: i64,
) -> HttpResponse {
    let Some(granted) = granted_scope(request, session.role_id) else {
        return cannot_grant();
    };
    let code = random_token("mcd_ac_");
    let family = NewFamily {
        id: uuid::Uuid::new_v4().to_string(),
        merchant_id: session.merchant_id,
        employee_id: session.employee_id,
        application_id: request.app.id,
        scope: granted.to_scope_string(),
    };
    let facts = CodeFacts {
        redirect_uri: request.redirect_uri.clone(),
        code_challenge: request.code_challenge.clone(),
    };
    let expires = now + (state.settings.auth_code_ttl_secs as i64) * 1000;
    if let Err(e) = state
        .tokens
        .issue_code(&family, &sha256_hex(&code), &facts, expires)
        .await
    {
        tracing::error!(error = %e, "code store failed");
        return pages::unavailable();
    }
    tracing::info!(
        target: "merchantd::audit",
        event = "consent",
        merchant_id = session.merchant_id,
        application_id = request.app.id,
        employee_id = session.employee_id,
        scope = %family.scope,
        outcome = "approved",
        "authorization code issued"
    );
    redirect(
        &request.redirect_uri,
        &[("code", &code)],
        request.state.as_deref(),
    )
}
