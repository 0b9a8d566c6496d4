//! OAuth families, codes and tokens. Only hashes are stored.

use std::time::Instant;

use super::{now_millis, Store, StoreError};

/// What an access token grants, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessTokenRecord {
    pub family_id: String,
    pub merchant_id: i64,
    pub employee_id: i64,
    pub application_id: i64,
    pub role_id: i64,
    pub scope: String,
    pub expires_at: i64,
    /// The employee's exit date: a token stops working once it has passed.
    pub exit_date: Option<i64>,
}

/// Everything a new token family needs.
#[derive(Debug, Clone)]
pub struct NewFamily {
    pub id: String,
    pub merchant_id: i64,
    pub employee_id: i64,
    pub application_id: i64,
    pub scope: String,
}

impl Store {
    /// Looks up a live access token by hash: not revoked, its family not revoked, its employee and
    /// application not deleted. Expiry is left to the caller so it can tell "expired" apart.
    pub async fn find_access_token(
        &self,
        hash: &str,
    ) -> Result<Option<AccessTokenRecord>, StoreError> {
        let started = Instant::now();
        type Row = (String, i64, i64, i64, i64, String, i64, Option<i64>);
        let row: Option<Row> = sqlx::query_as(
            "SELECT a.family_id, a.merchant_id, a.employee_id, a.application_id, e.role_id, \
                    a.scope, a.expires_at, e.exit_date \
             FROM access_tokens a \
             JOIN oauth_families f ON f.id = a.family_id \
             JOIN employees e ON e.merchant_id = a.merchant_id AND e.id = a.employee_id \
             JOIN applications ap ON ap.id = a.application_id \
             WHERE a.hash = $1 AND a.revoked_at IS NULL AND f.revoked_at IS NULL \
               AND e.delete_date IS NULL AND ap.delete_date IS NULL",
        )
        .bind(hash)
        .fetch_optional(&self.pool)
        .await?;
        self.observe("find_access_token", started);
        Ok(row.map(
            |(
                family_id,
                merchant_id,
                employee_id,
                application_id,
                role_id,
                scope,
                expires_at,
                exit_date,
            )| {
                AccessTokenRecord {
                    family_id,
                    merchant_id,
                    employee_id,
                    application_id,
                    role_id,
                    scope,
                    expires_at,
                    exit_date,
                }
            },
        ))
    }

    /// Starts a family and stores its first access token, for grants that need no code (tests
    /// and operator tooling). The authorization-code grant starts families with a code instead.
    pub async fn insert_family_with_access_token(
        &self,
        family: &NewFamily,
        access_hash: &str,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        let now = now_millis();
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO oauth_families (id, merchant_id, employee_id, application_id, scope, \
             created_at) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&family.id)
        .bind(family.merchant_id)
        .bind(family.employee_id)
        .bind(family.application_id)
        .bind(&family.scope)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO access_tokens (hash, family_id, merchant_id, employee_id, application_id, \
             scope, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(access_hash)
        .bind(&family.id)
        .bind(family.merchant_id)
        .bind(family.employee_id)
        .bind(family.application_id)
        .bind(&family.scope)
        .bind(now)
        .bind(expires_at)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }
}
