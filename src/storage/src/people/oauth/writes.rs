//! The authorization server's writes that are not a grant's steps: sessions, codes,
//! revocations, families issued whole, expired rows purged.

use super::{insert_access_token, insert_family, load_family, revoke_family};
use crate::{Announcement, DbError, Tx};
use domain::now_millis;
use domain::oauth::token::{CodeFacts, FamilyRecord, NewFamily, NewPair, NewSession, TokenSteps};

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
