//! OAuth state: applications as clients, sign-in sessions, codes, token families. Only hashes of
//! codes and tokens are stored. The grants' steps ([`TokenSteps`]) run on a [`Tx`]; "take" is
//! one conditional UPDATE whose row count decides who won, so the guarantee holds across
//! processes on one database.

use std::time::Instant;

use sqlx::AnyConnection;

use crate::{Announcement, Db, DbError, Tx};
use domain::now_millis;
use domain::oauth::token::{
    AccessTokenRecord, Client, CodeFacts, FamilyRecord, GrantSubject, LiveRefresh, NewFamily,
    NewPair, NewSession, SessionPurpose, SessionRecord, SignInCandidate, Spent, TakenCode,
    TokenInfo, TokenSteps,
};

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

async fn insert_access_token(
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

impl Tx {
    pub async fn create_session(
        &mut self,
        hash: &str,
        session: &NewSession,
    ) -> Result<(), DbError> {
        sqlx::query(
            "INSERT INTO oauth_sessions (hash, merchant_id, employee_id, created_at, expires_at, \
             purpose) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(hash)
        .bind(session.merchant_id)
        .bind(session.employee_id)
        .bind(now_millis())
        .bind(session.expires_at)
        .bind(session.purpose.as_str())
        .execute(self.conn()?)
        .await?;
        Ok(())
    }

    pub async fn delete_session(&mut self, hash: &str) -> Result<(), DbError> {
        sqlx::query("DELETE FROM oauth_sessions WHERE hash = $1")
            .bind(hash)
            .execute(self.conn()?)
            .await?;
        Ok(())
    }

    /// Starts a family with its authorization code.
    pub async fn create_code(
        &mut self,
        family: &NewFamily,
        code_hash: &str,
        facts: &CodeFacts,
        expires_at: i64,
    ) -> Result<(), DbError> {
        let now = now_millis();
        insert_family(self.conn()?, family, now).await?;
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
        .execute(self.conn()?)
        .await?;
        Ok(())
    }

    /// RFC 7009: a refresh token revokes its whole family, an access token itself. Tokens of
    /// other applications and unknown tokens are left alone. Returns access hashes to evict.
    pub async fn revoke_token(
        &mut self,
        hash: &str,
        application_id: i64,
    ) -> Result<Vec<String>, DbError> {
        let now = now_millis();
        let refresh: Option<(String,)> =
            sqlx::query_as("SELECT family_id FROM refresh_tokens WHERE hash = $1")
                .bind(hash)
                .fetch_optional(self.conn()?)
                .await?;
        let access: Option<(String,)> =
            sqlx::query_as("SELECT family_id FROM access_tokens WHERE hash = $1")
                .bind(hash)
                .fetch_optional(self.conn()?)
                .await?;
        let Some((family_id,)) = refresh.clone().or(access) else {
            return Ok(Vec::new());
        };
        let owned = load_family(self.conn()?, &family_id)
            .await?
            .is_some_and(|f| f.application_id == application_id);
        if !owned {
            return Ok(Vec::new());
        }
        if refresh.is_some() {
            let revoked = revoke_family(self.conn()?, &family_id, now).await?;
            self.announce(Announcement::TokensRevoked(Some(revoked.clone())));
            return Ok(revoked);
        }
        sqlx::query(
            "UPDATE access_tokens SET revoked_at = $2 WHERE hash = $1 AND revoked_at IS NULL",
        )
        .bind(hash)
        .bind(now)
        .execute(self.conn()?)
        .await?;
        let revoked = vec![hash.to_owned()];
        self.announce(Announcement::TokensRevoked(Some(revoked.clone())));
        Ok(revoked)
    }

    /// Starts a family with its first access and refresh tokens in one transaction: an
    /// operator's grant without a code (`merchantd token issue`), stored as a code exchange
    /// would store it.
    pub async fn insert_family_with_pair(
        &mut self,
        family: &NewFamily,
        pair: &NewPair,
    ) -> Result<(), DbError> {
        let now = now_millis();
        insert_family(self.conn()?, family, now).await?;
        let record = FamilyRecord {
            id: family.id.clone(),
            merchant_id: family.merchant_id,
            employee_id: family.employee_id,
            application_id: family.application_id,
            scope: family.scope.clone(),
            revoked: false,
        };
        self.insert_pair(&record, pair, now).await
    }

    /// Starts a family and stores its first access token, for grants that need no code (tests
    /// and operator tooling). The authorization-code grant starts families with a code instead.
    pub async fn insert_family_with_access_token(
        &mut self,
        family: &NewFamily,
        access_hash: &str,
        expires_at: i64,
    ) -> Result<(), DbError> {
        let now = now_millis();
        let conn = self.conn()?;
        insert_family(conn, family, now).await?;
        let owner = (
            family.id.as_str(),
            family.merchant_id,
            family.employee_id,
            family.application_id,
        );
        insert_access_token(conn, access_hash, owner, &family.scope, now, expires_at).await
    }

    /// Deletes codes, refresh tokens, access tokens and sessions that expired before `before`,
    /// and families left empty. Tombstones live until then so reuse stays detectable.
    pub async fn purge_expired_oauth(&mut self, before: i64) -> Result<u64, DbError> {
        let mut removed = 0;
        for table in [
            "oauth_codes",
            "refresh_tokens",
            "access_tokens",
            "oauth_sessions",
        ] {
            removed += sqlx::query(&format!("DELETE FROM {table} WHERE expires_at < $1"))
                .bind(before)
                .execute(self.conn()?)
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
        .execute(self.conn()?)
        .await?
        .rows_affected();
        Ok(removed)
    }
}

impl TokenSteps for Tx {
    type Error = DbError;

    async fn take_code(&mut self, hash: &str, now: i64) -> Result<Option<TakenCode>, DbError> {
        let taken: Option<(String, String, Option<String>)> = sqlx::query_as(
            "UPDATE oauth_codes SET used_at = $2 \
             WHERE hash = $1 AND used_at IS NULL AND expires_at > $2 \
             RETURNING family_id, redirect_uri, code_challenge",
        )
        .bind(hash)
        .bind(now)
        .fetch_optional(self.conn()?)
        .await?;
        Ok(
            taken.map(|(family_id, redirect_uri, code_challenge)| TakenCode {
                family_id,
                facts: CodeFacts {
                    redirect_uri,
                    code_challenge,
                },
            }),
        )
    }

    async fn spent_code(&mut self, hash: &str) -> Result<Option<Spent>, DbError> {
        let seen: Option<(Option<i64>, String)> =
            sqlx::query_as("SELECT used_at, family_id FROM oauth_codes WHERE hash = $1")
                .bind(hash)
                .fetch_optional(self.conn()?)
                .await?;
        Ok(seen.map(|(used_at, family_id)| Spent {
            used_at,
            family_id,
            successor_sealed: None,
        }))
    }

    async fn take_refresh(&mut self, hash: &str, now: i64) -> Result<Option<String>, DbError> {
        let taken: Option<(String,)> = sqlx::query_as(
            "UPDATE refresh_tokens SET used_at = $2 \
             WHERE hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING family_id",
        )
        .bind(hash)
        .bind(now)
        .fetch_optional(self.conn()?)
        .await?;
        Ok(taken.map(|(family,)| family))
    }

    async fn live_refresh(&mut self, hash: &str, now: i64) -> Result<Option<String>, DbError> {
        let live: Option<(String,)> = sqlx::query_as(
            "SELECT family_id FROM refresh_tokens \
             WHERE hash = $1 AND used_at IS NULL AND expires_at > $2",
        )
        .bind(hash)
        .bind(now)
        .fetch_optional(self.conn()?)
        .await?;
        Ok(live.map(|(family,)| family))
    }

    async fn spent_refresh(&mut self, hash: &str) -> Result<Option<Spent>, DbError> {
        let seen: Option<(Option<i64>, String, Option<String>)> = sqlx::query_as(
            "SELECT used_at, family_id, successor_sealed FROM refresh_tokens WHERE hash = $1",
        )
        .bind(hash)
        .fetch_optional(self.conn()?)
        .await?;
        Ok(seen.map(|(used_at, family_id, successor_sealed)| Spent {
            used_at,
            family_id,
            successor_sealed,
        }))
    }

    async fn refresh_unused(&mut self, hash: &str) -> Result<bool, DbError> {
        let unused: Option<(i64,)> =
            sqlx::query_as("SELECT 1 FROM refresh_tokens WHERE hash = $1 AND used_at IS NULL")
                .bind(hash)
                .fetch_optional(self.conn()?)
                .await?;
        Ok(unused.is_some())
    }

    async fn seal_successor(&mut self, hash: &str, sealed: &str) -> Result<(), DbError> {
        sqlx::query("UPDATE refresh_tokens SET successor_sealed = $2 WHERE hash = $1")
            .bind(hash)
            .bind(sealed)
            .execute(self.conn()?)
            .await?;
        Ok(())
    }

    async fn family(&mut self, id: &str) -> Result<Option<FamilyRecord>, DbError> {
        load_family(self.conn()?, id).await
    }

    async fn active_role(
        &mut self,
        family: &FamilyRecord,
        now: i64,
    ) -> Result<Option<i64>, DbError> {
        let row: Option<(i64, Option<i64>)> = sqlx::query_as(
            "SELECT role_id, exit_date FROM employees \
             WHERE merchant_id = $1 AND id = $2 AND delete_date IS NULL",
        )
        .bind(family.merchant_id)
        .bind(family.employee_id)
        .fetch_optional(self.conn()?)
        .await?;
        Ok(row.and_then(|(role, exit)| (exit.is_none_or(|e| e > now)).then_some(role)))
    }

    async fn insert_pair(
        &mut self,
        family: &FamilyRecord,
        pair: &NewPair,
        now: i64,
    ) -> Result<(), DbError> {
        self.insert_access(family, pair, now).await?;
        sqlx::query(
            "INSERT INTO refresh_tokens (hash, family_id, created_at, expires_at) \
             VALUES ($1, $2, $3, $4)",
        )
        .bind(&pair.refresh_hash)
        .bind(&family.id)
        .bind(now)
        .bind(pair.refresh_expires_at)
        .execute(self.conn()?)
        .await?;
        Ok(())
    }

    async fn insert_access(
        &mut self,
        family: &FamilyRecord,
        pair: &NewPair,
        now: i64,
    ) -> Result<(), DbError> {
        let owner = (
            family.id.as_str(),
            family.merchant_id,
            family.employee_id,
            family.application_id,
        );
        insert_access_token(
            self.conn()?,
            &pair.access_hash,
            owner,
            &pair.access_scope,
            now,
            pair.access_expires_at,
        )
        .await
    }

    async fn live_refreshes(
        &mut self,
        hashes: &[&str],
        now: i64,
    ) -> Result<Vec<LiveRefresh>, DbError> {
        if hashes.is_empty() {
            return Ok(Vec::new());
        }
        type Row = (
            String,
            String,
            i64,
            i64,
            i64,
            String,
            Option<i64>,
            Option<i64>,
            Option<i64>,
        );
        // The family and the employee in the same statement (one grant alone reads them in
        // two more): a batch costs three statements whatever its size.
        let sql = format!(
            "SELECT r.hash, f.id, f.merchant_id, f.employee_id, f.application_id, f.scope, \
             f.revoked_at, e.role_id, e.exit_date \
             FROM refresh_tokens r JOIN oauth_families f ON f.id = r.family_id \
             LEFT JOIN employees e ON e.merchant_id = f.merchant_id AND e.id = f.employee_id \
             AND e.delete_date IS NULL \
             WHERE r.used_at IS NULL AND r.expires_at > $1{}",
            crate::rows::in_list("r.hash", 2, hashes.len())
        );
        let mut query = sqlx::query_as::<_, Row>(&sql).bind(now);
        for hash in hashes {
            query = query.bind(*hash);
        }
        let rows = query.fetch_all(self.conn()?).await?;
        Ok(rows
            .into_iter()
            .map(
                |(hash, id, merchant, employee, application, scope, revoked, role, exit)| {
                    LiveRefresh {
                        hash,
                        family: family_from((id, merchant, employee, application, scope, revoked)),
                        role: role.filter(|_| exit.is_none_or(|e| e > now)),
                    }
                },
            )
            .collect())
    }

    async fn take_refreshes(
        &mut self,
        taken: &[(&str, String)],
        now: i64,
    ) -> Result<Vec<String>, DbError> {
        if taken.is_empty() {
            return Ok(Vec::new());
        }
        // $1 now; $2k the hash and $2k+1 the sealed successor of the k-th token.
        let cases: String = (0..taken.len())
            .map(|k| format!(" WHEN ${} THEN ${}", 2 * k + 2, 2 * k + 3))
            .collect();
        let hashes: Vec<String> = (0..taken.len())
            .map(|k| format!("${}", 2 * k + 2))
            .collect();
        let sql = format!(
            "UPDATE refresh_tokens SET used_at = $1, successor_sealed = CASE hash{cases} END \
             WHERE hash IN ({}) AND used_at IS NULL AND expires_at > $1 RETURNING hash",
            hashes.join(", ")
        );
        let mut query = sqlx::query_as::<_, (String,)>(&sql).bind(now);
        for (hash, sealed) in taken {
            query = query.bind(*hash).bind(sealed.as_str());
        }
        let rows = query.fetch_all(self.conn()?).await?;
        Ok(rows.into_iter().map(|(hash,)| hash).collect())
    }

    async fn insert_pairs(
        &mut self,
        pairs: &[(&FamilyRecord, &NewPair)],
        now: i64,
    ) -> Result<(), DbError> {
        if pairs.is_empty() {
            return Ok(());
        }
        let rows = |width: usize| -> String {
            (0..pairs.len())
                .map(|k| {
                    let marks: Vec<String> =
                        (1..=width).map(|c| format!("${}", k * width + c)).collect();
                    format!("({})", marks.join(", "))
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let sql = format!(
            "INSERT INTO access_tokens (hash, family_id, merchant_id, employee_id, \
             application_id, scope, created_at, expires_at) VALUES {}",
            rows(8)
        );
        let mut query = sqlx::query(&sql);
        for (family, pair) in pairs {
            query = query
                .bind(pair.access_hash.as_str())
                .bind(family.id.as_str())
                .bind(family.merchant_id)
                .bind(family.employee_id)
                .bind(family.application_id)
                .bind(pair.access_scope.as_str())
                .bind(now)
                .bind(pair.access_expires_at);
        }
        query.execute(self.conn()?).await?;
        let sql = format!(
            "INSERT INTO refresh_tokens (hash, family_id, created_at, expires_at) VALUES {}",
            rows(4)
        );
        let mut query = sqlx::query(&sql);
        for (family, pair) in pairs {
            query = query
                .bind(pair.refresh_hash.as_str())
                .bind(family.id.as_str())
                .bind(now)
                .bind(pair.refresh_expires_at);
        }
        query.execute(self.conn()?).await?;
        Ok(())
    }

    async fn revoke_family(&mut self, id: &str, now: i64) -> Result<Vec<String>, DbError> {
        let revoked = revoke_family(self.conn()?, id, now).await?;
        if !revoked.is_empty() {
            self.announce(Announcement::TokensRevoked(Some(revoked.clone())));
        }
        Ok(revoked)
    }
}
