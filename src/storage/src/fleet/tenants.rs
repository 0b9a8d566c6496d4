//! Applying tenant manifests: create or update, never duplicate, all files in one transaction.

use std::collections::BTreeMap;

use crate::{Announcement, Db, DbError, Tx};
use domain::crypto;
use domain::fleet::tenant::{AppSpec, AppliedTenant, Manifest, PasswordSpec, StoreSpec, UserSpec};
use domain::now_millis;

impl Db {
    /// Applies validated manifests in one transaction. Applying the same manifests again writes
    /// nothing: rows are only touched when a value differs, and a password that still verifies
    /// against the stored hash keeps that hash (a fresh salt would change the row every time).
    pub async fn apply_manifests(
        &self,
        manifests: &[Manifest],
        pbkdf2_iterations: u32,
    ) -> Result<Vec<AppliedTenant>, DbError> {
        let mut tx = self.begin().await?;
        let mut applied = Vec::with_capacity(manifests.len());
        for manifest in manifests {
            applied.push(self.apply_one(&mut tx, manifest, pbkdf2_iterations).await?);
        }
        tx.commit().await?;
        Ok(applied)
    }

    pub(crate) async fn apply_one(
        &self,
        tx: &mut Tx,
        m: &Manifest,
        iterations: u32,
    ) -> Result<AppliedTenant, DbError> {
        let now = now_millis();
        let writes_before = tx.writes();
        let merchant_id = apply_merchant(tx, m, now).await?;
        let mut stores = BTreeMap::new();
        for spec in &m.stores {
            let id = apply_store(tx, merchant_id, spec, now).await?;
            stores.insert(spec.key.clone(), id);
        }
        let mut users = BTreeMap::new();
        for spec in &m.users {
            let id = self
                .apply_user(tx, merchant_id, spec, iterations, now)
                .await?;
            users.insert(spec.email.clone(), id);
        }
        let mut applications = BTreeMap::new();
        for spec in &m.applications {
            let id = apply_application(tx, merchant_id, &m.file, spec, now).await?;
            applications.insert(spec.client_id.clone(), id);
        }
        if tx.writes() > writes_before {
            // Replicas already serving this merchant reload it, and forget the tokens and
            // clients they cached (a role, a secret or a redirect may have changed).
            tx.claim_merchant(merchant_id).await?;
            tx.announce(Announcement::TokensRevoked(None));
        }
        Ok(AppliedTenant {
            file: m.file.clone(),
            key: m.merchant_key.clone(),
            id: merchant_id,
            stores,
            users,
            applications,
        })
    }

