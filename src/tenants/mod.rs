//! Tenant manifests (DESIGN §3): one TOML file a merchant. Parsing and validation happen here, in
//! full, before anything is written; `db::tenants` applies the result in one transaction.

mod manifest;

use std::path::{Path, PathBuf};

pub use crate::domain::tenant::{
    AppSpec, AppliedTenant, Manifest, PasswordSpec, StoreSpec, UserSpec,
};
pub use manifest::ManifestError;

use crate::db::{Db, DbError};

/// Why applying manifests failed. Nothing was written in either case.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Every `*.toml` file directly inside `dir`, sorted by name. A missing folder holds none.
pub fn manifests_in(dir: &Path) -> Result<Vec<PathBuf>, ManifestError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ManifestError::file(dir, format!("cannot read folder: {e}"))),
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|ext| ext == "toml") && p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// Reads and validates every file, then applies them all in one transaction.
pub async fn apply_files(
    db: &Db,
    files: &[PathBuf],
    pbkdf2_iterations: u32,
) -> Result<Vec<AppliedTenant>, ApplyError> {
    let manifests = load_all(files)?;
    Ok(db.apply_manifests(&manifests, pbkdf2_iterations).await?)
}

/// Parses and validates every file; the first mistake (by file order) is returned.
pub fn load_all(files: &[PathBuf]) -> Result<Vec<Manifest>, ManifestError> {
    let manifests = files
        .iter()
        .map(|path| Manifest::load(path))
        .collect::<Result<Vec<_>, _>>()?;
    manifest::check_across(&manifests)?;
    Ok(manifests)
}
