//! Transactions, orders and invoices (api-reference.md). Baskets live in `basket.rs`.

use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::fields::{next_id, Fields, Patch, Shape};
use crate::money;
use crate::record::Declared;
use merchantd_macros::Record;

pub const PAYMENT_TYPES: [&str; 5] = ["CASH", "CARD", "CHEQUE", "VOUCHER", "APP"];

/// A payment against a basket.
#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(history, table = "transactions", event = "transaction")]
pub struct TransactionRecord {
    pub id: i64,
    #[field(required, filter = "basketIds")]
    pub basket_id: i64,
    #[field(name = "type", kind = "choice", choices = &PAYMENT_TYPES, required)]
    pub payment_type: String,
    /// Minor units.
    #[field(required)]
    pub amount: i64,
    pub tip: i64,
    pub note: Option<String>,
    /// The payment this transaction refunds (a linked refund): its amount goes back.
    pub refund_of: Option<i64>,
    /// The basket's register, and the session open there when the payment was made.
    #[field(read_only)]
    pub register_id: Option<i64>,
    #[field(read_only, filter = "sessionIds")]
    pub session_id: Option<i64>,
    /// Who took it: the token's employee.
    #[field(read_only)]
    pub employee_id: Option<i64>,
    pub completed: bool,
    #[field(read_only)]
    pub complete_date: Option<i64>,
    #[field(read_only)]
    pub active_date: Option<i64>,
    #[field(read_only)]
    pub delete_date: Option<i64>,
    /// The till's UUID for the payment, unique per merchant: creating it again answers the
    /// payment it made.
    pub client_id: Option<String>,
    /// When the payment was taken at the till: its `completeDate` once completed.
    #[field(kind = "date")]
    pub occurred_at: Option<i64>,
    /// A digest of the body it was made from: the same `clientId` with another is refused.
    #[field(hidden)]
    pub client_digest: Option<String>,
}

pub(crate) fn minor_units(f: &mut Fields, key: &str, value: Option<&Value>) -> Option<i64> {
    match value {
        None | Some(Value::Null) => None,
        Some(Value::Number(n))
            if n.as_i64()
                .is_some_and(|v| (0..=money::MAX_MONEY).contains(&v)) =>
        {
            n.as_i64()
        }
        Some(_) => {
            f.reject(
                key,
                "must be a whole, non-negative number of minor units (600 is £6.00).",
            );
            None
        }
    }
}

/// What payment rules need from the rest of the merchant.
pub struct PaymentContext<'a> {
    /// Whether an id is a basket of this merchant (open or not: whether it is still open is a
    /// rule with its own message, checked by the caller).
    pub basket_exists: &'a dyn Fn(i64) -> bool,
    /// The payment a refund (`.0`) names: its type and what is left to refund of it.
    pub refundable: &'a dyn Fn(i64, i64) -> Result<Refundable, String>,
    /// Whether a refund may go back to another payment type than the payment's.
    pub any_type: bool,
    /// A basket's register and the session open there.
    pub till: &'a dyn Fn(i64) -> (Option<i64>, Option<i64>),
    /// The employee the writing token acts as (0: none).
    pub caller: i64,
}

/// What a refund needs of the payment it names.
pub struct Refundable {
    pub payment_type: String,
    /// Its amount less what other refunds give back.
    pub left: i64,
}

impl TransactionRecord {
    crate::blank!(|id, now|);

