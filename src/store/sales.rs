//! Baskets (with lines), transactions, orders and invoices (with items).

use std::collections::HashMap;

use rust_decimal::Decimal;
use sqlx::any::AnyRow;
use sqlx::AnyConnection;

use super::rows::{self, get, TableRow, Val};
use super::StoreError;
use crate::domain::basket::{BasketLine, BasketRecord, BasketType};
use crate::domain::money;
use crate::domain::sales::{InvoiceItem, InvoiceRecord, OrderRecord, TransactionRecord};

fn decimal(row: &AnyRow, column: &str) -> Result<Decimal, sqlx::Error> {
    let text: String = get(row, column)?;
    money::parse_stored(&text).map_err(|e| sqlx::Error::Decode(e.into()))
}

fn dec(d: &Decimal) -> Val {
    Val::Text(Some(money::text(d)))
}

impl TableRow for BasketRecord {
    const TABLE: &'static str = "baskets";
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "store_id",
        "name",
        "note",
        "basket_type",
        "total",
        "total_tax",
        "completed",
        "complete_date",
        "active_date",
        "delete_date",
    ];

    fn values(&self) -> Vec<Val> {
        vec![
            self.id.into(),
            self.store_id.into(),
            (&self.name).into(),
            (&self.note).into(),
            self.basket_type.as_str().into(),
            dec(&self.total().normalize()),
            dec(&self.total_tax().normalize()),
            self.completed.into(),
            self.complete_date.into(),
            self.active_date.into(),
            self.delete_date.into(),
        ]
    }

    fn from_row(row: &AnyRow) -> Result<Self, sqlx::Error> {
        let kind: String = get(row, "basket_type")?;
        Ok(Self {
            id: get(row, "id")?,
            store_id: get(row, "store_id")?,
            name: get(row, "name")?,
            note: get(row, "note")?,
            basket_type: BasketType::parse(&kind).unwrap_or(BasketType::Sale),
            lines: Vec::new(),
            completed: get::<i64>(row, "completed")? != 0,
            complete_date: get(row, "complete_date")?,
            active_date: get(row, "active_date")?,
            delete_date: get(row, "delete_date")?,
        })
    }
}

impl TableRow for BasketLine {
    const TABLE: &'static str = "basket_lines";
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "basket_id",
        "product_id",
        "product_instance_id",
        "quantity",
        "price",
        "original_price",
        "tax_percentage",
        "note",
        "added_date",
    ];

    fn values(&self) -> Vec<Val> {
        vec![
            self.id.into(),
            self.basket_id.into(),
            self.product_id.into(),
            self.product_instance_id.into(),
            self.quantity.into(),
            dec(&self.price),
            dec(&self.original_price),
            dec(&self.tax_percentage),
            (&self.note).into(),
            self.added_date.into(),
        ]
    }

    fn from_row(row: &AnyRow) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: get(row, "id")?,
            basket_id: get(row, "basket_id")?,
            product_id: get(row, "product_id")?,
            product_instance_id: get(row, "product_instance_id")?,
            quantity: get(row, "quantity")?,
            price: decimal(row, "price")?,
            original_price: decimal(row, "original_price")?,
            tax_percentage: decimal(row, "tax_percentage")?,
            note: get(row, "note")?,
            added_date: get(row, "added_date")?,
        })
    }
}

impl TableRow for TransactionRecord {
    const TABLE: &'static str = "transactions";
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "basket_id",
        "payment_type",
        "amount",
        "tip",
        "note",
        "completed",
        "complete_date",
        "active_date",
        "delete_date",
    ];

    fn values(&self) -> Vec<Val> {
        vec![
            self.id.into(),
            self.basket_id.into(),
            (&self.payment_type).into(),
            self.amount.into(),
            self.tip.into(),
            (&self.note).into(),
            self.completed.into(),
            self.complete_date.into(),
            self.active_date.into(),
            self.delete_date.into(),
        ]
    }

    fn from_row(row: &AnyRow) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: get(row, "id")?,
            basket_id: get(row, "basket_id")?,
            payment_type: get(row, "payment_type")?,
            amount: get(row, "amount")?,
            tip: get(row, "tip")?,
            note: get(row, "note")?,
            completed: get::<i64>(row, "completed")? != 0,
            complete_date: get(row, "complete_date")?,
            active_date: get(row, "active_date")?,
            delete_date: get(row, "delete_date")?,
        })
    }
}

impl TableRow for OrderRecord {
    const TABLE: &'static str = "orders";
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "basket_id",
        "store_id",
        "fulfilment",
        "customer_name",
        "customer_email",
        "customer_phone",
        "delivery_address",
        "table_number",
        "due_date",
        "note",
        "status",
        "complete_date",
        "active_date",
        "delete_date",
    ];

    fn values(&self) -> Vec<Val> {
        vec![
            self.id.into(),
            self.basket_id.into(),
            self.store_id.into(),
            (&self.fulfilment).into(),
            (&self.customer_name).into(),
            (&self.customer_email).into(),
            (&self.customer_phone).into(),
            (&self.delivery_address).into(),
            (&self.table_number).into(),
            self.due_date.into(),
            (&self.note).into(),
            (&self.status).into(),
            self.complete_date.into(),
            self.active_date.into(),
            self.delete_date.into(),
        ]
    }

    fn from_row(row: &AnyRow) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: get(row, "id")?,
            basket_id: get(row, "basket_id")?,
            store_id: get(row, "store_id")?,
            fulfilment: get(row, "fulfilment")?,
            customer_name: get(row, "customer_name")?,
            customer_email: get(row, "customer_email")?,
            customer_phone: get(row, "customer_phone")?,
            delivery_address: get(row, "delivery_address")?,
            table_number: get(row, "table_number")?,
            due_date: get(row, "due_date")?,
            note: get(row, "note")?,
            status: get(row, "status")?,
            complete_date: get(row, "complete_date")?,
            active_date: get(row, "active_date")?,
            delete_date: get(row, "delete_date")?,
        })
    }
}

