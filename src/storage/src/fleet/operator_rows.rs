//! The operator's realm: its tokens, merchants created and suspended through it, and what each
//! merchant holds (docs/operator.md).

use crate::rows::in_list;
use std::collections::HashSet;

use crate::{Announcement, Db, DbError, Tx};
use domain::fleet::operator::{MerchantSummary, OperatorToken, StoredUsage};
use domain::fleet::tenant::{AppliedTenant, Manifest};
use domain::now_millis;

/// Why a new merchant's key or one of its client ids is taken, if it is: by a stored merchant or
/// application, or by an earlier object of the request (`keys`, `client_ids`).
async fn taken_by(
    tx: &mut Tx,
    manifest: &Manifest,
    keys: &HashSet<String>,
    client_ids: &HashSet<String>,
) -> Result<Option<String>, DbError> {
    let key = &manifest.merchant_key;
    if keys.contains(key) {
        return Ok(Some(format!(
            "the key {key} is used by another object of the request"
        )));
    }
    let existing: Option<(i64,)> =
        sqlx::query_as("SELECT id FROM merchants WHERE manifest_key = $1")
            .bind(key)
            .fetch_optional(tx.conn()?)
            .await?;
    if let Some((id,)) = existing {
        return Ok(Some(format!("merchant {id} already has the key {key}")));
    }
    for app in &manifest.applications {
        let client_id = &app.client_id;
        if client_ids.contains(client_id) {
            return Ok(Some(format!(
                "applications ({client_id}): client_id: used by another object of the request"
            )));
        }
        let registered: Option<(i64,)> =
            sqlx::query_as("SELECT merchant_id FROM applications WHERE client_id = $1")
                .bind(client_id)
                .fetch_optional(tx.conn()?)
                .await?;
        if registered.is_some() {
            return Ok(Some(format!(
                "applications ({client_id}): client_id: already registered by another merchant"
            )));
        }
    }
    Ok(None)
}

type SummaryRow = (
    i64,
    String,
    String,
    i64,
    Option<i64>,
    Option<i64>,
    i64,
    i64,
    i64,
);

impl Db {
    /// Keeps a new operator token by the SHA-256 of its text.
    pub async fn insert_operator_token(
        &self,
        hash: &str,
        token: &OperatorToken,
    ) -> Result<(), DbError> {
        sqlx::query(
            "INSERT INTO operator_tokens (hash, name, created_at, expires_at) \
             VALUES ($1, $2, $3, $4)",
        )
        .bind(hash)
        .bind(&token.name)
        .bind(now_millis())
        .bind(token.expires_at)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// A token of the operator's that was not revoked (expiry is left to the caller).
    pub async fn operator_token(&self, hash: &str) -> Result<Option<OperatorToken>, DbError> {
        let row: Option<(String, i64)> = sqlx::query_as(
            "SELECT name, expires_at FROM operator_tokens WHERE hash = $1 AND revoked_at IS NULL",
        )
        .bind(hash)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(|(name, expires_at)| OperatorToken { name, expires_at }))
    }

    /// Creates merchants from manifests, all in one transaction: each is created, or refused
    /// (`Err`: why) when its key or one of its applications' client ids is taken, by a merchant
    /// already stored or by an earlier object of the same request. Nothing is applied before
    /// every check of an object passed, so a refusal leaves no partial merchant. A manifest file
    /// changes a merchant; the operator only creates.
    pub async fn create_merchants(
        &self,
        manifests: &[&Manifest],
        pbkdf2_iterations: u32,
    ) -> Result<Vec<Result<AppliedTenant, String>>, DbError> {
        let mut tx = self.begin().await?;
        let mut outcomes = Vec::with_capacity(manifests.len());
        let mut keys = HashSet::new();
        let mut client_ids = HashSet::new();
        for manifest in manifests {
            let taken = taken_by(&mut tx, manifest, &keys, &client_ids).await?;
            outcomes.push(match taken {
                Some(why) => Err(why),
                None => {
                    keys.insert(manifest.merchant_key.clone());
                    client_ids.extend(manifest.applications.iter().map(|a| a.client_id.clone()));
                    Ok(self.apply_one(&mut tx, manifest, pbkdf2_iterations).await?)
                }
            });
        }
        tx.commit().await?;
        Ok(outcomes)
    }

