//! OAuth state: applications as clients, sign-in sessions, codes, token families. Only hashes of
//! codes and tokens are stored. The grants' steps ([`TokenSteps`]) run on a [`Tx`]; "take" is
//! one conditional UPDATE whose row count decides who won, so the guarantee holds across
//! processes on one database.

use std::time::Instant;

use sqlx::AnyConnection;

use crate::{Db, DbError};
use domain::now_millis;
use domain::oauth::token::{
    AccessTokenRecord, Client, FamilyRecord, GrantSubject, NewFamily, NewPair, SessionPurpose,
    SessionRecord, SignInCandidate, TokenInfo,
};

type FamilyRow = (String, i64, i64, i64, String, Option<i64>);

pub(super) fn family_from(row: FamilyRow) -> FamilyRecord {
    let (id, merchant_id, employee_id, application_id, scope, revoked_at) = row;
    FamilyRecord {
        id,
        merchant_id,
        employee_id,
        application_id,
        scope,
        revoked: revoked_at.is_some(),
    }
}

pub(super) async fn load_family(
    conn: &mut AnyConnection,
    id: &str,
) -> Result<Option<FamilyRecord>, DbError> {
    let row: Option<FamilyRow> = sqlx::query_as(
        "SELECT id, merchant_id, employee_id, application_id, scope, revoked_at \
         FROM oauth_families WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(family_from))
}

pub(super) async fn insert_family(
    conn: &mut AnyConnection,
    family: &NewFamily,
    now: i64,
) -> Result<(), DbError> {
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
    .execute(&mut *conn)
    .await?;
    Ok(())
}

pub(super) async fn insert_access_token(
    conn: &mut AnyConnection,
    hash: &str,
    family: (&str, i64, i64, i64),
    scope: &str,
    now: i64,
    expires_at: i64,
) -> Result<(), DbError> {
    let (family_id, merchant_id, employee_id, application_id) = family;
    sqlx::query(
        "INSERT INTO access_tokens (hash, family_id, merchant_id, employee_id, application_id, \
         scope, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(hash)
    .bind(family_id)
    .bind(merchant_id)
    .bind(employee_id)
    .bind(application_id)
    .bind(scope)
    .bind(now)
    .bind(expires_at)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

pub(super) async fn revoke_family(
    conn: &mut AnyConnection,
    family_id: &str,
    now: i64,
) -> Result<Vec<String>, DbError> {
    sqlx::query("UPDATE oauth_families SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL")
        .bind(family_id)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    revoke_access_tokens_of(conn, family_id, now).await
}

/// Revokes the live access tokens of a family; their hashes, for cache eviction.
pub(crate) async fn revoke_access_tokens_of(
    conn: &mut AnyConnection,
    family_id: &str,
    now: i64,
) -> Result<Vec<String>, DbError> {
    let hashes: Vec<(String,)> = sqlx::query_as(
        "UPDATE access_tokens SET revoked_at = $2 WHERE family_id = $1 AND revoked_at IS NULL \
         RETURNING hash",
    )
    .bind(family_id)
    .bind(now)
    .fetch_all(&mut *conn)
    .await?;
    Ok(hashes.into_iter().map(|(h,)| h).collect())
}

impl Db {
    /// The merchant (by manifest key), its live application (by client id) and its live
    /// employee (by email) an operator's grant is for. Each missing one is named.
    pub async fn grant_subject(
        &self,
        merchant_key: &str,
        client_id: &str,
        email: &str,
    ) -> Result<GrantSubject, DbError> {
        let merchant_id = self.merchant_id_by_key(merchant_key).await?;
        let application: Option<(i64,)> = sqlx::query_as(
            "SELECT id FROM applications \
             WHERE merchant_id = $1 AND client_id = $2 AND delete_date IS NULL",
        )
        .bind(merchant_id)
        .bind(client_id)
        .fetch_optional(self.pool())
        .await?;
        let (application_id,) = application.ok_or_else(|| {
            DbError::Conflict(format!(
                "{merchant_key} has no live application {client_id}"
            ))
        })?;
        let employee: Option<(i64, i64)> = sqlx::query_as(
            "SELECT id, role_id FROM employees WHERE merchant_id = $1 AND email = $2 \
             AND delete_date IS NULL AND (exit_date IS NULL OR exit_date > $3)",
        )
        .bind(merchant_id)
        .bind(email)
        .bind(now_millis())
        .fetch_optional(self.pool())
        .await?;
        let (employee_id, role_id) = employee.ok_or_else(|| {
            DbError::Conflict(format!("{merchant_key} has no current employee {email}"))
        })?;
        Ok(GrantSubject {
            merchant_id,
            application_id,
            employee_id,
            role_id,
        })
    }

    /// Stores an operator's grant: a new family with its first pair.
    pub async fn issue_family_pair(
        &self,
        family: &NewFamily,
        pair: &NewPair,
    ) -> Result<(), DbError> {
        let mut tx = self.begin().await?;
        tx.insert_family_with_pair(family, pair).await?;
        tx.commit().await
    }

    /// Starts a family with an access token and no code, in a transaction of its own (tests,
    /// benchmarks, operator tools).
    pub async fn issue_access_token(
        &self,
        family: &NewFamily,
        access_hash: &str,
        expires_at: i64,
    ) -> Result<(), DbError> {
        let mut tx = self.begin().await?;
        tx.insert_family_with_access_token(family, access_hash, expires_at)
            .await?;
        tx.commit().await
    }

    /// A live application by client id.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn find_client(&self, client_id: &str) -> Result<Option<Client>, DbError> {
        if !crate::storable(client_id) {
            return Ok(None);
        }
        let started = Instant::now();
        let row: Option<(i64, i64, String, String, String, String, i64)> = sqlx::query_as(
            "SELECT a.merchant_id, a.id, a.client_id, a.name, a.secret_hash, a.redirect_uris, \
             m.legacy_clients FROM applications a JOIN merchants m ON m.id = a.merchant_id \
             WHERE a.client_id = $1 AND a.delete_date IS NULL",
        )
        .bind(client_id)
        .fetch_optional(self.pool())
        .await?;
        self.observe("find_client", started);
        row.map(
            |(merchant_id, id, client_id, name, secret_hash, uris, legacy)| {
                let redirect_uris = serde_json::from_str(&uris)
                    .map_err(|e| DbError::Corrupt(format!("redirect_uris of {client_id}: {e}")))?;
                Ok(Client {
                    merchant_id,
                    id,
                    client_id,
                    name,
                    secret_hash,
                    redirect_uris,
                    legacy: legacy != 0,
                })
            },
        )
        .transpose()
    }

    /// Whether the merchant that registered an application lets it use the old Shopwave
    /// clients' conventions.
    pub async fn application_is_legacy(&self, application_id: i64) -> Result<bool, DbError> {
        let row: Option<(i64,)> = sqlx::query_as(
            "SELECT m.legacy_clients FROM applications a JOIN merchants m ON m.id = a.merchant_id \
             WHERE a.id = $1",
        )
        .bind(application_id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.is_some_and(|(legacy,)| legacy != 0))
    }

    /// Live employees with this (lower-cased) email, across merchants.
    pub async fn sign_in_candidates(&self, email: &str) -> Result<Vec<SignInCandidate>, DbError> {
        if !crate::storable(email) {
            return Ok(Vec::new());
        }
        type Row = (i64, i64, i64, Option<String>, Option<i64>);
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT merchant_id, id, role_id, password_hash, exit_date FROM employees \
             WHERE email = $1 AND delete_date IS NULL ORDER BY id",
        )
        .bind(email)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(
                |(merchant_id, employee_id, role_id, password_hash, exit_date)| SignInCandidate {
                    merchant_id,
                    employee_id,
                    role_id,
                    password_hash,
                    exit_date,
                },
            )
            .collect())
    }

    /// A live session for `purpose`, with its employee's current role.
    pub async fn find_session(
        &self,
        hash: &str,
        purpose: SessionPurpose,
    ) -> Result<Option<SessionRecord>, DbError> {
        let row: Option<(i64, i64, String, i64, Option<i64>)> = sqlx::query_as(
            "SELECT s.merchant_id, s.employee_id, e.email, e.role_id, e.exit_date \
             FROM oauth_sessions s \
             JOIN employees e ON e.merchant_id = s.merchant_id AND e.id = s.employee_id \
             WHERE s.hash = $1 AND s.purpose = $2 AND s.expires_at > $3 \
               AND e.delete_date IS NULL",
        )
        .bind(hash)
        .bind(purpose.as_str())
        .bind(now_millis())
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(
            |(merchant_id, employee_id, email, role_id, exit_date)| SessionRecord {
                merchant_id,
                employee_id,
                email,
                role_id,
                exit_date,
            },
        ))
    }

    /// Looks up a live access token by hash: not revoked, its family not revoked, its employee and
    /// application not deleted. Expiry is left to the caller so it can tell "expired" apart.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn find_access_token(
        &self,
        hash: &str,
    ) -> Result<Option<AccessTokenRecord>, DbError> {
        let started = Instant::now();
        type Row = (
            String,
            i64,
            i64,
            i64,
            i64,
            String,
            i64,
            Option<i64>,
            Option<i64>,
        );
        let row: Option<Row> = sqlx::query_as(
            "SELECT a.family_id, a.merchant_id, a.employee_id, a.application_id, e.role_id, \
                    a.scope, a.expires_at, e.exit_date, m.suspend_date \
             FROM access_tokens a \
             JOIN oauth_families f ON f.id = a.family_id \
             JOIN employees e ON e.merchant_id = a.merchant_id AND e.id = a.employee_id \
             JOIN applications ap ON ap.id = a.application_id \
             JOIN merchants m ON m.id = a.merchant_id \
             WHERE a.hash = $1 AND a.revoked_at IS NULL AND f.revoked_at IS NULL \
               AND e.delete_date IS NULL AND ap.delete_date IS NULL",
        )
        .bind(hash)
        .fetch_optional(self.pool())
        .await?;
        self.observe("find_access_token", started);
        Ok(row.map(|row| {
            let (family_id, merchant_id, employee_id, application_id, role_id, scope, expires_at) =
                (row.0, row.1, row.2, row.3, row.4, row.5, row.6);
            AccessTokenRecord {
                family_id,
                merchant_id,
                employee_id,
                application_id,
                role_id,
                scope,
                expires_at,
                exit_date: row.7,
                suspended: row.8.is_some(),
            }
        }))
    }

    /// A live (unrevoked, unexpired, unused) access or refresh token of `application_id`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn token_info(
        &self,
        hash: &str,
        application_id: i64,
    ) -> Result<Option<TokenInfo>, DbError> {
        let now = now_millis();
        let mut conn = self.pool().acquire().await?;
        let access: Option<(String, String, i64, i64)> = sqlx::query_as(
            "SELECT family_id, scope, created_at, expires_at FROM access_tokens \
             WHERE hash = $1 AND revoked_at IS NULL AND expires_at > $2",
        )
        .bind(hash)
        .bind(now)
        .fetch_optional(&mut *conn)
        .await?;
        let (kind, family_id, scope, issued_at, expires_at) = match access {
            Some((f, s, i, e)) => ("access_token", f, Some(s), i, e),
            None => {
                let refresh: Option<(String, i64, i64)> = sqlx::query_as(
                    "SELECT family_id, created_at, expires_at FROM refresh_tokens \
                     WHERE hash = $1 AND used_at IS NULL AND expires_at > $2",
                )
                .bind(hash)
                .bind(now)
                .fetch_optional(&mut *conn)
                .await?;
                match refresh {
                    Some((f, i, e)) => ("refresh_token", f, None, i, e),
                    None => return Ok(None),
                }
            }
        };
        let Some(family) = load_family(&mut conn, &family_id).await? else {
            return Ok(None);
        };
        if family.revoked || family.application_id != application_id {
            return Ok(None);
        }
        // A suspended merchant's tokens are refused by the API: not active (docs/operator.md).
        let suspended: Option<(Option<i64>,)> =
            sqlx::query_as("SELECT suspend_date FROM merchants WHERE id = $1")
                .bind(family.merchant_id)
                .fetch_optional(&mut *conn)
                .await?;
        if suspended.is_some_and(|(date,)| date.is_some()) {
            return Ok(None);
        }
        Ok(Some(TokenInfo {
            kind,
            scope: scope.unwrap_or_else(|| family.scope.clone()),
            family,
            issued_at,
            expires_at,
        }))
    }
}

mod steps;
mod writes;
