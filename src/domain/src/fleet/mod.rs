//! The operator's realm: merchants as the fleet sees them, tenant manifests, operator tokens
//! and usage, and the archive format a merchant moves in.

pub mod archive;
pub mod manifest;
pub mod merchant;
pub mod operator;
pub mod tenant;