    pub fn apply(
        mut self,
        fields: Map<String, Value>,
        ctx: &PaymentContext<'_>,
        now: i64,
        creating: bool,
    ) -> Result<Self, Vec<String>> {
        let amount = fields.get("amount").cloned();
        let tip = fields.get("tip").cloned();
        let mut f = Fields::declared::<Self>(fields);
        match f.integer("basketId") {
            Patch::Set(b) if !creating && b != self.basket_id => {
                f.reject("basketId", "a transaction cannot move to another basket.")
            }
            Patch::Set(b) if (ctx.basket_exists)(b) => self.basket_id = b,
            Patch::Set(b) => f.reject("basketId", format!("{b} is not a basket of this merchant.")),
            _ if creating => f.reject("basketId", "required field is missing."),
            _ => {}
        }
        let refunded = self.refund(&mut f, ctx, creating);
        match f.text("type", 20) {
            Patch::Set(t) if PAYMENT_TYPES.contains(&t.as_str()) => self.payment_type = t,
            Patch::Set(t) => f.reject(
                "type",
                format!("\"{t}\" is not one of {}.", PAYMENT_TYPES.join(", ")),
            ),
            _ if creating && refunded.is_some() => {}
            _ if creating => f.reject("type", "required field is missing."),
            _ => {}
        }
        match minor_units(&mut f, "amount", amount.as_ref()) {
            Some(a) => self.amount = a,
            None if creating && amount.is_none() => {
                f.reject("amount", "required field is missing.")
            }
            None => {}
        }
        if let Some(payment) = refunded {
            self.check_refund(&mut f, payment, ctx.any_type);
        }
        if let Some(t) = minor_units(&mut f, "tip", tip.as_ref()) {
            self.tip = t;
        }
        self.note = f.text("note", 2000).apply(self.note);
        crate::offline::sync::client_fields(
            &mut f,
            "transaction",
            creating,
            now,
            (&mut self.client_id, &mut self.occurred_at),
        );
        if f.boolean("completed") == Some(true) {
            self.completed = true;
            self.complete_date = Some(self.occurred_at.unwrap_or(now));
        }
        f.finish()?;
        if creating {
            (self.register_id, self.session_id) = (ctx.till)(self.basket_id);
            self.employee_id = (ctx.caller != 0).then_some(ctx.caller);
        }
        Ok(self)
    }
}

pub const FULFILMENTS: [&str; 3] = ["collection", "delivery", "table"];
const STATUSES: [&str; 5] = ["pending", "accepted", "ready", "completed", "cancelled"];

/// The fields order writes accept (see [`Shape`]).
pub const ORDER_SHAPE: Shape = Shape::of::<OrderRecord>();

impl TransactionRecord {
    /// The payment a refund names, read from `refundOf` (it never changes once written); its
    /// type becomes the refund's unless the write names one.
    fn refund(
        &mut self,
        f: &mut Fields,
        ctx: &PaymentContext<'_>,
        creating: bool,
    ) -> Option<Refundable> {
        match f.integer("refundOf") {
            Patch::Set(p) if !creating && self.refund_of != Some(p) => {
                f.reject("refundOf", "a refund cannot change the payment it refunds.");
                None
            }
            Patch::Clear if self.refund_of.is_some() => {
                f.reject("refundOf", "a refund cannot change the payment it refunds.");
                None
            }
            Patch::Set(p) => match (ctx.refundable)(self.id, p) {
                Ok(payment) => {
                    self.refund_of = Some(p);
                    if creating {
                        self.payment_type = payment.payment_type.clone();
                    }
                    Some(payment)
                }
                Err(why) => {
                    f.reject("refundOf", why);
                    None
                }
            },
            _ => self
                .refund_of
                .and_then(|p| (ctx.refundable)(self.id, p).ok()),
        }
    }

    fn check_refund(&self, f: &mut Fields, payment: Refundable, any_type: bool) {
        if !any_type && self.payment_type != payment.payment_type {
            f.reject(
                "type",
                format!(
                    "a refund goes back to the payment's type ({}); this merchant does not refund to another type.",
                    payment.payment_type
                ),
            );
        }
        if self.amount > payment.left {
            f.reject(
                "amount",
                format!(
                    "{} is more than is left to refund of payment {} ({}).",
                    self.amount,
                    self.refund_of.unwrap_or_default(),
                    payment.left
                ),
            );
        }
    }
}

/// The fields transaction writes accept (see [`Shape`]).
pub const TRANSACTION_SHAPE: Shape = Shape::of::<TransactionRecord>();

/// A customer order made from a completed basket.
#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(
    history,
    table = "orders",
    event = "order",
    computed(
        name = "completed",
        kind = "bool",
        get = "is_completed",
        after = "status"
    )
)]
pub struct OrderRecord {
    pub id: i64,
    #[field(required)]
    pub basket_id: i64,
    #[field(read_only, filter = "storeIds")]
    pub store_id: i64,
    #[field(kind = "choice", choices = &FULFILMENTS, required)]
    pub fulfilment: String,
    /// The customer it is for: the basket's unless the write names another of the merchant's.
    #[field(filter = "customerIds")]
    pub customer_id: Option<i64>,
    pub customer_name: Option<String>,
    pub customer_email: Option<String>,
    pub customer_phone: Option<String>,
    pub delivery_address: Option<String>,
    pub table_number: Option<String>,
    pub due_date: Option<i64>,
    pub note: Option<String>,
    #[field(kind = "choice", choices = &STATUSES)]
    pub status: String,
    #[field(read_only)]
    pub complete_date: Option<i64>,
    #[field(read_only)]
    pub active_date: Option<i64>,
    #[field(read_only)]
    pub delete_date: Option<i64>,
}

