//! Baskets (with lines), transactions, orders and invoices (with items).

use super::rows::{decimal, get, Row, TableRow, Val, WithChildren};
use crate::domain::basket::{BasketLine, BasketRecord, BasketType};
use crate::domain::sales::{InvoiceItem, InvoiceRecord, OrderRecord, TransactionRecord};

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
            Val::from(&self.total().normalize()),
            Val::from(&self.total_tax().normalize()),
            self.completed.into(),
            self.complete_date.into(),
            self.active_date.into(),
            self.delete_date.into(),
        ]
    }

    fn from_row(row: &Row<'_>) -> Result<Self, sqlx::Error> {
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
            Val::from(&self.price),
            Val::from(&self.original_price),
            Val::from(&self.tax_percentage),
            (&self.note).into(),
            self.added_date.into(),
        ]
    }

    fn from_row(row: &Row<'_>) -> Result<Self, sqlx::Error> {
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

    fn from_row(row: &Row<'_>) -> Result<Self, sqlx::Error> {
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

    fn from_row(row: &Row<'_>) -> Result<Self, sqlx::Error> {
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

    fn from_row(row: &Row<'_>) -> Result<Self, sqlx::Error> {
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
            Val::from(&self.unit_price),
            Val::from(&self.vat_percentage),
        ]
    }

    fn from_row(row: &Row<'_>) -> Result<Self, sqlx::Error> {
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

impl WithChildren for BasketRecord {
    type Child = BasketLine;
    const PARENT_COLUMN: &'static str = "basket_id";

    fn id(&self) -> i64 {
        self.id
    }

    fn parent_of(line: &BasketLine) -> i64 {
        line.basket_id
    }

    fn children(&self) -> &[BasketLine] {
        &self.lines
    }

    fn set_children(&mut self, lines: Vec<BasketLine>) {
        self.lines = lines;
    }
}

impl WithChildren for InvoiceRecord {
    type Child = InvoiceItem;
    const PARENT_COLUMN: &'static str = "invoice_id";

    fn id(&self) -> i64 {
        self.id
    }

    fn parent_of(item: &InvoiceItem) -> i64 {
        item.invoice_id
    }

    fn children(&self) -> &[InvoiceItem] {
        &self.items
    }

    fn set_children(&mut self, items: Vec<InvoiceItem>) {
        self.items = items;
    }
}