impl TableRow for InvoiceRecord {
    const TABLE: &'static str = "invoices";
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "store_id",
        "supplier_id",
        "supplier_store_id",
        "reference",
        "note",
        "invoice_date",
        "completed",
        "complete_date",
        "active_date",
        "delete_date",
    ];

    fn values(&self) -> Vec<Val> {
        vec![
            self.id.into(),
            self.store_id.into(),
            self.supplier_id.into(),
            self.supplier_store_id.into(),
            (&self.reference).into(),
            (&self.note).into(),
            self.invoice_date.into(),
            self.completed.into(),
            self.complete_date.into(),
            self.active_date.into(),
            self.delete_date.into(),
        ]
    }

    fn from_row(row: &AnyRow) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: get(row, "id")?,
            store_id: get(row, "store_id")?,
            supplier_id: get(row, "supplier_id")?,
            supplier_store_id: get(row, "supplier_store_id")?,
            reference: get(row, "reference")?,
            note: get(row, "note")?,
            invoice_date: get(row, "invoice_date")?,
            items: Vec::new(),
            completed: get::<i64>(row, "completed")? != 0,
            complete_date: get(row, "complete_date")?,
            active_date: get(row, "active_date")?,
            delete_date: get(row, "delete_date")?,
        })
    }
}

impl TableRow for InvoiceItem {
    const TABLE: &'static str = "invoice_items";
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "invoice_id",
        "product_id",
        "quantity",
        "unit_price",
        "vat_percentage",
    ];

    fn values(&self) -> Vec<Val> {
        vec![
            self.id.into(),
            self.invoice_id.into(),
            self.product_id.into(),
            self.quantity.into(),
            dec(&self.unit_price),
            dec(&self.vat_percentage),
        ]
    }

    fn from_row(row: &AnyRow) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: get(row, "id")?,
            invoice_id: get(row, "invoice_id")?,
            product_id: get(row, "product_id")?,
            quantity: get(row, "quantity")?,
            unit_price: decimal(row, "unit_price")?,
            vat_percentage: decimal(row, "vat_percentage")?,
        })
    }
}

pub async fn load_baskets(
    conn: &mut AnyConnection,
    merchant_id: i64,
) -> Result<Vec<BasketRecord>, StoreError> {
    let mut baskets: Vec<BasketRecord> = rows::load_all(conn, merchant_id, "").await?;
    let lines: Vec<BasketLine> = rows::load_all(conn, merchant_id, "").await?;
    let mut by_basket: HashMap<i64, Vec<BasketLine>> = HashMap::new();
    for line in lines {
        by_basket.entry(line.basket_id).or_default().push(line);
    }
    for b in &mut baskets {
        b.lines = by_basket.remove(&b.id).unwrap_or_default();
    }
    Ok(baskets)
}

/// Writes a basket and replaces its lines (only open baskets change).
pub async fn persist_basket(
    conn: &mut AnyConnection,
    merchant_id: i64,
    basket: &BasketRecord,
    is_new: bool,
) -> Result<(), StoreError> {
    if is_new {
        rows::insert(conn, merchant_id, basket).await?;
    } else {
        rows::update(conn, merchant_id, basket).await?;
        sqlx::query("DELETE FROM basket_lines WHERE merchant_id = $1 AND basket_id = $2")
            .bind(merchant_id)
            .bind(basket.id)
            .execute(&mut *conn)
            .await?;
    }
    for line in &basket.lines {
        rows::insert(conn, merchant_id, line).await?;
    }
    Ok(())
}

pub async fn load_invoices(
    conn: &mut AnyConnection,
    merchant_id: i64,
) -> Result<Vec<InvoiceRecord>, StoreError> {
    let mut invoices: Vec<InvoiceRecord> = rows::load_all(conn, merchant_id, "").await?;
    let items: Vec<InvoiceItem> = rows::load_all(conn, merchant_id, "").await?;
    let mut by_invoice: HashMap<i64, Vec<InvoiceItem>> = HashMap::new();
    for item in items {
        by_invoice.entry(item.invoice_id).or_default().push(item);
    }
    for i in &mut invoices {
        i.items = by_invoice.remove(&i.id).unwrap_or_default();
    }
    Ok(invoices)
}

/// Writes an invoice and replaces its items (only open invoices change).
pub async fn persist_invoice(
    conn: &mut AnyConnection,
    merchant_id: i64,
    invoice: &InvoiceRecord,
    is_new: bool,
) -> Result<(), StoreError> {
    if is_new {
        rows::insert(conn, merchant_id, invoice).await?;
    } else {
        rows::update(conn, merchant_id, invoice).await?;
        sqlx::query("DELETE FROM invoice_items WHERE merchant_id = $1 AND invoice_id = $2")
            .bind(merchant_id)
            .bind(invoice.id)
            .execute(&mut *conn)
            .await?;
    }
    for item in &invoice.items {
        rows::insert(conn, merchant_id, item).await?;
    }
    Ok(())
}
