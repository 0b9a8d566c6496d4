//! A sale or wastage at one store, and its lines (api-reference.md, Basket).

use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::fields::{Fields, Shape};
use crate::offline::sync::SyncWarnings;
use crate::record::Choice;
use crate::sales::pricing::{Receipt, Rounding};
use merchantd_macros::Record;

crate::choice! {
    pub enum BasketType {
        Sale = "sale",
        Wastage = "wastage",
    }
}

#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(
    history,
    table = "baskets",
    event = "basket",
    computed(
        name = "total",
        kind = "money",
        get = "shown_total",
        after = "basketProducts",
        column = "total"
    ),
    computed(
        name = "totalTax",
        kind = "money",
        get = "shown_total_tax",
        after = "basketProducts",
        column = "total_tax"
    )
)]
pub struct BasketRecord {
    pub id: i64,
    #[field(required, filter = "storeIds")]
    pub store_id: i64,
    #[field(max_len = 200)]
    pub name: Option<String>,
    #[field(max_len = 2000)]
    pub note: Option<String>,
    #[field(name = "type", kind = "choice")]
    pub basket_type: BasketType,
    #[field(name = "basketProducts", children, stored)]
    pub lines: Vec<BasketLine>,
    #[field(filter = "completed")]
    pub completed: bool,
    pub complete_date: Option<i64>,
    #[field(read_only)]
    pub active_date: Option<i64>,
    pub delete_date: Option<i64>,
    /// Promotions applied by hand, beside the automatic ones.
    pub promotion_ids: Vec<i64>,
    /// Who bought, when the till knows (a customer of this merchant).
    #[field(filter = "customerIds")]
    pub customer_id: Option<i64>,
    /// The till it is sold at: a register of its store.
    pub register_id: Option<i64>,
    /// The till session it completed in: its register's open session at completion.
    #[field(read_only, filter = "sessionIds")]
    pub session_id: Option<i64>,
    /// Who sold: the token's employee unless the write names another.
    pub employee_id: Option<i64>,
    /// Its register's next number, taken at completion: 1, 2, 3… per register, no gap.
    #[field(read_only)]
    pub receipt_number: Option<i64>,
    /// The basket priced by the sale engine: lines, discounts, tax per rate, totals and the
    /// cash total; computed at each write while open, frozen by completion.
    #[field(kind = "json", read_only)]
    pub receipt: Option<Receipt>,
    /// The till's UUID for the sale (`POST /basket/sync`, or a basket created with one),
    /// unique per merchant: creating it again answers the basket it made.
    #[field(max_len = crate::offline::sync::CLIENT_ID_LEN, create_only)]
    pub client_id: Option<String>,
    /// When the sale happened at the till; it is also the sale's `completeDate`, so reports
    /// count it at its time of sale.
    #[field(kind = "date")]
    pub occurred_at: Option<i64>,
    /// When an offline sale reached the server.
    #[field(kind = "date", read_only)]
    pub sync_date: Option<i64>,
    /// What had changed since the till sold, recorded with the sale instead of refusing it.
    #[field(kind = "json", read_only)]
    pub sync_warnings: Option<SyncWarnings>,
    /// A digest of the sale as the till sent it: the same `clientId` with another body is
    /// refused.
    #[field(hidden)]
    pub client_digest: Option<String>,
}

/// The price a line sells at: the instance's, unless the write says otherwise.
#[derive(Clone, Debug)]
pub struct InstancePrice {
    pub product_id: i64,
    pub instance_id: i64,
    pub price: Decimal,
    pub tax_percentage: Decimal,
}

/// What basket rules need from the rest of the merchant.
pub struct BasketContext<'a> {
    /// A live store of this merchant?
    pub store_exists: &'a dyn Fn(i64) -> bool,
    /// A live customer of this merchant?
    pub customer_exists: &'a dyn Fn(i64) -> bool,
    /// The instance a line sells: `Err` explains (unknown product, several instances...).
    pub instance: &'a dyn Fn(i64, Option<i64>) -> Result<InstancePrice, String>,
    /// Σ amount of the completed transactions of a basket, in minor units: (cash, other).
    pub paid: &'a dyn Fn(i64) -> (i64, i64),
    /// The sale line a line of basket `.0` returns, or why it cannot be returned.
    pub returnable: &'a dyn Fn(i64, &ReturnOf) -> Result<Returnable, String>,
    /// Why a promotion cannot be applied to this basket by hand, if it cannot.
    pub promotion: &'a dyn Fn(&BasketRecord, i64) -> Result<(), String>,
    /// The basket priced (the sale engine with the merchant's catalogue and promotions).
    pub price: &'a dyn Fn(&BasketRecord) -> Receipt,
    pub rounding: Rounding,
    pub till: Till<'a>,
}

