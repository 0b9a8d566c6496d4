//! Supplier invoices: stock bought from a supplier and received at one store, with its lines.

use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::fields::{next_id, Fields, Patch, Shape};
use crate::money;
use crate::record::Declared;
use merchantd_macros::Record;

/// A line of an invoice.
#[derive(Clone, Debug, PartialEq, Record)]
#[record(table = "invoice_items", schema = "InvoiceLine", noun = "Invoice item")]
pub struct InvoiceItem {
    #[field(writable)]
    pub id: i64,
    #[field(parent, hidden)]
    pub invoice_id: i64,
    #[field(required)]
    pub product_id: i64,
    #[field(required)]
    pub quantity: i64,
    #[field(kind = "money", required)]
    pub unit_price: Decimal,
    #[field(kind = "rate", required)]
    pub vat_percentage: Decimal,
}

/// A purchase of stock from a supplier, received at one store.
#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(
    history,
    table = "invoices",
    event = "invoice",
    // The spec names the invoice header `invoiceId` (a comma list); `invoiceIds` works too.
    ids("invoiceId", "invoiceIds"),
    computed(name = "totalQuantity", kind = "integer", get = "total_quantity", after = "items"),
    computed(name = "totalPrice", kind = "money", get = "shown_total_price", after = "items"),
    computed(name = "totalVat", kind = "money", get = "shown_total_vat", after = "items"),
    computed(name = "totalIncVat", kind = "money", get = "shown_total_inc_vat", after = "items")
)]
pub struct InvoiceRecord {
    pub id: i64,
    #[field(required, filter = "storeIds")]
    pub store_id: i64,
    #[field(required)]
    pub supplier_id: i64,
    pub supplier_store_id: Option<i64>,
    #[field(max_len = 100)]
    pub reference: Option<String>,
    #[field(children, stored)]
    pub items: Vec<InvoiceItem>,
    #[field(max_len = 2000)]
    pub note: Option<String>,
    pub invoice_date: Option<i64>,
    pub completed: bool,
    pub complete_date: Option<i64>,
    #[field(read_only)]
    pub active_date: Option<i64>,
    pub delete_date: Option<i64>,
}

/// What invoice rules need from the rest of the merchant.
pub struct InvoiceContext<'a> {
    pub store_exists: &'a dyn Fn(i64) -> bool,
    pub supplier_exists: &'a dyn Fn(i64) -> bool,
    /// The supplier a live supplier store belongs to.
    pub supplier_of_store: &'a dyn Fn(i64) -> Option<i64>,
    pub product_exists: &'a dyn Fn(i64) -> bool,
}

/// The fields invoice writes accept (see [`Shape`]); `items` holds the goods.
pub const INVOICE_SHAPE: Shape =
    Shape::nested::<InvoiceRecord>(&[("items", Shape::of::<InvoiceItem>())]);

impl InvoiceRecord {
    /// Σ quantity.
    pub fn total_quantity(&self) -> i64 {
        self.items.iter().map(|i| i.quantity).sum()
    }

    /// Σ unit price × quantity.
    pub fn total_price(&self) -> Decimal {
        self.items
            .iter()
            .map(|i| i.unit_price * Decimal::from(i.quantity))
            .sum()
    }

    /// Σ unit price × quantity × VAT rate, to 4 decimals.
    pub fn total_vat(&self) -> Decimal {
        self.items
            .iter()
            .map(|i| i.unit_price * Decimal::from(i.quantity) * i.vat_percentage)
            .sum::<Decimal>()
            .round_dp(4)
    }

    pub fn shown_total_price(&self) -> Decimal {
        self.total_price().normalize()
    }

    pub fn shown_total_vat(&self) -> Decimal {
        self.total_vat().normalize()
    }

    pub fn shown_total_inc_vat(&self) -> Decimal {
        (self.total_price() + self.total_vat()).normalize()
    }
}

impl InvoiceRecord {
    crate::blank!(|id, now|);

