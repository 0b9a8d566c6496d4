//! Connected applications (`/account`): the live grants of a merchant's employees, revoking one
//! within its merchant (and, for a non-owner, its employee), and recording when a family's
//! access tokens were last used.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::people::oauth::revoke_access_tokens_of;
use crate::rows::{in_list, value_tuples};
use crate::{Announcement, Backend, Db, DbError, Tx};
use domain::oauth::token::{ConnectedGrant, FamilyUse, GrantsOf};

type GrantRow = (
    String,
    i64,
    String,
    i64,
    String,
    Option<String>,
    Option<String>,
    String,
    i64,
    Option<i64>,
);

/// A family is a live grant while it is not revoked and holds an access token that is neither
/// revoked nor expired, or a refresh token that is neither used nor expired. Families that
/// only hold a code (an authorization not yet exchanged) are not grants yet.
const LIVE_GRANT: &str = "f.revoked_at IS NULL AND ap.delete_date IS NULL \
     AND e.delete_date IS NULL \
     AND (EXISTS (SELECT 1 FROM access_tokens a WHERE a.family_id = f.id \
                  AND a.revoked_at IS NULL AND a.expires_at > $2) \
          OR EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.family_id = f.id \
                  AND r.used_at IS NULL AND r.expires_at > $2))";

fn grant_from(row: GrantRow) -> ConnectedGrant {
    let (family_id, application_id, application_name, employee_id, employee_email) =
        (row.0, row.1, row.2, row.3, row.4);
    let name = [row.5, row.6]
        .into_iter()
        .flatten()
        .map(|part| part.trim().to_owned())
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    ConnectedGrant {
        family_id,
        application_id,
        application_name,
        employee_id,
        employee_email,
        employee_name: (!name.is_empty()).then_some(name),
        scope: row.7,
        authorized_at: row.8,
        last_used_at: row.9,
    }
}

impl Db {
    /// The live grants of `of`, newest first.
    pub async fn connected_grants(
        &self,
        of: GrantsOf,
        now: i64,
    ) -> Result<Vec<ConnectedGrant>, DbError> {
        let started = Instant::now();
        let employee = if of.employee_id.is_some() {
            "AND f.employee_id = $3"
        } else {
            ""
        };
        let sql = format!(
            "SELECT f.id, f.application_id, ap.name, f.employee_id, e.email, e.first_name, \
                    e.last_name, f.scope, f.created_at, f.last_used_at \
             FROM oauth_families f \
             JOIN applications ap ON ap.id = f.application_id \
             JOIN employees e ON e.merchant_id = f.merchant_id AND e.id = f.employee_id \
             WHERE f.merchant_id = $1 {employee} AND {LIVE_GRANT} \
             ORDER BY f.created_at DESC, f.id"
        );
        let mut query = sqlx::query_as::<_, GrantRow>(&sql)
            .bind(of.merchant_id)
            .bind(now);
        if let Some(employee_id) = of.employee_id {
            query = query.bind(employee_id);
        }
        let rows = query.fetch_all(self.pool()).await?;
        self.observe("connected_grants", started);
        Ok(rows.into_iter().map(grant_from).collect())
    }
}

impl Tx {
    /// Revokes the family `family_id` if it belongs to `of` and is not revoked yet: the family
    /// (so its codes and refresh tokens buy nothing more) and its access tokens. Returns the
    /// family's application and employee with the revoked access hashes (announced to the
    /// other replicas at commit), or `None` when no such family is there to revoke.
    pub async fn revoke_grant(
        &mut self,
        of: GrantsOf,
        family_id: &str,
        now: i64,
    ) -> Result<Option<(i64, i64, Vec<String>)>, DbError> {
        if !crate::storable(family_id) {
            return Ok(None);
        }
        let employee = if of.employee_id.is_some() {
            "AND employee_id = $4"
        } else {
            ""
        };
        let sql = format!(
            "UPDATE oauth_families SET revoked_at = $1 \
             WHERE id = $2 AND merchant_id = $3 {employee} AND revoked_at IS NULL \
             RETURNING application_id, employee_id"
        );
        let mut query = sqlx::query_as::<_, (i64, i64)>(&sql)
            .bind(now)
            .bind(family_id)
            .bind(of.merchant_id);
        if let Some(employee_id) = of.employee_id {
            query = query.bind(employee_id);
        }
        let Some((application_id, employee_id)) = query.fetch_optional(self.conn()?).await? else {
            return Ok(None);
        };
        let hashes = revoke_access_tokens_of(self.conn()?, family_id, now).await?;
        if !hashes.is_empty() {
            self.announce(Announcement::TokensRevoked(Some(hashes.clone())));
        }
        Ok(Some((application_id, employee_id, hashes)))
    }

    /// Records when families' access tokens were used; a time never moves back, so a late
    /// batch cannot undo a newer one from another replica. One statement for the batch: a
    /// replica serving 10,000 merchants notes 10,000 families a minute, and a statement each
    /// was a tenth of its samples (benches/load/results/HISTORY.md, "Ten thousand merchants:
    /// token uses in one statement").
    pub async fn record_family_uses(&mut self, uses: &[FamilyUse]) -> Result<(), DbError> {
        let mut latest: BTreeMap<&str, i64> = BTreeMap::new();
        for used in uses.iter().filter(|u| crate::storable(&u.family_id)) {
            let entry = latest.entry(used.family_id.as_str()).or_insert(used.at);
            *entry = (*entry).max(used.at);
        }
        if latest.is_empty() {
            return Ok(());
        }
        if self.backend() == Backend::Postgres {
            // Replicas writing overlapping batches lock the rows in id order first, so they
            // cannot deadlock.
            let sql = format!(
                "SELECT id FROM oauth_families WHERE TRUE{} ORDER BY id FOR UPDATE",
                in_list("id", 1, latest.len())
            );
            let mut lock = sqlx::query(&sql);
            for family_id in latest.keys() {
                lock = lock.bind(*family_id);
            }
            lock.execute(self.conn()?).await?;
        }
        let values = value_tuples(self.conn()?, latest.len(), 2);
        let sql = format!(
            "WITH used(family_id, used_at) AS (VALUES {values}) \
             UPDATE oauth_families SET last_used_at = used.used_at FROM used \
             WHERE oauth_families.id = used.family_id \
             AND (oauth_families.last_used_at IS NULL OR oauth_families.last_used_at < used.used_at)"
        );
        let mut update = sqlx::query(&sql);
        for (family_id, at) in latest {
            update = update.bind(family_id).bind(at);
        }
        update.execute(self.conn()?).await?;
        Ok(())
    }
}