/// What basket rules need of the merchant's registers and their sessions.
pub struct Till<'a> {
    /// A live register's store, or why the id is not one.
    pub register: &'a dyn Fn(i64) -> Result<i64, String>,
    /// The session open at a register, if any.
    pub open_session: &'a dyn Fn(i64) -> Option<i64>,
    /// A register's last receipt number so far (0 before its first).
    pub last_receipt: &'a dyn Fn(i64) -> i64,
    /// A live employee of this merchant?
    pub employee_exists: &'a dyn Fn(i64) -> bool,
    /// The employee the writing token acts as (0: none).
    pub caller: i64,
    /// Whether a sale at a register completes only in an open session.
    pub sessions_required: bool,
}

/// The fields writes accept (see [`Shape`]); `basketProducts` holds the lines.
pub const SHAPE: Shape =
    Shape::nested::<BasketRecord>(&[("basketProducts", Shape::of::<BasketLine>())]);

impl BasketRecord {
    crate::blank!(|id, now|);

    /// The total as answers show it (no trailing zeros).
    pub fn shown_total(&self) -> Decimal {
        self.total().normalize()
    }

    /// The tax as answers show it (no trailing zeros).
    pub fn shown_total_tax(&self) -> Decimal {
        self.total_tax().normalize()
    }

    /// Σ price × quantity.
    pub fn total(&self) -> Decimal {
        self.lines
            .iter()
            .map(|l| l.price * Decimal::from(l.quantity))
            .sum()
    }

    /// The receipt's tax; for a basket written before the sale engine, Σ price × quantity ×
    /// rate / (1 + rate) to 4 decimals, as it was then.
    pub fn total_tax(&self) -> Decimal {
        if let Some(receipt) = &self.receipt {
            return Decimal::from(receipt.tax);
        }
        self.lines
            .iter()
            .map(|l| {
                l.price * Decimal::from(l.quantity) * l.tax_percentage
                    / (Decimal::ONE + l.tax_percentage)
            })
            .sum::<Decimal>()
            .round_dp(4)
    }

    /// Applies written fields to an open basket. Lines sent with their id are updated, lines
    /// without one are added, and lines left out are removed (an open basket is a draft).
    pub fn apply(
        mut self,
        mut fields: Map<String, Value>,
        ids: &mut dyn Iterator<Item = i64>,
        ctx: &BasketContext<'_>,
        now: i64,
        creating: bool,
    ) -> Result<Self, Vec<String>> {
        let lines = fields.shift_remove("basketProducts"); // moved: most of the body
        let kind = fields.shift_remove("type");
        let promotions = fields.shift_remove("promotionIds");
        let mut f = Fields::declared::<Self>(fields);
        self.apply_references(&mut f, ctx, creating);
        crate::offline::sync::client_fields(
            &mut f,
            "basket",
            creating,
            now,
            (&mut self.client_id, &mut self.occurred_at),
        );
        self.name = f.text("name").apply(self.name);
        self.note = f.text("note").apply(self.note);
        match kind {
            None | Some(Value::Null) => {}
            Some(Value::String(t)) => match BasketType::parse(&t) {
                Some(k) if creating || k == self.basket_type => self.basket_type = k,
                Some(_) => f.reject("type", "a basket's type is set when it is created."),
                None => f.reject("type", format!("\"{t}\" is not sale or wastage.")),
            },
            Some(_) => f.reject("type", "must be sale or wastage."),
        }
        match lines {
            None => {}
            Some(Value::Object(entries)) => {
                for p in self.apply_lines(entries, ids, ctx, now) {
                    f.reject("basketProducts", p);
                }
            }
            Some(Value::Null) => self.lines.clear(),
            Some(_) => f.reject(
                "basketProducts",
                "must be an object of lines keyed by client keys.",
            ),
        }
        self.apply_promotions(&mut f, promotions, ctx);
        let mut receipt = (ctx.price)(&self);
        if f.boolean("completed") == Some(true) {
            if self.basket_type == BasketType::Sale {
                let (cash, other) = (ctx.paid)(self.id);
                let (due, rounding) = receipt.due(cash, other, ctx.rounding);
                let paid = cash + other;
                if paid < due && due < 0 {
                    f.reject(
                        "completed",
                        format!(
                            "Refunds of {} exceed the {} this basket gives back.",
                            -paid, -due
                        ),
                    );
                } else if paid < due {
                    f.reject(
                        "completed",
                        format!("Completed transactions cover {paid} of {due}."),
                    );
                }
                receipt.cash_rounding = rounding;
            }
            if let Some(register) = self.register_id {
                match (ctx.till.open_session)(register) {
                    Some(session) => {
                        self.session_id = Some(session);
                        self.receipt_number = Some((ctx.till.last_receipt)(register) + 1);
                    }
                    None if !ctx.till.sessions_required => {
                        self.receipt_number = Some((ctx.till.last_receipt)(register) + 1);
                    }
                    None => f.reject(
                        "completed",
                        format!("register {register} has no open session; open one first."),
                    ),
                }
            }
            self.completed = true;
            self.complete_date = Some(self.occurred_at.unwrap_or(now));
        }
        f.finish()?;
        self.receipt = Some(receipt);
        Ok(self)
    }

