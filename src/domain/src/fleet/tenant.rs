//! Tenant manifests (DESIGN §3) once parsed and validated by `tenants`, and what applying them
//! gave: the shapes the storage layer writes and reports.

use std::fmt;

use serde::Serialize;

use crate::Role;

/// A validated manifest, ready to apply.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub file: String,
    pub merchant_key: String,
    pub merchant_name: String,
    /// Its applications may use the old Shopwave clients' conventions.
    pub legacy_clients: bool,
    /// How its sales are priced (`[sales]`).
    pub sales: crate::sales::pricing::SaleSettings,
    pub stores: Vec<StoreSpec>,
    pub users: Vec<UserSpec>,
    pub applications: Vec<AppSpec>,
}

#[derive(Debug, Clone)]
pub struct StoreSpec {
    pub key: String,
    pub name: String,
}

#[derive(Clone)]
pub enum PasswordSpec {
    /// A clear-text password, hashed on import.
    Plain(String),
    /// A hash made earlier (`pbkdf2-sha256$...`), stored as given.
    Hash(String),
}

impl fmt::Debug for PasswordSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PasswordSpec(<redacted>)")
    }
}

#[derive(Debug, Clone)]
pub struct UserSpec {
    /// Lower-cased.
    pub email: String,
    pub password: PasswordSpec,
    pub role: Role,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
}

#[derive(Clone)]
pub struct AppSpec {
    pub name: String,
    pub client_id: String,
    /// SHA-256 hex of the client secret; the clear text is dropped right after parsing.
    pub secret_hash: String,
    pub redirect_uris: Vec<String>,
    pub description: Option<String>,
}

impl fmt::Debug for AppSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppSpec")
            .field("name", &self.name)
            .field("client_id", &self.client_id)
            .field("redirect_uris", &self.redirect_uris)
            .finish_non_exhaustive()
    }
}

/// The ids a manifest's records have in the database, printed by `merchantd tenant apply`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct AppliedTenant {
    pub file: String,
    pub key: String,
    pub id: i64,
    pub stores: std::collections::BTreeMap<String, i64>,
    pub users: std::collections::BTreeMap<String, i64>,
    pub applications: std::collections::BTreeMap<String, i64>,
}
