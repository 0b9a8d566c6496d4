//! `GET /login` and `GET /logout`: where the old Shopwave client libraries send a person to
//! sign in or out (the Node client builds `/login?client_id=…&redirect_uri=…&scope=…`). For an
//! application whose merchant turned `legacy_clients` on, both are `/oauth/authorize` with the
//! same query, `/logout` after ending the browser's sign-in session; for any other they are a
//! 404 that says where to sign in.

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpRequest, HttpResponse};

use crate::http::error::ApiError;
use crate::http::oauth::pages::{self, SESSION_COOKIE};
use crate::http::oauth::signin;
use crate::http::AppState;
use domain::crypto::sha256_hex;

pub async fn login(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    to_authorize(&req, &state, "login").await
}

pub async fn logout(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let mut response = to_authorize(&req, &state, "logout").await?;
    // The session cookie is scoped to /oauth, so a browser rarely sends it here; when it does,
    // its record ends now (best effort: an unknown one is already ended). Either way the cookie
    // is removed, and a record no one holds expires with its max age.
    if let Some(cookie) = req.cookie(SESSION_COOKIE) {
        let _ = state.tokens.end_session(&sha256_hex(cookie.value())).await;
    }
    let cleared = pages::cookie(
        SESSION_COOKIE,
        String::new(),
        signin::secure_cookies(&state),
        Some(0),
    );
    let _ = response.add_cookie(&cleared);
    Ok(response)
}

/// The redirect to `/oauth/authorize` with the request's query, when its `client_id` names an
/// application allowed the old clients' conventions.
async fn to_authorize(
    req: &HttpRequest,
    state: &AppState,
    page: &str,
) -> Result<HttpResponse, ApiError> {
    let query = req.query_string();
    let client_id = url::form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == "client_id")
        .map(|(_, v)| v.into_owned());
    let legacy = match client_id {
        Some(id) => state
            .tokens
            .client(&id)
            .await
            .map_err(ApiError::from)?
            .is_some_and(|app| app.legacy),
        None => false,
    };
    if !legacy {
        return Err(ApiError::NotFound {
            detail: format!(
                "GET /{page} serves the old Shopwave client libraries: its client_id must name \
                 an application whose merchant turned legacy_clients on. Sign in at \
                 /oauth/authorize."
            ),
        });
    }
    let target = format!(
        "{}/oauth/authorize?{query}",
        state.settings.public_auth_url()
    );
    let location = HeaderValue::from_str(&target)
        .map_err(|_| ApiError::bad_body("The query string cannot be forwarded."))?;
    Ok(HttpResponse::Found()
        .insert_header((header::LOCATION, location))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .finish())
}
