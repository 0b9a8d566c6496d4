//! Customer orders made from completed baskets (api-reference.md).

use serde_json::{Map, Value};

use crate::fields::{Fields, Patch, Shape};
use merchantd_macros::Record;

pub const FULFILMENTS: [&str; 3] = ["collection", "delivery", "table"];
const STATUSES: [&str; 5] = ["pending", "accepted", "ready", "completed", "cancelled"];

/// The fields order writes accept (see [`Shape`]).
pub const ORDER_SHAPE: Shape = Shape::of::<OrderRecord>();

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
        after = "status",
        filter = "completed"
    )
)]
pub struct OrderRecord {
    pub id: i64,
    #[field(required)]
    pub basket_id: i64,
    #[field(read_only, filter = "storeIds")]
    pub store_id: i64,
    #[field(max_len = 20, kind = "choice", choices = &FULFILMENTS, required)]
    pub fulfilment: String,
    /// The customer it is for: the basket's unless the write names another of the merchant's.
    #[field(filter = "customerIds")]
    pub customer_id: Option<i64>,
    #[field(max_len = 200)]
    pub customer_name: Option<String>,
    #[field(max_len = 254)]
    pub customer_email: Option<String>,
    #[field(max_len = 40)]
    pub customer_phone: Option<String>,
    #[field(max_len = 1000)]
    pub delivery_address: Option<String>,
    #[field(max_len = 20)]
    pub table_number: Option<String>,
    pub due_date: Option<i64>,
    #[field(max_len = 2000)]
    pub note: Option<String>,
    #[field(max_len = 20, kind = "choice", choices = &STATUSES)]
    pub status: String,
    pub complete_date: Option<i64>,
    #[field(read_only)]
    pub active_date: Option<i64>,
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
        match f.reference(
            "customerId",
            self.customer_id,
            ctx.customer_exists,
            "a customer",
        ) {
            Some(Patch::Keep) if creating => self.customer_id = basket_customer,
            Some(patch) => self.customer_id = patch.apply(self.customer_id),
            None => {}
        }
        match f.text("fulfilment") {
            Patch::Set(x) if FULFILMENTS.contains(&x.as_str()) => self.fulfilment = x,
            Patch::Set(x) => f.reject(
                "fulfilment",
                format!("\"{x}\" is not collection, delivery or table."),
            ),
            _ if creating => f.reject("fulfilment", "required field is missing."),
            _ => {}
        }
        self.customer_name = f.text("customerName").apply(self.customer_name);
        self.customer_email = f.text("customerEmail").apply(self.customer_email);
        self.customer_phone = f.text("customerPhone").apply(self.customer_phone);
        self.delivery_address = f.text("deliveryAddress").apply(self.delivery_address);
        self.table_number = f.text("tableNumber").apply(self.table_number);
        self.due_date = f.date("dueDate").apply(self.due_date);
        self.note = f.text("note").apply(self.note);
        if let Patch::Set(status) = f.text("status") {
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
