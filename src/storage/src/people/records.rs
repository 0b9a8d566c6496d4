//! Employees and applications as the merchant supervisor stores them, and the revocations their
//! life cycle triggers. The rows also hold columns these records do not own (`password_hash`,
//! `secret_hash`, manifest keys): [`TableRow::COLUMNS`] leaves them out, so an update never
//! touches them, and the secret hash is written only by the statements here.

use sqlx::AnyConnection;

use crate::rows;
use crate::{Announcement, DbError, Tx};
use domain::now_millis;
use domain::people::application::ApplicationRecord;
use domain::people::employee::EmployeeRecord;

impl Tx {
    /// Writes an employee; a deleted one loses every token family, access token and sign-in
    /// session in the same transaction.
    pub(crate) async fn persist_employee(
        &mut self,
        merchant_id: i64,
        record: &EmployeeRecord,
        is_new: bool,
    ) -> Result<(), DbError> {
        self.write_row(merchant_id, record, is_new).await?;
        if is_new {
            return Ok(());
        }
        if let Some(at) = record.delete_date {
            revoke_employee_tokens(self.conn()?, merchant_id, record.id, at).await?;
        }
        // A changed role or exit date changes what the employee's tokens grant: other replicas
        // forget the tokens they cached.
        self.announce(Announcement::TokensRevoked(None));
        Ok(())
    }

    /// Writes an application. A new secret hash is stored with it and, on an existing
    /// application, revokes every token issued to it; so does a delete.
    pub(crate) async fn persist_application(
        &mut self,
        merchant_id: i64,
        record: &ApplicationRecord,
        is_new: bool,
    ) -> Result<(), DbError> {
        persist_application(self.conn()?, merchant_id, record, is_new, now_millis()).await?;
        if !is_new {
            self.announce(Announcement::TokensRevoked(None));
        }
        Ok(())
    }
}

async fn revoke_employee_tokens(
    conn: &mut AnyConnection,
    merchant_id: i64,
    employee_id: i64,
    now: i64,
) -> Result<(), DbError> {
    for sql in [
        "UPDATE oauth_families SET revoked_at = $3 \
         WHERE merchant_id = $1 AND employee_id = $2 AND revoked_at IS NULL",
        "UPDATE access_tokens SET revoked_at = $3 \
         WHERE merchant_id = $1 AND employee_id = $2 AND revoked_at IS NULL",
    ] {
        sqlx::query(sql)
            .bind(merchant_id)
            .bind(employee_id)
            .bind(now)
            .execute(&mut *conn)
            .await?;
    }
    sqlx::query("DELETE FROM oauth_sessions WHERE merchant_id = $1 AND employee_id = $2")
        .bind(merchant_id)
        .bind(employee_id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Writes an application. A new secret hash is stored with it and, on an existing application,
/// revokes every token issued to it; so does a delete. Everything happens in the caller's
/// transaction.
async fn persist_application(
    conn: &mut AnyConnection,
    merchant_id: i64,
    record: &ApplicationRecord,
    is_new: bool,
    now: i64,
) -> Result<(), DbError> {
    if is_new {
        let hash = record
            .new_secret_hash
            .as_deref()
            .ok_or_else(|| DbError::Corrupt(format!("application {} has no secret", record.id)))?;
        rows::insert_with(conn, merchant_id, record, &[("secret_hash", hash.into())]).await?;
        return Ok(());
    }
    rows::update(conn, merchant_id, record).await?;
    if let Some(hash) = &record.new_secret_hash {
        sqlx::query("UPDATE applications SET secret_hash = $1 WHERE merchant_id = $2 AND id = $3")
            .bind(hash)
            .bind(merchant_id)
            .bind(record.id)
            .execute(&mut *conn)
            .await?;
    }
    if record.new_secret_hash.is_some() || record.delete_date.is_some() {
        revoke_application_tokens(conn, record.id, record.delete_date.unwrap_or(now)).await?;
    }
    Ok(())
}

/// Every family (any merchant's users may authorize an application) and access token of it.
async fn revoke_application_tokens(
    conn: &mut AnyConnection,
    application_id: i64,
    now: i64,
) -> Result<(), DbError> {
    for sql in [
        "UPDATE oauth_families SET revoked_at = $2 WHERE application_id = $1 AND revoked_at IS NULL",
        "UPDATE access_tokens SET revoked_at = $2 WHERE application_id = $1 AND revoked_at IS NULL",
    ] {
        sqlx::query(sql)
            .bind(application_id)
            .bind(now)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}