    /// The promotions applied by hand: each a promotion the basket may take, once.
    fn apply_promotions(
        &mut self,
        f: &mut Fields,
        promotions: Option<Value>,
        ctx: &BasketContext<'_>,
    ) {
        match promotions {
            None => {}
            Some(Value::Null) => self.promotion_ids.clear(),
            Some(Value::Array(items)) => {
                let mut ids: Vec<i64> = Vec::new();
                for item in items {
                    match item.as_i64() {
                        Some(id) => match (ctx.promotion)(self, id) {
                            Ok(()) if !ids.contains(&id) => ids.push(id),
                            Ok(()) => {}
                            Err(why) => f.reject("promotionIds", why),
                        },
                        None => f.reject("promotionIds", format!("{item} is not a promotion id.")),
                    }
                }
                self.promotion_ids = ids;
            }
            Some(_) => f.reject("promotionIds", "must be an array of promotion ids."),
        }
    }

    /// The store (set at creation, never moved) and the customer a write names.
    fn apply_references(&mut self, f: &mut Fields, ctx: &BasketContext<'_>, creating: bool) {
        f.set_fixed_reference(
            "storeId",
            &mut self.store_id,
            creating,
            ctx.store_exists,
            "a store",
            "a basket cannot move to another store.",
        );
        if creating && self.store_id == 0 {
            f.reject("storeId", "required field is missing.");
        }
        // A basket keeps naming a customer deleted since (a till sends it again).
        let customer = f.reference(
            "customerId",
            self.customer_id,
            ctx.customer_exists,
            "a customer",
        );
        if let Some(patch) = customer {
            self.customer_id = patch.apply(self.customer_id);
        }
        self.apply_till(f, &ctx.till, creating);
    }

    /// The register it is sold at (of its store; set once) and the employee who sells.
    fn apply_till(&mut self, f: &mut Fields, till: &Till<'_>, creating: bool) {
        use crate::fields::Patch;
        match f.integer("registerId") {
            Patch::Set(r) if self.register_id.is_some_and(|at| at != r) => {
                f.reject("registerId", "a basket stays at its register.")
            }
            Patch::Set(r) => match (till.register)(r) {
                Ok(store) if store == self.store_id => self.register_id = Some(r),
                Ok(store) => f.reject(
                    "registerId",
                    format!("register {r} is at store {store}, not the basket's store."),
                ),
                Err(why) => f.reject("registerId", why),
            },
            Patch::Clear if self.register_id.is_some() => {
                f.reject("registerId", "a basket stays at its register.")
            }
            Patch::Clear | Patch::Keep => {}
        }
        match f.reference(
            "employeeId",
            self.employee_id,
            till.employee_exists,
            "an employee",
        ) {
            Some(Patch::Keep) if creating && till.caller != 0 => {
                self.employee_id = Some(till.caller)
            }
            Some(patch) => self.employee_id = patch.apply(self.employee_id),
            None => {}
        }
    }

    fn apply_lines(
        &mut self,
        entries: Map<String, Value>,
        ids: &mut dyn Iterator<Item = i64>,
        ctx: &BasketContext<'_>,
        now: i64,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        let mut lines = Vec::new();
        for (key, entry) in entries {
            let Value::Object(entry) = entry else {
                problems.push(format!("{key}: must be an object."));
                continue;
            };
            let existing = match entry.get("id") {
                Some(Value::Number(n)) => match n
                    .as_i64()
                    .and_then(|id| self.lines.iter().find(|l| l.id == id))
                {
                    Some(line) => Some(line.clone()),
                    None => {
                        problems.push(format!("{key}: id: {n} is not a line of this basket."));
                        continue;
                    }
                },
                Some(v) if !v.is_null() => {
                    problems.push(format!("{key}: id: must be an integer."));
                    continue;
                }
                _ => entry
                    .get("clientId")
                    .and_then(crate::offline::sync::client_key)
                    .and_then(|c| {
                        self.lines
                            .iter()
                            .find(|l| l.client_id.as_deref() == Some(&c))
                    })
                    .cloned(),
            };
            if let Some(line) = &existing {
                if lines.iter().any(|l: &BasketLine| l.id == line.id) {
                    problems.push(format!(
                        "{key}: line {} appears twice in this write.",
                        line.id
                    ));
                    continue;
                }
            }
            match line_from(entry, existing, ids, ctx, self.id, now) {
                Ok(line)
                    if line.client_id.is_some()
                        && lines.iter().any(|l| l.client_id == line.client_id) =>
                {
                    problems.push(format!(
                        "{key}: clientId: another line of this write has clientId {}.",
                        line.client_id.as_deref().unwrap_or_default()
                    ));
                }
                Ok(line) => lines.push(line),
                Err(list) => problems.extend(list.into_iter().map(|p| format!("{key}: {p}"))),
            }
        }
        if problems.is_empty() {
            problems.extend(over_returned(&lines, self.id, ctx));
            self.lines = lines;
        }
        problems
    }
}

use super::line::{line_from, over_returned};
pub use super::line::{new_lines, returned_baskets, BasketLine, ReturnOf, Returnable};
