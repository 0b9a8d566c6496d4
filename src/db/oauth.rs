//! OAuth state: applications, sign-in sessions, codes, token families. Only hashes of codes and
//! tokens are stored. "Take" is one conditional UPDATE whose row count decides who won, inside a
//! transaction, so the guarantee holds across processes on one database.

use std::time::Instant;

use sqlx::AnyConnection;

use super::{now_millis, Db, DbError};

/// A registered, live application.
#[derive(Debug, Clone)]
pub struct ApplicationRecord {
    pub merchant_id: i64,
    pub id: i64,
    pub client_id: String,
    pub name: String,
    pub secret_hash: String,
    pub redirect_uris: Vec<String>,
}

/// An employee who might be signing in with an email.
#[derive(Debug, Clone)]
pub struct SignInCandidate {
    pub merchant_id: i64,
    pub employee_id: i64,
    pub role_id: i64,
    pub password_hash: Option<String>,
    pub exit_date: Option<i64>,
}

/// A signed-in browser session, with the employee's current role.
#[derive(Debug, Clone)]
pub struct SessionRecord {
    pub merchant_id: i64,
    pub employee_id: i64,
    pub role_id: i64,
    pub exit_date: Option<i64>,
}

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

/// A family as stored.
#[derive(Debug, Clone)]
pub struct FamilyRecord {
    pub id: String,
    pub merchant_id: i64,
    pub employee_id: i64,
    pub application_id: i64,
    pub scope: String,
    pub revoked: bool,
}

/// The hashes and lifetimes of a pair about to be issued.
#[derive(Debug, Clone)]
pub struct NewPair {
    pub access_hash: String,
    pub access_expires_at: i64,
    pub access_scope: String,
    pub refresh_hash: String,
    pub refresh_expires_at: i64,
}

/// The stored facts about a code that the grant checks before accepting it.
#[derive(Debug, Clone)]
pub struct CodeFacts {
    pub redirect_uri: String,
    pub code_challenge: Option<String>,
}

#[derive(Debug)]
pub enum CodeExchange {
    /// The code was taken and the pair stored.
    Issued(FamilyRecord),
    /// The code had been used before: its family is now revoked.
    Reused { revoked_access_hashes: Vec<String> },
    /// Unknown, expired, revoked, or refused by the check (the code stays usable then).
    Refused(String),
}

#[derive(Debug)]
pub enum RefreshExchange {
    /// The token was taken and the successor pair stored with this access scope.
    Rotated {
        family: FamilyRecord,
        scope: String,
    },
    /// An immediate predecessor presented again inside the grace: here is the sealed successor.
    Retry {
        family: FamilyRecord,
        sealed: String,
    },
    /// Reuse outside the grace, or of an older generation: the family is now revoked.
    Reused {
        revoked_access_hashes: Vec<String>,
    },
    /// The requested scope is wider than the grant (nothing was taken).
    ScopeRefused(String),
    Refused(String),
}

/// What introspection may say about a token.
#[derive(Debug, Clone)]
pub struct TokenInfo {
    pub kind: &'static str,
    pub family: FamilyRecord,
    pub scope: String,
    pub issued_at: i64,
    pub expires_at: i64,
}

type FamilyRow = (String, i64, i64, i64, String, Option<i64>);

