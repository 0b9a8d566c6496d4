//! The authorization server's rules (DESIGN §4), free of HTTP and of storage: the grants
//! (one file each, over the storage steps of `token::TokenSteps`), PKCE, the sealing
//! of refresh successors, and the rate limits of the token endpoint and the sign-in page. The
//! pages and endpoints that speak HTTP live in the HTTP crate.

pub mod grants;
pub mod pkce;
pub mod redirect_uri;
pub mod seal;
pub mod throttle;
pub mod token;
