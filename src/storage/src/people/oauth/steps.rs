//! The storage steps the grants run over (`domain::oauth::token::TokenSteps`), each a
//! statement in the grant's transaction.

use super::{family_from, insert_access_token, load_family, revoke_family};
use crate::{Announcement, DbError, Tx};
use domain::oauth::token::{
    CodeFacts, FamilyRecord, LiveRefresh, NewPair, Spent, TakenCode, TokenSteps,
};

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
