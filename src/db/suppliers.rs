//! How suppliers, supplier stores and promotions map to their tables. Promotion decimals are
//! stored as their text, id and day lists as JSON arrays.

use super::rows::{
    decimal, decode_error, get, json, json_text, optional_decimal, Row, TableRow, Val,
};
use crate::domain::promotion::{PromotionRecord, PromotionType};
use crate::domain::supplier::{SupplierRecord, SupplierStoreRecord};

impl TableRow for SupplierRecord {
    const TABLE: &'static str = "suppliers";
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "name",
        "description",
        "company_number",
        "vat_number",
        "note",
        "active_date",
        "delete_date",
    ];

    fn values(&self) -> Vec<Val> {
        vec![
            self.id.into(),
            (&self.name).into(),
            (&self.description).into(),
            (&self.company_number).into(),
            (&self.vat_number).into(),
            (&self.note).into(),
            self.active_date.into(),
            self.delete_date.into(),
        ]
    }

    fn from_row(row: &Row<'_>) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: get(row, "id")?,
            name: get(row, "name")?,
            description: get(row, "description")?,
            company_number: get(row, "company_number")?,
            vat_number: get(row, "vat_number")?,
            note: get(row, "note")?,
            active_date: get(row, "active_date")?,
            delete_date: get(row, "delete_date")?,
        })
    }
}

impl TableRow for SupplierStoreRecord {
    const TABLE: &'static str = "supplier_stores";
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "supplier_id",
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
        "active_date",
        "delete_date",
    ];

    fn values(&self) -> Vec<Val> {
        vec![
            self.id.into(),
            self.supplier_id.into(),
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
            self.active_date.into(),
            self.delete_date.into(),
        ]
    }

    fn from_row(row: &Row<'_>) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: get(row, "id")?,
            supplier_id: get(row, "supplier_id")?,
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
            active_date: get(row, "active_date")?,
            delete_date: get(row, "delete_date")?,
        })
    }
}

impl TableRow for PromotionRecord {
    const TABLE: &'static str = "promotions";
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "title",
        "details",
        "terms",
        "promotion_type",
        "x",
        "y",
        "store_ids",
        "product_ids",
        "category_ids",
        "start_date",
        "end_date",
        "days_available",
        "automatic",
        "active_date",
        "delete_date",
    ];

    const JSON_COLUMNS: &'static [&'static str] =
        &["store_ids", "product_ids", "category_ids", "days_available"];

    fn values(&self) -> Vec<Val> {
        vec![
            self.id.into(),
            (&self.title).into(),
            (&self.details).into(),
            (&self.terms).into(),
            self.kind.as_str().into(),
            (&self.x).into(),
            (&self.y).into(),
            json_text(&self.store_ids),
            json_text(&self.product_ids),
            json_text(&self.category_ids),
            self.start_date.into(),
            self.end_date.into(),
            json_text(&self.days_available),
            self.automatic.into(),
            self.active_date.into(),
            self.delete_date.into(),
        ]
    }

    fn from_row(row: &Row<'_>) -> Result<Self, sqlx::Error> {
        let kind: String = get(row, "promotion_type")?;
        Ok(Self {
            id: get(row, "id")?,
            title: get(row, "title")?,
            details: get(row, "details")?,
            terms: get(row, "terms")?,
            kind: PromotionType::parse(&kind)
                .ok_or_else(|| decode_error("promotion_type", format!("\"{kind}\"")))?,
            x: decimal(row, "x")?,
            y: optional_decimal(row, "y")?,
            store_ids: json(row, "store_ids")?,
            product_ids: json(row, "product_ids")?,
            category_ids: json(row, "category_ids")?,
            start_date: get(row, "start_date")?,
            end_date: get(row, "end_date")?,
            days_available: json(row, "days_available")?,
            automatic: get::<i64>(row, "automatic")? != 0,
            active_date: get(row, "active_date")?,
            delete_date: get(row, "delete_date")?,
        })
    }
}
