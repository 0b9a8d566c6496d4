//! `GET /login`: where the old Shopwave client libraries send a person to sign in (the Node
//! client builds `/login?client_id=…&redirect_uri=…&scope=…`). For an application whose
//! merchant turned `legacy_clients` on it is `/oauth/authorize` with the same query; for any
//! other it is a 404 that says where to sign in.

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpRequest, HttpResponse};

use crate::http::error::ApiError;
use crate::http::AppState;

pub async fn login(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
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
            detail: "GET /login serves the old Shopwave client libraries: its client_id must \
                     name an application whose merchant turned legacy_clients on. Sign in at \
                     /oauth/authorize."
                .into(),
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
