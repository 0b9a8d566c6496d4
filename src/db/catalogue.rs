//! How catalogue records map to their tables.

use super::rows::{get, Row, TableRow, Val};
use crate::domain::category::CategoryRecord;
use crate::domain::store::StoreRecord;

impl TableRow for StoreRecord {
    const TABLE: &'static str = "stores";
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "name",
        "address_line1",
        "address_line2",
        "address_line3",
        "city",
        "postcode",
        "country_id",
        "phone_number",
        "email",
        "lat",
        "lng",
        "timezone",
        "sandbox",
        "active_date",
        "delete_date",
    ];

    fn values(&self) -> Vec<Val> {
        vec![
            self.id.into(),
            (&self.name).into(),
            (&self.address_line1).into(),
            (&self.address_line2).into(),
            (&self.address_line3).into(),
            (&self.city).into(),
            (&self.postcode).into(),
            (&self.country_id).into(),
            (&self.phone_number).into(),
            (&self.email).into(),
            self.lat.into(),
            self.lng.into(),
            (&self.timezone).into(),
            self.sandbox.into(),
            self.active_date.into(),
            self.delete_date.into(),
        ]
    }

    fn from_row(row: &Row<'_>) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: get(row, "id")?,
            name: get(row, "name")?,
            address_line1: get(row, "address_line1")?,
            address_line2: get(row, "address_line2")?,
            address_line3: get(row, "address_line3")?,
            city: get(row, "city")?,
            postcode: get(row, "postcode")?,
            country_id: get(row, "country_id")?,
            phone_number: get(row, "phone_number")?,
            email: get(row, "email")?,
            lat: get(row, "lat")?,
            lng: get(row, "lng")?,
            timezone: get(row, "timezone")?,
            sandbox: get::<i64>(row, "sandbox")? != 0,
            active_date: get(row, "active_date")?,
            delete_date: get(row, "delete_date")?,
        })
    }
}

impl TableRow for CategoryRecord {
    const TABLE: &'static str = "categories";
    const COLUMNS: &'static [&'static str] =
        &["id", "title", "parent_id", "active_date", "delete_date"];

    fn values(&self) -> Vec<Val> {
        vec![
            self.id.into(),
            (&self.title).into(),
            self.parent_id.into(),
            self.active_date.into(),
            self.delete_date.into(),
        ]
    }

    fn from_row(row: &Row<'_>) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: get(row, "id")?,
            title: get(row, "title")?,
            parent_id: get(row, "parent_id")?,
            active_date: get(row, "active_date")?,
            delete_date: get(row, "delete_date")?,
        })
    }
}
