//! The authorization server's HTTP side (DESIGN §4): the sign-in and consent pages, the token,
//! revoke and introspect endpoints and the metadata document. The grants' rules live in
//! `domain::oauth`; OAuth state is reached through the token actors.

mod authorize;
mod endpoints;
pub mod error;
mod legacy;
pub(super) mod pages;
pub mod params;
pub(super) mod signin;
mod token;

use actix_web::web;

use domain::oauth::throttle::{RateLimiter, SignInThrottle};

/// The authorization server's HTTP-side state: its rate limits.
pub struct OAuth {
    pub limiter: RateLimiter,
    pub sign_in: SignInThrottle,
}

impl OAuth {
    pub fn new() -> Self {
        Self {
            limiter: RateLimiter::new(),
            sign_in: SignInThrottle::new(),
        }
    }
}

impl Default for OAuth {
    fn default() -> Self {
        Self::new()
    }
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/oauth/authorize")
            .route(web::get().to(authorize::get))
            .route(web::post().to(authorize::post)),
    )
    .service(web::resource("/oauth/token").route(web::post().to(token::token)))
    .service(web::resource("/login").route(web::get().to(legacy::login)))
    .service(web::resource("/logout").route(web::get().to(legacy::logout)))
    .service(web::resource("/oauth/revoke").route(web::post().to(endpoints::revoke)))
    .service(web::resource("/oauth/introspect").route(web::post().to(endpoints::introspect)))
    .service(web::resource("/oauth/style.css").route(web::get().to(endpoints::stylesheet)))
    .service(
        web::resource("/.well-known/oauth-authorization-server")
            .route(web::get().to(endpoints::metadata)),
    );
}