/// What order rules need from the rest of the merchant.
pub struct OrderContext<'a> {
    /// The store and customer of a basket of this merchant.
    pub basket: &'a dyn Fn(i64) -> Option<(i64, Option<i64>)>,
    /// A live customer of this merchant?
    pub customer_exists: &'a dyn Fn(i64) -> bool,
}

fn status_rank(s: &str) -> usize {
    STATUSES.iter().position(|x| *x == s).unwrap_or(0)
}

impl OrderRecord {
    crate::blank!(|id, now| status: "pending".into());

    /// Completed or cancelled.
    pub fn is_completed(&self) -> bool {
        self.status == "completed" || self.status == "cancelled"
    }

    /// `ctx.basket` gives the store and customer of a basket of this merchant (None: not one).
    pub fn apply(
        mut self,
        fields: Map<String, Value>,
        ctx: &OrderContext<'_>,
        now: i64,
        creating: bool,
    ) -> Result<Self, Vec<String>> {
        let mut f = Fields::declared::<Self>(fields);
        let mut basket_customer = None;
        match f.integer("basketId") {
            Patch::Set(b) if !creating && b != self.basket_id => {
                f.reject("basketId", "an order cannot move to another basket.")
            }
            Patch::Set(b) => match (ctx.basket)(b) {
                Some((store, customer)) => {
                    self.basket_id = b;
                    self.store_id = store;
                    basket_customer = customer;
                }
                None => f.reject("basketId", format!("{b} is not a basket of this merchant.")),
            },
            _ if creating => f.reject("basketId", "required field is missing."),
            _ => {}
        }
        match f.integer("customerId") {
            Patch::Set(c) if self.customer_id == Some(c) || (ctx.customer_exists)(c) => {
                self.customer_id = Some(c)
            }
            Patch::Set(c) => f.reject(
                "customerId",
                format!("{c} is not a customer of this merchant."),
            ),
            Patch::Clear => self.customer_id = None,
            Patch::Keep if creating => self.customer_id = basket_customer,
            Patch::Keep => {}
        }
        match f.text("fulfilment", 20) {
            Patch::Set(x) if FULFILMENTS.contains(&x.as_str()) => self.fulfilment = x,
            Patch::Set(x) => f.reject(
                "fulfilment",
                format!("\"{x}\" is not collection, delivery or table."),
            ),
            _ if creating => f.reject("fulfilment", "required field is missing."),
            _ => {}
        }
        self.customer_name = f.text("customerName", 200).apply(self.customer_name);
        self.customer_email = f.text("customerEmail", 254).apply(self.customer_email);
        self.customer_phone = f.text("customerPhone", 40).apply(self.customer_phone);
        self.delivery_address = f.text("deliveryAddress", 1000).apply(self.delivery_address);
        self.table_number = f.text("tableNumber", 20).apply(self.table_number);
        self.due_date = f.date("dueDate").apply(self.due_date);
        self.note = f.text("note", 2000).apply(self.note);
        if let Patch::Set(status) = f.text("status", 20) {
            if !STATUSES.contains(&status.as_str()) {
                f.reject(
                    "status",
                    format!("\"{status}\" is not one of {}.", STATUSES.join(", ")),
                );
            } else if status == "cancelled" || status_rank(&status) >= status_rank(&self.status) {
                if status != self.status && (status == "completed" || status == "cancelled") {
                    self.complete_date = Some(now);
                }
                self.status = status;
            } else {
                f.reject(
                    "status",
                    format!("cannot go back from {} to {status}.", self.status),
                );
            }
        }
        if self.fulfilment == "delivery" && self.delivery_address.is_none() {
            f.reject("deliveryAddress", "required for a delivery.");
        }
        f.finish()?;
        Ok(self)
    }
}

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
    pub reference: Option<String>,
    #[field(children, stored)]
    pub items: Vec<InvoiceItem>,
    pub note: Option<String>,
    pub invoice_date: Option<i64>,
    pub completed: bool,
    #[field(read_only)]
    pub complete_date: Option<i64>,
    #[field(read_only)]
    pub active_date: Option<i64>,
    #[field(read_only)]
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
        self.reference = f.text("reference", 100).apply(self.reference);
        self.note = f.text("note", 2000).apply(self.note);
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
    match fields.get("items") {
        Some(Value::Object(entries)) => entries
            .values()
            .filter(|e| e.get("id").is_none_or(Value::is_null))
            .count(),
        _ => 0,
    }
}
