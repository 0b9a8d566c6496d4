//! The catalogue tables a merchant supervisor loads and writes.

use std::time::Instant;

use super::{Store, StoreError};
use crate::domain::store::StoreRecord;

type StoreRow = (
    i64,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<f64>,
    Option<f64>,
    String,
    i64,
    Option<i64>,
    Option<i64>,
);

const STORE_COLUMNS: &str =
    "id, name, address_line1, address_line2, address_line3, city, postcode, \
    country_id, phone_number, email, lat, lng, timezone, sandbox, active_date, delete_date";

impl Store {
    /// Identifiers for new records, unique across all merchants.
    pub async fn allocate_ids(&self, n: usize) -> Result<Vec<i64>, StoreError> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let mut tx = self.pool.begin().await?;
        let ids = self.next_ids(&mut tx, n as i64).await?;
        tx.commit().await?;
        Ok(ids)
    }

    pub async fn load_stores(&self, merchant_id: i64) -> Result<Vec<StoreRecord>, StoreError> {
        let started = Instant::now();
        let rows: Vec<StoreRow> = sqlx::query_as(&format!(
            "SELECT {STORE_COLUMNS} FROM stores WHERE merchant_id = $1 ORDER BY id"
        ))
        .bind(merchant_id)
        .fetch_all(&self.pool)
        .await?;
        self.observe("load_stores", started);
        Ok(rows
            .into_iter()
            .map(|r| StoreRecord {
                id: r.0,
                name: r.1,
                address_line1: r.2,
                address_line2: r.3,
                address_line3: r.4,
                city: r.5,
                postcode: r.6,
                country_id: r.7,
                phone_number: r.8,
                email: r.9,
                lat: r.10,
                lng: r.11,
                timezone: r.12,
                sandbox: r.13 != 0,
                active_date: r.14,
                delete_date: r.15,
            })
            .collect())
    }

    /// Inserts new stores and rewrites changed ones, all in one transaction.
    pub async fn save_stores(
        &self,
        merchant_id: i64,
        created: &[StoreRecord],
        updated: &[StoreRecord],
    ) -> Result<(), StoreError> {
        let started = Instant::now();
        let mut tx = self.pool.begin().await?;
        for s in created {
            sqlx::query(&format!(
                "INSERT INTO stores (merchant_id, {STORE_COLUMNS}) VALUES \
                 ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)"
            ))
            .bind(merchant_id)
            .bind(s.id)
            .bind(&s.name)
            .bind(&s.address_line1)
            .bind(&s.address_line2)
            .bind(&s.address_line3)
            .bind(&s.city)
            .bind(&s.postcode)
            .bind(&s.country_id)
            .bind(&s.phone_number)
            .bind(&s.email)
            .bind(s.lat)
            .bind(s.lng)
            .bind(&s.timezone)
            .bind(i64::from(s.sandbox))
            .bind(s.active_date)
            .bind(s.delete_date)
            .execute(&mut *tx)
            .await?;
        }
        for s in updated {
            sqlx::query(
                "UPDATE stores SET name = $3, address_line1 = $4, address_line2 = $5, \
                 address_line3 = $6, city = $7, postcode = $8, country_id = $9, phone_number = $10, \
                 email = $11, lat = $12, lng = $13, timezone = $14, sandbox = $15, \
                 active_date = $16, delete_date = $17 WHERE merchant_id = $1 AND id = $2",
            )
            .bind(merchant_id)
            .bind(s.id)
            .bind(&s.name)
            .bind(&s.address_line1)
            .bind(&s.address_line2)
            .bind(&s.address_line3)
            .bind(&s.city)
            .bind(&s.postcode)
            .bind(&s.country_id)
            .bind(&s.phone_number)
            .bind(&s.email)
            .bind(s.lat)
            .bind(s.lng)
            .bind(&s.timezone)
            .bind(i64::from(s.sandbox))
            .bind(s.active_date)
            .bind(s.delete_date)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        self.observe("save_stores", started);
        Ok(())
    }
}
