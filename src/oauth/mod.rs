//! The OAuth 2.0 authorization server (DESIGN §4): pages, token endpoint, grants.

mod authorize;
mod endpoints;
pub mod error;
mod grants;
mod pages;
mod params;
pub mod pkce;
pub mod seal;
pub mod throttle;
mod token;

use actix_web::web;

use crate::actors::TokenActors;
use throttle::{RateLimiter, SignInThrottle};

/// The authorization server's shared state.
pub struct OAuth {
    pub actors: TokenActors,
    pub limiter: RateLimiter,
    pub sign_in: SignInThrottle,
}

impl OAuth {
    pub fn new(actors: TokenActors) -> Self {
        Self {
            actors,
            limiter: RateLimiter::new(),
            sign_in: SignInThrottle::new(),
        }
    }
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/oauth/authorize")
            .route(web::get().to(authorize::get))
            .route(web::post().to(authorize::post)),
    )
    .service(web::resource("/oauth/token").route(web::post().to(token::token)))
    .service(web::resource("/oauth/revoke").route(web::post().to(endpoints::revoke)))
    .service(web::resource("/oauth/introspect").route(web::post().to(endpoints::introspect)))
    .service(web::resource("/oauth/style.css").route(web::get().to(endpoints::stylesheet)))
    .service(
        web::resource("/.well-known/oauth-authorization-server")
            .route(web::get().to(endpoints::metadata)),
    );
}