    pub fn apply(
        mut self,
        fields: Map<String, Value>,
        ids: &mut dyn Iterator<Item = i64>,
        ctx: &InvoiceContext<'_>,
        now: i64,
        creating: bool,
    ) -> Result<Self, Vec<String>> {
        let items = fields.get("items").cloned();
        let mut f = Fields::declared::<Self>(fields);
        match f.integer("storeId") {
            Patch::Set(s) if (ctx.store_exists)(s) => self.store_id = s,
            Patch::Set(s) => f.reject("storeId", format!("{s} is not a store of this merchant.")),
            _ if creating => f.reject("storeId", "required field is missing."),
            _ => {}
        }
        match f.integer("supplierId") {
            Patch::Set(s) if (ctx.supplier_exists)(s) => self.supplier_id = s,
            Patch::Set(s) => f.reject(
                "supplierId",
                format!("{s} is not a supplier of this merchant."),
            ),
            _ if creating => f.reject("supplierId", "required field is missing."),
            _ => {}
        }
        match f.integer("supplierStoreId") {
            Patch::Set(s) => match (ctx.supplier_of_store)(s) {
                Some(owner) if owner == self.supplier_id => self.supplier_store_id = Some(s),
                Some(_) => f.reject(
                    "supplierStoreId",
                    format!("{s} is not a store of supplier {}.", self.supplier_id),
                ),
                None => f.reject(
                    "supplierStoreId",
                    format!("{s} is not a supplier store of this merchant."),
                ),
            },
            Patch::Clear => self.supplier_store_id = None,
            Patch::Keep => {}
        }
        self.reference = f.text("reference").apply(self.reference);
        self.note = f.text("note").apply(self.note);
        self.invoice_date = f.date("invoiceDate").apply(self.invoice_date);
        match items {
            None => {}
            Some(Value::Object(entries)) => {
                let mut next = Vec::new();
                for (key, entry) in entries {
                    match self.item_from(&key, entry, ids, ctx) {
                        Ok(item) => next.push(item),
                        Err(list) => list.into_iter().for_each(|p| f.reject("items", p)),
                    }
                }
                self.items = next;
            }
            Some(Value::Null) => self.items.clear(),
            Some(_) => f.reject("items", "must be an object of items keyed by client keys."),
        }
        if f.boolean("completed") == Some(true) {
            if self.items.is_empty() {
                f.reject("completed", "an invoice without items cannot be received.");
            }
            self.completed = true;
            self.complete_date = Some(now);
        }
        f.finish()?;
        Ok(self)
    }

    fn item_from(
        &self,
        key: &str,
        entry: Value,
        ids: &mut dyn Iterator<Item = i64>,
        ctx: &InvoiceContext<'_>,
    ) -> Result<InvoiceItem, Vec<String>> {
        let Value::Object(entry) = entry else {
            return Err(vec![format!("{key}: must be an object.")]);
        };
        let existing = entry
            .get("id")
            .and_then(Value::as_i64)
            .and_then(|id| self.items.iter().find(|i| i.id == id).cloned());
        if entry.get("id").is_some_and(|v| !v.is_null()) && existing.is_none() {
            return Err(vec![format!("{key}: id: not an item of this invoice.")]);
        }
        let mut problems = Vec::new();
        let product = entry
            .get("productId")
            .and_then(Value::as_i64)
            .or(existing.as_ref().map(|i| i.product_id));
        match product {
            Some(p) if (ctx.product_exists)(p) => {}
            Some(p) => problems.push(format!(
                "{key}: productId: {p} is not a product of this merchant."
            )),
            None => problems.push(format!("{key}: productId: required field is missing.")),
        }
        let quantity = match entry.get("quantity") {
            Some(Value::Number(n)) => n.as_i64().filter(|q| (1..=money::MAX_QUANTITY).contains(q)),
            None => existing.as_ref().map(|i| i.quantity),
            _ => None,
        };
        if quantity.is_none() {
            problems.push(format!(
                "{key}: quantity: must be a positive integer of at most {} units.",
                money::MAX_QUANTITY
            ));
        }
        let (unit_price, vat) = item_prices(key, &entry, existing.as_ref());
        for unknown in entry
            .keys()
            .filter(|k| !InvoiceItem::WRITABLE.contains(&k.as_str()))
        {
            problems.push(format!("{key}: {unknown}: unknown field."));
        }
        let (unit_price, vat) = match (unit_price, vat) {
            (Ok(u), Ok(v)) => (u, v),
            (u, v) => {
                problems.extend(u.err());
                problems.extend(v.err());
                return Err(problems);
            }
        };
        if !problems.is_empty() {
            return Err(problems);
        }
        let id = match &existing {
            Some(i) => i.id,
            None => next_id(ids)?,
        };
        Ok(InvoiceItem {
            id,
            invoice_id: self.id,
            product_id: product.unwrap_or_default(),
            quantity: quantity.unwrap_or_default(),
            unit_price,
            vat_percentage: vat,
        })
    }
}

/// An item's unit price and VAT rate, each sent or kept from the item it updates.
fn item_prices(
    key: &str,
    entry: &Map<String, Value>,
    existing: Option<&InvoiceItem>,
) -> (Result<Decimal, String>, Result<Decimal, String>) {
    let decimal = |field: &str,
                   parse: fn(&Value) -> Result<Decimal, String>,
                   current: Option<Decimal>| match entry.get(field) {
        Some(v) => parse(v).map_err(|e| format!("{key}: {field}: {e}")),
        None => current.ok_or_else(|| format!("{key}: {field}: required field is missing.")),
    };
    (
        decimal("unitPrice", money::money, existing.map(|i| i.unit_price)),
        decimal(
            "vatPercentage",
            money::rate,
            existing.map(|i| i.vat_percentage),
        ),
    )
}

/// New items a write adds (each takes an identifier).
pub fn new_items(fields: &Map<String, Value>) -> usize {
    crate::fields::new_children(fields, "items")
}
