//! Products with their instances: two tables written in the caller's transaction.

use super::rows::{self, get, json, json_text, Row, TableRow, Val, WithChildren};
use super::{DbError, Tx};
use crate::domain::money;
use crate::domain::product::{InstanceRecord, ProductRecord};

impl TableRow for ProductRecord {
    const TABLE: &'static str = "products";
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "name",
        "barcode",
        "details",
        "tags",
        "unit",
        "images",
        "category_ids",
        "created_at",
        "active_date",
        "delete_date",
    ];

    const JSON_COLUMNS: &'static [&'static str] = &["images", "category_ids"];

    fn values(&self) -> Vec<Val> {
        vec![
            self.id.into(),
            (&self.name).into(),
            (&self.barcode).into(),
            (&self.details).into(),
            (&self.tags).into(),
            self.unit.into(),
            json_text(&self.images),
            json_text(&self.category_ids),
            self.created_at.into(),
            self.active_date.into(),
            self.delete_date.into(),
        ]
    }

    fn from_row(row: &Row<'_>) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: get(row, "id")?,
            name: get(row, "name")?,
            barcode: get(row, "barcode")?,
            details: get(row, "details")?,
            tags: get(row, "tags")?,
            unit: get(row, "unit")?,
            images: json(row, "images")?,
            category_ids: json(row, "category_ids")?,
            created_at: get(row, "created_at")?,
            active_date: get(row, "active_date")?,
            delete_date: get(row, "delete_date")?,
            instances: Vec::new(),
        })
    }
}

impl TableRow for InstanceRecord {
    const TABLE: &'static str = "product_instances";
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "product_id",
        "name",
        "price",
        "tax_percentage",
        "size",
        "tags",
        "active_date",
        "delete_date",
    ];

    fn values(&self) -> Vec<Val> {
        vec![
            self.id.into(),
            self.product_id.into(),
            (&self.name).into(),
            Val::Text(Some(money::text(&self.price))),
            Val::Text(Some(money::text(&self.tax_percentage))),
            (&self.size).into(),
            (&self.tags).into(),
            self.active_date.into(),
            self.delete_date.into(),
        ]
    }

    fn from_row(row: &Row<'_>) -> Result<Self, sqlx::Error> {
        let decimal = |column: &str| -> Result<rust_decimal::Decimal, sqlx::Error> {
            let text: String = get(row, column)?;
            money::parse_stored(&text).map_err(|e| sqlx::Error::Decode(e.into()))
        };
        Ok(Self {
            id: get(row, "id")?,
            product_id: get(row, "product_id")?,
            name: get(row, "name")?,
            price: decimal("price")?,
            tax_percentage: decimal("tax_percentage")?,
            size: get(row, "size")?,
            tags: get(row, "tags")?,
            active_date: get(row, "active_date")?,
            delete_date: get(row, "delete_date")?,
        })
    }
}

impl WithChildren for ProductRecord {
    type Child = InstanceRecord;
    const PARENT_COLUMN: &'static str = "product_id";

    fn id(&self) -> i64 {
        self.id
    }

    fn parent_of(instance: &InstanceRecord) -> i64 {
        instance.product_id
    }

    fn children(&self) -> &[InstanceRecord] {
        &self.instances
    }

    fn set_children(&mut self, instances: Vec<InstanceRecord>) {
        self.instances = instances;
    }
}

/// Writes a product row and its instances (new ones inserted, dropped ones marked deleted).
impl Tx {
    pub(super) async fn persist_product(
        &mut self,
        merchant_id: i64,
        product: &ProductRecord,
        is_new: bool,
    ) -> Result<(), DbError> {
        let conn = self.conn()?;
        if is_new {
            rows::insert(conn, merchant_id, product).await?;
        } else {
            rows::update(conn, merchant_id, product).await?;
        }
        let stored: std::collections::HashMap<i64, Option<i64>> = if is_new {
            Default::default()
        } else {
            sqlx::query_as::<_, (i64, Option<i64>)>(
            "SELECT id, delete_date FROM product_instances WHERE merchant_id = $1 AND product_id = $2",
        )
        .bind(merchant_id)
        .bind(product.id)
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .collect()
        };
        for instance in &product.instances {
            match stored.get(&instance.id) {
                None => rows::insert(conn, merchant_id, instance).await?,
                Some(deleted) if *deleted != instance.delete_date => {
                    rows::update(conn, merchant_id, instance).await?
                }
                Some(_) => {}
            }
        }
        Ok(())
    }
}