    async fn apply_user(
        &self,
        tx: &mut Tx,
        merchant_id: i64,
        spec: &UserSpec,
        iterations: u32,
        now: i64,
    ) -> Result<i64, DbError> {
        type Row = (i64, i64, Option<String>, Option<String>, Option<String>);
        let existing: Option<Row> = sqlx::query_as(
            "SELECT id, role_id, password_hash, first_name, last_name FROM employees \
             WHERE merchant_id = $1 AND email = $2",
        )
        .bind(merchant_id)
        .bind(&spec.email)
        .fetch_optional(tx.conn()?)
        .await?;
        let stored_hash = existing.as_ref().and_then(|row| row.2.clone());
        let hash =
            password_hash_for(spec.password.clone(), stored_hash.clone(), iterations).await?;
        match existing {
            Some((id, role_id, _, first, last)) => {
                // Names set through the API survive a manifest that leaves them out.
                let new_first = spec.first_name.clone().or(first.clone());
                let new_last = spec.last_name.clone().or(last.clone());
                if role_id != spec.role.id()
                    || stored_hash.as_deref() != Some(hash.as_str())
                    || new_first != first
                    || new_last != last
                {
                    tx.note_write();
                    sqlx::query(
                        "UPDATE employees SET role_id = $1, password_hash = $2, first_name = $3, \
                         last_name = $4 WHERE merchant_id = $5 AND id = $6",
                    )
                    .bind(spec.role.id())
                    .bind(&hash)
                    .bind(&new_first)
                    .bind(&new_last)
                    .bind(merchant_id)
                    .bind(id)
                    .execute(tx.conn()?)
                    .await?;
                }
                Ok(id)
            }
            None => {
                let id = tx.take_id().await?;
                tx.note_write();
                sqlx::query(
                    "INSERT INTO employees (merchant_id, id, email, first_name, last_name, role_id, \
                     password_hash, active_date) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                )
                .bind(merchant_id)
                .bind(id)
                .bind(&spec.email)
                .bind(&spec.first_name)
                .bind(&spec.last_name)
                .bind(spec.role.id())
                .bind(&hash)
                .bind(now)
                .execute(tx.conn()?)
                .await?;
                Ok(id)
            }
        }
    }
}

/// The hash to store for a manifest password: the stored one when it still verifies, else a new
/// one. PBKDF2 is CPU-bound, so it runs off the async workers.
async fn password_hash_for(
    password: PasswordSpec,
    stored: Option<String>,
    iterations: u32,
) -> Result<String, DbError> {
    match password {
        PasswordSpec::Hash(hash) => Ok(hash),
        PasswordSpec::Plain(plain) => tokio::task::spawn_blocking(move || match stored {
            Some(stored) if crypto::verify_password(&plain, &stored) => stored,
            _ => crypto::hash_password(&plain, iterations),
        })
        .await
        .map_err(|e| DbError::Corrupt(format!("password hashing task failed: {e}"))),
    }
}

/// The merchant of a manifest, created or changed (name, `legacy_clients`); its id.
async fn apply_merchant(tx: &mut Tx, m: &Manifest, now: i64) -> Result<i64, DbError> {
    let legacy = i64::from(m.legacy_clients);
    let sales = serde_json::to_string(&m.sales)
        .map_err(|e| DbError::Corrupt(format!("sales settings: {e}")))?;
    let existing: Option<(i64, String, i64, String)> = sqlx::query_as(
        "SELECT id, name, legacy_clients, sales FROM merchants WHERE manifest_key = $1",
    )
    .bind(&m.merchant_key)
    .fetch_optional(tx.conn()?)
    .await?;
    if let Some((id, name, was_legacy, was_sales)) = existing {
        if name != m.merchant_name || was_legacy != legacy || was_sales != sales {
            tx.note_write();
            sqlx::query(
                "UPDATE merchants SET name = $1, legacy_clients = $2, sales = $3, updated_at = $4 \
                 WHERE id = $5",
            )
            .bind(&m.merchant_name)
            .bind(legacy)
            .bind(&sales)
            .bind(now)
            .bind(id)
            .execute(tx.conn()?)
            .await?;
        }
        return Ok(id);
    }
    let id = tx.take_id().await?;
    tx.note_write();
    sqlx::query(
        "INSERT INTO merchants (id, manifest_key, name, legacy_clients, sales, created_at, \
         updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)",
    )
    .bind(id)
    .bind(&m.merchant_key)
    .bind(&m.merchant_name)
    .bind(legacy)
    .bind(&sales)
    .bind(now)
    .execute(tx.conn()?)
    .await?;
    Ok(id)
}

/// A manifest store, created or renamed; its id.
async fn apply_store(
    tx: &mut Tx,
    merchant_id: i64,
    spec: &StoreSpec,
    now: i64,
) -> Result<i64, DbError> {
    let existing: Option<(i64, String)> =
        sqlx::query_as("SELECT id, name FROM stores WHERE merchant_id = $1 AND manifest_key = $2")
            .bind(merchant_id)
            .bind(&spec.key)
            .fetch_optional(tx.conn()?)
            .await?;
    if let Some((id, name)) = existing {
        if name != spec.name {
            tx.note_write();
            sqlx::query("UPDATE stores SET name = $1 WHERE merchant_id = $2 AND id = $3")
                .bind(&spec.name)
                .bind(merchant_id)
                .bind(id)
                .execute(tx.conn()?)
                .await?;
        }
        return Ok(id);
    }
    let id = tx.take_id().await?;
    tx.note_write();
    sqlx::query(
        "INSERT INTO stores (merchant_id, id, manifest_key, name, active_date) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(merchant_id)
    .bind(id)
    .bind(&spec.key)
    .bind(&spec.name)
    .bind(now)
    .execute(tx.conn()?)
    .await?;
    Ok(id)
}

/// A manifest application, registered or brought up to date; its id. A client id another
/// merchant registered is refused.
async fn apply_application(
    tx: &mut Tx,
    merchant_id: i64,
    file: &str,
    spec: &AppSpec,
    now: i64,
) -> Result<i64, DbError> {
    let uris =
        serde_json::to_string(&spec.redirect_uris).map_err(|e| DbError::Corrupt(e.to_string()))?;
    let existing: Option<(i64, i64, String, String, String, Option<String>)> = sqlx::query_as(
        "SELECT merchant_id, id, secret_hash, name, redirect_uris, description \
         FROM applications WHERE client_id = $1",
    )
    .bind(&spec.client_id)
    .fetch_optional(tx.conn()?)
    .await?;
    match existing {
        Some((owner, ..)) if owner != merchant_id => Err(DbError::Conflict(format!(
            "{file}: applications ({}): client_id: already registered by another merchant",
            spec.client_id
        ))),
        Some((_, id, hash, name, stored_uris, description)) => {
            let same = hash == spec.secret_hash
                && name == spec.name
                && stored_uris == uris
                && description == spec.description;
            if !same {
                tx.note_write();
                sqlx::query(
                    "UPDATE applications SET secret_hash = $1, name = $2, \
                     redirect_uris = $3, description = $4 \
                     WHERE merchant_id = $5 AND id = $6",
                )
                .bind(&spec.secret_hash)
                .bind(&spec.name)
                .bind(&uris)
                .bind(&spec.description)
                .bind(merchant_id)
                .bind(id)
                .execute(tx.conn()?)
                .await?;
            }
            Ok(id)
        }
        None => {
            let id = tx.take_id().await?;
            tx.note_write();
            sqlx::query(
                "INSERT INTO applications (merchant_id, id, client_id, secret_hash, name, \
                 description, redirect_uris, active_date) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(merchant_id)
            .bind(id)
            .bind(&spec.client_id)
            .bind(&spec.secret_hash)
            .bind(&spec.name)
            .bind(&spec.description)
            .bind(&uris)
            .bind(now)
            .execute(tx.conn()?)
            .await?;
            Ok(id)
        }
    }
}