    /// Suspends (`Some(date)`) or resumes (`None`) these merchants; the ids that exist. Every
    /// replica forgets the access tokens it cached, so the next request of each reads the
    /// merchant's state with its token.
    pub async fn set_suspended(
        &self,
        ids: &[i64],
        suspend_date: Option<i64>,
    ) -> Result<Vec<i64>, DbError> {
        let mut tx = self.begin().await?;
        let mut found = Vec::with_capacity(ids.len());
        for &id in ids {
            // A suspension already in force keeps its date.
            let row: Option<(i64,)> = match suspend_date {
                Some(date) => sqlx::query_as(
                    "UPDATE merchants SET suspend_date = COALESCE(suspend_date, $1) \
                     WHERE id = $2 RETURNING id",
                )
                .bind(date)
                .bind(id),
                // Resuming also cancels a deletion not yet carried out.
                None => sqlx::query_as(
                    "UPDATE merchants SET suspend_date = NULL, delete_after = NULL \
                     WHERE id = $1 RETURNING id",
                )
                .bind(id),
            }
            .fetch_optional(tx.conn()?)
            .await?;
            found.extend(row.map(|(id,)| id));
        }
        if !found.is_empty() {
            tx.note_write();
            tx.announce(Announcement::TokensRevoked(None));
        }
        tx.commit().await?;
        Ok(found)
    }

    /// Every merchant (or those of `ids`) with what it holds, by id.
    /// Deletes these merchants after `delete_after` (Unix millis): suspended now, their rows
    /// removed by the sweep once the time has passed. A deletion already scheduled keeps its
    /// time. The ids that exist, with their time.
    pub async fn schedule_deletion(
        &self,
        ids: &[i64],
        delete_after: i64,
    ) -> Result<Vec<(i64, i64)>, DbError> {
        let mut tx = self.begin().await?;
        let mut found = Vec::with_capacity(ids.len());
        for &id in ids {
            let row: Option<(i64, i64)> = sqlx::query_as(
                "UPDATE merchants SET suspend_date = COALESCE(suspend_date, $1), \
                   delete_after = COALESCE(delete_after, $2) \
                 WHERE id = $3 RETURNING id, delete_after",
            )
            .bind(now_millis())
            .bind(delete_after)
            .bind(id)
            .fetch_optional(tx.conn()?)
            .await?;
            found.extend(row);
        }
        if !found.is_empty() {
            tx.note_write();
            tx.announce(Announcement::TokensRevoked(None));
        }
        tx.commit().await?;
        Ok(found)
    }

    /// Merchants whose deletion time has passed.
    pub async fn merchants_due_for_deletion(&self, now: i64) -> Result<Vec<i64>, DbError> {
        let rows: Vec<(i64,)> = sqlx::query_as(
            "SELECT id FROM merchants WHERE delete_after IS NOT NULL AND delete_after <= $1 \
             ORDER BY id",
        )
        .bind(now)
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    /// Merchants by id after `after`, at most `limit`; only those `ids` names when given. The
    /// counts are made for the page's merchants only, so a page costs the same at any fleet
    /// size.
    pub async fn merchant_summaries(
        &self,
        ids: Option<&[i64]>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<MerchantSummary>, DbError> {
        let filter = ids.map_or(String::new(), |ids| in_list("id", 3, ids.len()));
        let sql = format!(
            "SELECT m.id, m.manifest_key, m.name, m.created_at, m.suspend_date, m.delete_after, \
               (SELECT COUNT(*) FROM products p \
                 WHERE p.merchant_id = m.id AND p.delete_date IS NULL), \
               (SELECT COUNT(*) FROM baskets b WHERE b.merchant_id = m.id AND b.completed = 1), \
               (SELECT CAST(COALESCE(SUM(f.size), 0) AS BIGINT) FROM files f \
                 WHERE f.merchant_id = m.id) \
             FROM (SELECT * FROM merchants WHERE id > $1{filter} ORDER BY id LIMIT $2) m \
             ORDER BY m.id"
        );
        let mut query = sqlx::query_as::<_, SummaryRow>(&sql)
            .bind(after)
            .bind(limit);
        for id in ids.unwrap_or_default() {
            query = query.bind(*id);
        }
        let rows = query.fetch_all(self.pool()).await?;
        Ok(rows
            .into_iter()
            .map(
                |(
                    id,
                    key,
                    name,
                    created_at,
                    suspend_date,
                    delete_after,
                    products,
                    sales,
                    file_bytes,
                )| {
                    MerchantSummary {
                        id,
                        key,
                        name,
                        created_at,
                        suspend_date,
                        delete_after,
                        stored: StoredUsage {
                            products,
                            sales,
                            file_bytes,
                        },
                    }
                },
            )
            .collect())
    }
}
