//! Tenant manifests (DESIGN §3): one TOML file a merchant. Parsing and validation happen here, in
//! full, before anything is written; `db::tenants` applies the result in one transaction.

use std::path::{Path, PathBuf};

pub use crate::domain::fleet::manifest::ManifestError;
pub use crate::domain::fleet::tenant::{
    AppSpec, AppliedTenant, Manifest, PasswordSpec, StoreSpec, UserSpec,
};

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

/// As [`apply_files`], each manifest in the pod its merchant is placed in; new merchants at
/// home (replicas starting at once apply the same manifests: the home database's unique key
/// keeps them from creating one merchant twice).
pub async fn apply_files_placed(
    pods: &crate::db::fleet::pods::Pods,
    files: &[PathBuf],
    pbkdf2_iterations: u32,
) -> Result<Vec<AppliedTenant>, ApplyError> {
    apply_placed(pods, load_all(files)?, pbkdf2_iterations, false).await
}

/// Applies each manifest in the pod holding its merchant. A new merchant goes home, or with
/// `spread` (`merchantd tenant apply`) to the pod holding fewest, counting the ones placed
/// before it, and is recorded in the directory.
pub async fn apply_placed(
    pods: &crate::db::fleet::pods::Pods,
    manifests: Vec<Manifest>,
    pbkdf2_iterations: u32,
    spread: bool,
) -> Result<Vec<AppliedTenant>, ApplyError> {
    if !pods.is_fleet() {
        return Ok(pods
            .home()
            .apply_manifests(&manifests, pbkdf2_iterations)
            .await?);
    }
    let mut held = Vec::with_capacity(pods.all().len());
    for pod in pods.all() {
        held.push(pod.db.merchants_held().await?);
    }
    let mut groups: Vec<Vec<Manifest>> = vec![Vec::new(); pods.all().len()];
    let mut new = Vec::new();
    for manifest in manifests {
        let key = &manifest.merchant_key;
        let pod = match pods.home().placed_key(key).await? {
            Some((_, name)) => pods.index_of(&name).unwrap_or(0),
            None if !spread || pods.home().merchant_with_key(key).await?.is_some() => 0,
            None => {
                let fewest = (0..held.len()).min_by_key(|k| held[*k]).unwrap_or(0);
                held[fewest] += 1;
                new.push(key.clone());
                fewest
            }
        };
        groups[pod].push(manifest);
    }
    let mut applied = Vec::new();
    for (k, group) in groups.iter().enumerate() {
        if group.is_empty() {
            continue;
        }
        let done = pods
            .pod(k)
            .db
            .apply_manifests(group, pbkdf2_iterations)
            .await?;
        for tenant in &done {
            if k > 0 && new.contains(&tenant.key) {
                pods.place(tenant.id, &tenant.key, k).await?;
            }
        }
        applied.extend(done);
    }
    Ok(applied)
}

/// Parses and validates every file; the first mistake (by file order) is returned.
pub fn load_all(files: &[PathBuf]) -> Result<Vec<Manifest>, ManifestError> {
    let manifests = files
        .iter()
        .map(|path| load(path))
        .collect::<Result<Vec<_>, _>>()?;
    crate::domain::fleet::manifest::check_across(&manifests)?;
    Ok(manifests)
}

/// One manifest file, read and validated.
pub fn load(path: &Path) -> Result<Manifest, ManifestError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ManifestError::file(path, format!("cannot read file: {e}")))?;
    Manifest::parse(&path.display().to_string(), &text)
}