fn family_from(row: FamilyRow) -> FamilyRecord {
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

async fn load_family(conn: &mut AnyConnection, id: &str) -> Result<Option<FamilyRecord>, DbError> {
    let row: Option<FamilyRow> = sqlx::query_as(
        "SELECT id, merchant_id, employee_id, application_id, scope, revoked_at \
         FROM oauth_families WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(family_from))
}

/// The employee's role while they may still use tokens (not deleted, not past their exit date).
async fn active_role(
    conn: &mut AnyConnection,
    family: &FamilyRecord,
    now: i64,
) -> Result<Option<i64>, DbError> {
    let row: Option<(i64, Option<i64>)> = sqlx::query_as(
        "SELECT role_id, exit_date FROM employees \
         WHERE merchant_id = $1 AND id = $2 AND delete_date IS NULL",
    )
    .bind(family.merchant_id)
    .bind(family.employee_id)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.and_then(|(role, exit)| (exit.is_none_or(|e| e > now)).then_some(role)))
}

/// Revokes a family and every access token in it; returns the access hashes so caches can evict.
async fn revoke_family(
    conn: &mut AnyConnection,
    family_id: &str,
    now: i64,
) -> Result<Vec<String>, DbError> {
    sqlx::query("UPDATE oauth_families SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL")
        .bind(family_id)
        .bind(now)
        .execute(&mut *conn)
        .await?;
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

async fn insert_pair(
    conn: &mut AnyConnection,
    family: &FamilyRecord,
    pair: &NewPair,
    now: i64,
) -> Result<(), DbError> {
    sqlx::query(
        "INSERT INTO access_tokens (hash, family_id, merchant_id, employee_id, application_id, \
         scope, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&pair.access_hash)
    .bind(&family.id)
    .bind(family.merchant_id)
    .bind(family.employee_id)
    .bind(family.application_id)
    .bind(&pair.access_scope)
    .bind(now)
    .bind(pair.access_expires_at)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "INSERT INTO refresh_tokens (hash, family_id, created_at, expires_at) \
         VALUES ($1, $2, $3, $4)",
    )
    .bind(&pair.refresh_hash)
    .bind(&family.id)
    .bind(now)
    .bind(pair.refresh_expires_at)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

async fn insert_family(
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

impl Db {
    /// A live application by client id.
    pub async fn find_application(
        &self,
        client_id: &str,
    ) -> Result<Option<ApplicationRecord>, DbError> {
        let started = Instant::now();
        let row: Option<(i64, i64, String, String, String, String)> = sqlx::query_as(
            "SELECT merchant_id, id, client_id, name, secret_hash, redirect_uris FROM applications \
             WHERE client_id = $1 AND delete_date IS NULL",
        )
        .bind(client_id)
        .fetch_optional(&self.pool)
        .await?;
        self.observe("find_application", started);
        row.map(|(merchant_id, id, client_id, name, secret_hash, uris)| {
            let redirect_uris = serde_json::from_str(&uris)
                .map_err(|e| DbError::Corrupt(format!("redirect_uris of {client_id}: {e}")))?;
            Ok(ApplicationRecord {
                merchant_id,
                id,
                client_id,
                name,
                secret_hash,
                redirect_uris,
            })
        })
        .transpose()
    }

    /// Live employees with this (lower-cased) email, across merchants.
    pub async fn sign_in_candidates(&self, email: &str) -> Result<Vec<SignInCandidate>, DbError> {
        type Row = (i64, i64, i64, Option<String>, Option<i64>);
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT merchant_id, id, role_id, password_hash, exit_date FROM employees \
             WHERE email = $1 AND delete_date IS NULL ORDER BY id",
        )
        .bind(email)
        .fetch_all(&self.pool)
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

    pub async fn create_session(
        &self,
        hash: &str,
        merchant_id: i64,
        employee_id: i64,
        expires_at: i64,
    ) -> Result<(), DbError> {
        sqlx::query(
            "INSERT INTO oauth_sessions (hash, merchant_id, employee_id, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(hash)
        .bind(merchant_id)
        .bind(employee_id)
        .bind(now_millis())
        .bind(expires_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// A live session with its employee's current role.
    pub async fn find_session(&self, hash: &str) -> Result<Option<SessionRecord>, DbError> {
        let row: Option<(i64, i64, i64, Option<i64>)> = sqlx::query_as(
            "SELECT s.merchant_id, s.employee_id, e.role_id, e.exit_date FROM oauth_sessions s \
             JOIN employees e ON e.merchant_id = s.merchant_id AND e.id = s.employee_id \
             WHERE s.hash = $1 AND s.expires_at > $2 AND e.delete_date IS NULL",
        )
        .bind(hash)
        .bind(now_millis())
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(
            |(merchant_id, employee_id, role_id, exit_date)| SessionRecord {
                merchant_id,
                employee_id,
                role_id,
                exit_date,
            },
        ))
    }

    pub async fn delete_session(&self, hash: &str) -> Result<(), DbError> {
        sqlx::query("DELETE FROM oauth_sessions WHERE hash = $1")
            .bind(hash)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Starts a family with its authorization code.
    pub async fn create_code(
        &self,
        family: &NewFamily,
        code_hash: &str,
        facts: &CodeFacts,
        expires_at: i64,
    ) -> Result<(), DbError> {
        let now = now_millis();
        let mut tx = self.pool.begin().await?;
        insert_family(&mut tx, family, now).await?;
        sqlx::query(
            "INSERT INTO oauth_codes (hash, family_id, redirect_uri, code_challenge, created_at, \
             expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(code_hash)
        .bind(&family.id)
        .bind(&facts.redirect_uri)
        .bind(&facts.code_challenge)
        .bind(now)
        .bind(expires_at)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Takes a code for `application_id` and stores the pair it buys, in one transaction. `check`
    /// sees the code's stored facts (redirect URI, PKCE challenge); when it refuses, nothing is
    /// committed and the code stays usable. A code taken before revokes its family.
    pub async fn exchange_code(
        &self,
        code_hash: &str,
        application_id: i64,
        pair: &NewPair,
        check: impl FnOnce(&CodeFacts) -> Result<(), String>,
    ) -> Result<CodeExchange, DbError> {
        let started = Instant::now();
        let now = now_millis();
        let mut tx = self.pool.begin().await?;
        let taken: Option<(String, String, Option<String>)> = sqlx::query_as(
            "UPDATE oauth_codes SET used_at = $2 \
             WHERE hash = $1 AND used_at IS NULL AND expires_at > $2 \
             RETURNING family_id, redirect_uri, code_challenge",
        )
        .bind(code_hash)
        .bind(now)
        .fetch_optional(&mut *tx)
        .await?;
        let outcome = match taken {
            None => {
                let seen: Option<(Option<i64>, String)> =
                    sqlx::query_as("SELECT used_at, family_id FROM oauth_codes WHERE hash = $1")
                        .bind(code_hash)
                        .fetch_optional(&mut *tx)
                        .await?;
                match seen {
                    Some((Some(_), family_id)) => {
                        let revoked = revoke_family(&mut tx, &family_id, now).await?;
                        tx.commit().await?;
                        CodeExchange::Reused {
                            revoked_access_hashes: revoked,
                        }
                    }
                    Some((None, _)) => CodeExchange::Refused("the code expired".into()),
                    None => CodeExchange::Refused("the code is unknown".into()),
                }
            }
            Some((family_id, redirect_uri, code_challenge)) => {
                let family = load_family(&mut tx, &family_id)
                    .await?
                    .ok_or_else(|| DbError::Corrupt(format!("code without family {family_id}")))?;
                let facts = CodeFacts {
                    redirect_uri,
                    code_challenge,
                };
                let role = active_role(&mut tx, &family, now).await?;
                if family.revoked {
                    CodeExchange::Refused("the grant was revoked".into())
                } else if family.application_id != application_id {
                    CodeExchange::Refused("the code was issued to another client".into())
                } else if role.is_none() {
                    CodeExchange::Refused("the user can no longer sign in".into())
                } else if let Err(why) = check(&facts) {
                    CodeExchange::Refused(why)
                } else {
                    let mut pair = pair.clone();
                    pair.access_scope = family.scope.clone();
                    insert_pair(&mut tx, &family, &pair, now).await?;
                    tx.commit().await?;
                    CodeExchange::Issued(family)
                }
            }
        };
        self.observe("exchange_code", started);
        Ok(outcome)
    }

    /// Takes a refresh token for `application_id`. On success `decide` picks the new access
    /// scope from the family and the employee's current role id, `seal` seals the successor pair for idempotent retries, and both
    /// are stored with the new pair in one transaction. A used token comes back as `Retry` when
    /// it is inside the grace and `successor_of` (which unseals) names a successor refresh token
    /// that is itself still unused; any other reuse revokes the family.
    pub async fn rotate_refresh(
        &self,
        request: RotateRefresh<'_>,
        decide: impl FnOnce(&FamilyRecord, i64) -> Result<String, String>,
        seal: impl FnOnce(&str) -> String,
        successor_of: impl FnOnce(&str) -> Option<String>,
    ) -> Result<RefreshExchange, DbError> {
        let started = Instant::now();
        let now = now_millis();
        let mut tx = self.pool.begin().await?;
        let taken: Option<(String,)> = sqlx::query_as(
            "UPDATE refresh_tokens SET used_at = $2 \
             WHERE hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING family_id",
        )
        .bind(request.hash)
        .bind(now)
        .fetch_optional(&mut *tx)
        .await?;
        let outcome = match taken {
            Some((family_id,)) => {
                let family = load_family(&mut tx, &family_id).await?.ok_or_else(|| {
                    DbError::Corrupt(format!("refresh without family {family_id}"))
                })?;
                let role = active_role(&mut tx, &family, now).await?;
                if family.revoked {
                    RefreshExchange::Refused("the grant was revoked".into())
                } else if family.application_id != request.application_id {
                    RefreshExchange::Refused("the token was issued to another client".into())
                } else if let Some(role) = role {
                    match decide(&family, role) {
                        Err(why) => RefreshExchange::ScopeRefused(why),
                        Ok(scope) => {
                            let mut pair = request.pair.clone();
                            pair.access_scope = scope;
                            insert_pair(&mut tx, &family, &pair, now).await?;
                            sqlx::query(
                                "UPDATE refresh_tokens SET successor_sealed = $2 WHERE hash = $1",
                            )
                            .bind(request.hash)
                            .bind(seal(&pair.access_scope))
                            .execute(&mut *tx)
                            .await?;
                            tx.commit().await?;
                            RefreshExchange::Rotated {
                                family,
                                scope: pair.access_scope,
                            }
                        }
                    }
                } else {
                    RefreshExchange::Refused("the user can no longer sign in".into())
                }
            }
            None => {
                let seen: Option<(Option<i64>, String, Option<String>)> = sqlx::query_as(
                    "SELECT used_at, family_id, successor_sealed FROM refresh_tokens WHERE hash = $1",
                )
                .bind(request.hash)
                .fetch_optional(&mut *tx)
                .await?;
                match seen {
                    None => RefreshExchange::Refused("the refresh token is unknown".into()),
                    Some((None, _, _)) => {
                        RefreshExchange::Refused("the refresh token expired".into())
                    }
                    Some((Some(used_at), family_id, sealed)) => {
                        let family = load_family(&mut tx, &family_id).await?.ok_or_else(|| {
                            DbError::Corrupt(format!("refresh without family {family_id}"))
                        })?;
                        let in_grace = now - used_at < request.grace_millis;
                        let retry = match (&sealed, in_grace, family.revoked) {
                            (Some(sealed), true, false)
                                if family.application_id == request.application_id =>
                            {
                                match successor_of(sealed) {
                                    Some(successor_hash) => {
                                        let unused: Option<(i64,)> = sqlx::query_as(
                                            "SELECT 1 FROM refresh_tokens WHERE hash = $1 \
                                             AND used_at IS NULL",
                                        )
                                        .bind(&successor_hash)
                                        .fetch_optional(&mut *tx)
                                        .await?;
                                        unused.map(|_| sealed.clone())
                                    }
                                    None => None,
                                }
                            }
                            _ => None,
                        };
                        match retry {
                            Some(sealed) => RefreshExchange::Retry { family, sealed },
                            None if family.revoked => {
                                RefreshExchange::Refused("the grant was revoked".into())
                            }
                            None => {
                                let revoked = revoke_family(&mut tx, &family_id, now).await?;
                                tx.commit().await?;
                                RefreshExchange::Reused {
                                    revoked_access_hashes: revoked,
                                }
                            }
                        }
                    }
                }
            }
        };
        self.observe("rotate_refresh", started);
        Ok(outcome)
    }

    /// Looks up a live access token by hash: not revoked, its family not revoked, its employee and
    /// application not deleted. Expiry is left to the caller so it can tell "expired" apart.
    pub async fn find_access_token(
        &self,
        hash: &str,
    ) -> Result<Option<AccessTokenRecord>, DbError> {
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

    /// A live (unrevoked, unexpired, unused) access or refresh token of `application_id`.
    pub async fn token_info(
        &self,
        hash: &str,
        application_id: i64,
    ) -> Result<Option<TokenInfo>, DbError> {
        let now = now_millis();
        let mut conn = self.pool.acquire().await?;
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
        Ok(Some(TokenInfo {
            kind,
            scope: scope.unwrap_or_else(|| family.scope.clone()),
            family,
            issued_at,
            expires_at,
        }))
    }

    /// RFC 7009: a refresh token revokes its whole family, an access token itself. Tokens of
    /// other applications and unknown tokens are left alone. Returns access hashes to evict.
    pub async fn revoke_token(
        &self,
        hash: &str,
        application_id: i64,
    ) -> Result<Vec<String>, DbError> {
        let now = now_millis();
        let mut tx = self.pool.begin().await?;
        let refresh: Option<(String,)> =
            sqlx::query_as("SELECT family_id FROM refresh_tokens WHERE hash = $1")
                .bind(hash)
                .fetch_optional(&mut *tx)
                .await?;
        let access: Option<(String,)> =
            sqlx::query_as("SELECT family_id FROM access_tokens WHERE hash = $1")
                .bind(hash)
                .fetch_optional(&mut *tx)
                .await?;
        let Some((family_id,)) = refresh.clone().or(access) else {
            return Ok(Vec::new());
        };
        let owned = load_family(&mut tx, &family_id)
            .await?
            .is_some_and(|f| f.application_id == application_id);
        if !owned {
            return Ok(Vec::new());
        }
        let revoked = if refresh.is_some() {
            revoke_family(&mut tx, &family_id, now).await?
        } else {
            sqlx::query(
                "UPDATE access_tokens SET revoked_at = $2 WHERE hash = $1 AND revoked_at IS NULL",
            )
            .bind(hash)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            vec![hash.to_owned()]
        };
        tx.commit().await?;
        Ok(revoked)
    }

    /// Starts a family and stores its first access token, for grants that need no code (tests
    /// and operator tooling). The authorization-code grant starts families with a code instead.
    pub async fn insert_family_with_access_token(
        &self,
        family: &NewFamily,
        access_hash: &str,
        expires_at: i64,
    ) -> Result<(), DbError> {
        let now = now_millis();
        let mut tx = self.pool.begin().await?;
        insert_family(&mut tx, family, now).await?;
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

    /// Deletes codes, refresh tokens, access tokens and sessions that expired before `before`,
    /// and families left empty. Tombstones live until then so reuse stays detectable.
    pub async fn purge_expired_oauth(&self, before: i64) -> Result<u64, DbError> {
        let mut tx = self.pool.begin().await?;
        let mut removed = 0;
        for table in [
            "oauth_codes",
            "refresh_tokens",
            "access_tokens",
            "oauth_sessions",
        ] {
            removed += sqlx::query(&format!("DELETE FROM {table} WHERE expires_at < $1"))
                .bind(before)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        }
        removed += sqlx::query(
            "DELETE FROM oauth_families WHERE created_at < $1 \
             AND NOT EXISTS (SELECT 1 FROM oauth_codes c WHERE c.family_id = oauth_families.id) \
             AND NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.family_id = oauth_families.id) \
             AND NOT EXISTS (SELECT 1 FROM access_tokens a WHERE a.family_id = oauth_families.id)",
        )
        .bind(before)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(removed)
    }
}

/// The request side of [`Db::rotate_refresh`].
#[derive(Debug, Clone)]
pub struct RotateRefresh<'a> {
    pub hash: &'a str,
    pub application_id: i64,
    pub grace_millis: i64,
    pub pair: &'a NewPair,
}
