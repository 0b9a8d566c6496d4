//! Employees and applications as the merchant supervisor stores them, and the revocations their
//! life cycle triggers. The rows also hold columns these records do not own (`password_hash`,
//! `secret_hash`, manifest keys): [`TableRow::COLUMNS`] leaves them out, so an update never
//! touches them, and the secret hash is written only by the statements here.

use std::collections::BTreeMap;

use sqlx::AnyConnection;

use super::rows::{self, decode_error, get, Row, TableRow, Val};
use super::{Announcement, DbError, Tx};
use crate::domain::application::ApplicationRecord;
use crate::domain::employee::EmployeeRecord;
use crate::domain::now_millis;
use crate::domain::Role;

impl TableRow for EmployeeRecord {
    const TABLE: &'static str = "employees";
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "email",
        "first_name",
        "last_name",
        "role_id",
        "stores",
        "joined_date",
        "exit_date",
        "active_date",
        "delete_date",
    ];

    fn values(&self) -> Vec<Val> {
        let stores: BTreeMap<String, i64> = self
            .stores
            .iter()
            .map(|(id, role)| (id.to_string(), role.id()))
            .collect();
        let stores = serde_json::to_string(&stores).unwrap_or_else(|_| "{}".into());
        vec![
            self.id.into(),
            (&self.email).into(),
            (&self.first_name).into(),
            (&self.last_name).into(),
            self.role.id().into(),
            (&stores).into(),
            self.joined_date.into(),
            self.exit_date.into(),
            self.active_date.into(),
            self.delete_date.into(),
        ]
    }

    fn from_row(row: &Row<'_>) -> Result<Self, sqlx::Error> {
        let role_id: i64 = get(row, "role_id")?;
        let stores: Option<String> = get(row, "stores")?;
        let stores: BTreeMap<String, i64> = serde_json::from_str(stores.as_deref().unwrap_or("{}"))
            .map_err(|e| decode_error("stores", e))?;
        let stores = stores
            .into_iter()
            .map(|(store, role)| {
                let store = store
                    .parse::<i64>()
                    .map_err(|e| decode_error("stores", e))?;
                let role = Role::from_id(role)
                    .ok_or_else(|| decode_error("stores", format!("unknown role {role}")))?;
                Ok((store, role))
            })
            .collect::<Result<_, sqlx::Error>>()?;
        Ok(Self {
            id: get(row, "id")?,
            email: get(row, "email")?,
            first_name: get(row, "first_name")?,
            last_name: get(row, "last_name")?,
            role: Role::from_id(role_id)
                .ok_or_else(|| decode_error("role_id", format!("unknown role {role_id}")))?,
            stores,
            joined_date: get(row, "joined_date")?,
            exit_date: get(row, "exit_date")?,
            active_date: get(row, "active_date")?,
            delete_date: get(row, "delete_date")?,
        })
    }
}

impl TableRow for ApplicationRecord {
    const TABLE: &'static str = "applications";
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "client_id",
        "name",
        "description",
        "redirect_uris",
        "logo",
        "active_date",
        "delete_date",
    ];

    fn values(&self) -> Vec<Val> {
        let uris = serde_json::to_string(&self.redirect_uris).unwrap_or_else(|_| "[]".into());
        vec![
            self.id.into(),
            (&self.client_id).into(),
            (&self.name).into(),
            (&self.description).into(),
            (&uris).into(),
            (&self.logo).into(),
            self.active_date.into(),
            self.delete_date.into(),
        ]
    }

    fn from_row(row: &Row<'_>) -> Result<Self, sqlx::Error> {
        let uris: String = get(row, "redirect_uris")?;
        Ok(Self {
            id: get(row, "id")?,
            client_id: get(row, "client_id")?,
            name: get(row, "name")?,
            description: get(row, "description")?,
            redirect_uris: serde_json::from_str(&uris)
                .map_err(|e| decode_error("redirect_uris", e))?,
            logo: get(row, "logo")?,
            active_date: get(row, "active_date")?,
            delete_date: get(row, "delete_date")?,
            new_secret_hash: None,
        })
    }
}

impl Tx {
    /// Writes an employee; a deleted one loses every token family, access token and sign-in
    /// session in the same transaction.
    pub(super) async fn persist_employee(
        &mut self,
        merchant_id: i64,
        record: &EmployeeRecord,
        is_new: bool,
    ) -> Result<(), DbError> {
        let conn = self.conn()?;
        if is_new {
            return rows::insert(conn, merchant_id, record).await;
        }
        rows::update(conn, merchant_id, record).await?;
        if let Some(at) = record.delete_date {
            revoke_employee_tokens(conn, merchant_id, record.id, at).await?;
        }
        // A changed role or exit date changes what the employee's tokens grant: other replicas
        // forget the tokens they cached.
        self.announce(Announcement::TokensRevoked(None));
        Ok(())
    }

    /// Writes an application. A new secret hash is stored with it and, on an existing
    /// application, revokes every token issued to it; so does a delete.
    pub(super) async fn persist_application(
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
        rows::insert(conn, merchant_id, &WithSecret { record, hash }).await?;
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

/// A new application's row: its own columns plus the secret hash, inserted once.
struct WithSecret<'a> {
    record: &'a ApplicationRecord,
    hash: &'a str,
}

impl TableRow for WithSecret<'_> {
    const TABLE: &'static str = ApplicationRecord::TABLE;
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "client_id",
        "name",
        "description",
        "redirect_uris",
        "logo",
        "active_date",
        "delete_date",
        "secret_hash",
    ];

    fn values(&self) -> Vec<Val> {
        let mut values = self.record.values();
        values.push(self.hash.into());
        values
    }

    fn from_row(_: &Row<'_>) -> Result<Self, sqlx::Error> {
        Err(sqlx::Error::Decode(
            "an application's secret is never read back".into(),
        ))
    }
}
