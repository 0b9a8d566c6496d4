//! A sale or wastage at one store, and its lines (api-reference.md, Basket).

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::fields::{next_id, Fields, Shape};
use crate::money;
use crate::offline::sync::SyncWarnings;
use crate::record::Choice;
use crate::sales::pricing::{Receipt, Rounding};
use merchantd_macros::Record;

#[derive(Clone, Debug, PartialEq, Record)]
#[record(table = "basket_lines", schema = "BasketLine", noun = "Basket line")]
pub struct BasketLine {
    #[field(writable)]
    pub id: i64,
    #[field(parent, hidden)]
    pub basket_id: i64,
    #[field(required)]
    pub product_id: i64,
    pub product_instance_id: i64,
    #[field(required)]
    pub quantity: i64,
    /// What the line sells at; the instance's price unless the write said otherwise.
    #[field(kind = "money", normalized)]
    pub price: Decimal,
    #[field(kind = "money", normalized, read_only)]
    pub original_price: Decimal,
    #[field(kind = "rate", read_only)]
    pub tax_percentage: Decimal,
    pub note: Option<String>,
    #[field(read_only)]
    pub added_date: i64,
    /// The sale line this line gives back (a linked return).
    #[field(kind = "json")]
    pub return_of: Option<ReturnOf>,
    /// Whether returned units go back to stock (the default) or are written off.
    pub restock: bool,
    /// The till's UUID for the line: a write naming it again without the line's id changes
    /// that line instead of adding another (a retried write adds nothing twice).
    pub client_id: Option<String>,
}

/// The sale line a return line gives back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReturnOf {
    pub basket_id: i64,
    pub line_id: i64,
}

crate::json_cell!(ReturnOf, ReturnOf, "ReturnOf");

/// What a return needs of the sale line it names.
pub struct Returnable {
    /// The sale line's product and instance, its original price and rate.
    pub instance: InstancePrice,
    /// The price it sold at.
    pub price: Decimal,
    /// Units not yet given back by another basket.
    pub left: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BasketType {
    #[default]
    Sale,
    Wastage,
}

impl Choice for BasketType {
    const VALUES: &'static [&'static str] = &["sale", "wastage"];

    fn as_str(self) -> &'static str {
        match self {
            BasketType::Sale => "sale",
            BasketType::Wastage => "wastage",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "sale" => Some(BasketType::Sale),
            "wastage" => Some(BasketType::Wastage),
            _ => None,
        }
    }
}

crate::choice_cell!(BasketType);

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
    pub name: Option<String>,
    pub note: Option<String>,
    #[field(name = "type", kind = "choice")]
    pub basket_type: BasketType,
    #[field(name = "basketProducts", children, stored)]
    pub lines: Vec<BasketLine>,
    #[field(filter = "completed")]
    pub completed: bool,
    #[field(read_only)]
    pub complete_date: Option<i64>,
    #[field(read_only)]
    pub active_date: Option<i64>,
    #[field(read_only)]
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
        self.name = f.text("name", 200).apply(self.name);
        self.note = f.text("note", 2000).apply(self.note);
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
        use crate::fields::Patch;
        match f.integer("storeId") {
            Patch::Set(store) if !creating && store != self.store_id => {
                f.reject("storeId", "a basket cannot move to another store.")
            }
            Patch::Set(store) if (ctx.store_exists)(store) => self.store_id = store,
            Patch::Set(store) => f.reject(
                "storeId",
                format!("{store} is not a store of this merchant."),
            ),
            Patch::Clear if creating => {}
            Patch::Clear => f.reject("storeId", "cannot be cleared."),
            Patch::Keep => {}
        }
        if creating && self.store_id == 0 {
            f.reject("storeId", "required field is missing.");
        }
        match f.integer("customerId") {
            // A basket keeps naming a customer deleted since (a till sends it again).
            Patch::Set(id) if self.customer_id == Some(id) || (ctx.customer_exists)(id) => {
                self.customer_id = Some(id)
            }
            Patch::Set(id) => f.reject(
                "customerId",
                format!("{id} is not a customer of this merchant."),
            ),
            Patch::Clear => self.customer_id = None,
            Patch::Keep => {}
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
        match f.integer("employeeId") {
            Patch::Set(e) if self.employee_id == Some(e) || (till.employee_exists)(e) => {
                self.employee_id = Some(e)
            }
            Patch::Set(e) => f.reject(
                "employeeId",
                format!("{e} is not an employee of this merchant."),
            ),
            Patch::Clear => self.employee_id = None,
            Patch::Keep if creating && till.caller != 0 => self.employee_id = Some(till.caller),
            Patch::Keep => {}
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

fn line_from(
    mut entry: Map<String, Value>,
    existing: Option<BasketLine>,
    ids: &mut dyn Iterator<Item = i64>,
    ctx: &BasketContext<'_>,
    basket_id: i64,
    now: i64,
) -> Result<BasketLine, Vec<String>> {
    let price = entry.shift_remove("price");
    let quantity = entry.shift_remove("quantity");
    let returned = entry.shift_remove("returnOf");
    let mut f = Fields::declared::<BasketLine>(entry);
    let product = match f.integer("productId") {
        crate::fields::Patch::Set(p) => Some(p),
        _ => existing.as_ref().map(|l| l.product_id),
    };
    let wanted_instance = match f.integer("productInstanceId") {
        crate::fields::Patch::Set(i) => Some(i),
        _ => existing
            .as_ref()
            .filter(|l| Some(l.product_id) == product)
            .map(|l| l.product_instance_id),
    };
    let quantity = line_quantity(&mut f, quantity, existing.as_ref().map(|l| l.quantity));
    let charged = match price {
        None | Some(Value::Null) => None,
        Some(v) => money::money(&v).map_err(|e| f.reject("price", e)).ok(),
    };
    let note = f
        .text("note", 2000)
        .apply(existing.as_ref().and_then(|l| l.note.clone()));
    let restock = f
        .boolean("restock")
        .unwrap_or(existing.as_ref().is_none_or(|l| l.restock));
    let mut client_id = existing.as_ref().and_then(|l| l.client_id.clone());
    let mut unused = None;
    crate::offline::sync::client_fields(
        &mut f,
        "line",
        existing.is_none(),
        i64::MAX,
        (&mut client_id, &mut unused),
    );
    let return_of = match returned {
        None => existing.as_ref().and_then(|l| l.return_of),
        Some(Value::Null) => None,
        Some(v) => serde_json::from_value::<ReturnOf>(v)
            .map_err(|_| {
                f.reject(
                    "returnOf",
                    "must be {\"basketId\": <sale basket>, \"lineId\": <its line>}.",
                )
            })
            .ok(),
    };
    f.require("quantity", &quantity);
    let sold = match return_of {
        Some(r) => returned_line(&mut f, ctx, basket_id, r, product, quantity),
        None => {
            f.require("productId", &product);
            product.and_then(|p| match (ctx.instance)(p, wanted_instance) {
                Ok(i) => Some((i, None)),
                Err(why) => {
                    f.reject("productInstanceId", why);
                    None
                }
            })
        }
    };
    f.finish()?;
    let (Some((instance, sale_price)), Some(quantity)) = (sold, quantity) else {
        return Err(vec!["the line is incomplete.".into()]);
    };
    let same_instance = existing
        .as_ref()
        .is_some_and(|l| l.product_instance_id == instance.instance_id);
    let id = match &existing {
        Some(l) => l.id,
        None => next_id(ids)?,
    };
    let price = sale_price.or(charged).unwrap_or(match &existing {
        Some(l) if same_instance => l.price,
        _ => instance.price,
    });
    Ok(BasketLine {
        id,
        basket_id,
        product_id: instance.product_id,
        product_instance_id: instance.instance_id,
        quantity,
        price,
        original_price: instance.price,
        tax_percentage: instance.tax_percentage,
        note,
        added_date: existing.map_or(now, |l| l.added_date),
        return_of,
        restock,
        client_id,
    })
}

/// A return line's product, instance and price, from the sale line it names; its quantity
/// gives back at most what is left of that line.
fn returned_line(
    f: &mut Fields,
    ctx: &BasketContext<'_>,
    basket_id: i64,
    r: ReturnOf,
    product: Option<i64>,
    quantity: Option<i64>,
) -> Option<(InstancePrice, Option<Decimal>)> {
    let sale = match (ctx.returnable)(basket_id, &r) {
        Ok(sale) => sale,
        Err(why) => {
            f.reject("returnOf", why);
            return None;
        }
    };
    if product.is_some_and(|p| p != sale.instance.product_id) {
        f.reject(
            "productId",
            format!(
                "a return line gives back product {} of line {}.",
                sale.instance.product_id, r.line_id
            ),
        );
    }
    match quantity {
        Some(q) if q > 0 => f.reject(
            "quantity",
            "a return line's quantity is negative: the units given back.",
        ),
        Some(q) if -q > sale.left => f.reject(
            "quantity",
            format!(
                "only {} unit(s) of line {} can still be returned.",
                sale.left, r.line_id
            ),
        ),
        _ => {}
    }
    Some((sale.instance, Some(sale.price)))
}

/// A line's quantity: a non-zero integer, negative for a refund; `current` when left out.
fn line_quantity(f: &mut Fields, raw: Option<Value>, current: Option<i64>) -> Option<i64> {
    let quantity = match raw {
        None | Some(Value::Null) => return current,
        Some(v) => v
            .as_i64()
            // `unsigned_abs`: `i64::MIN.abs()` overflows.
            .filter(|q| *q != 0 && q.unsigned_abs() <= money::MAX_QUANTITY as u64),
    };
    if quantity.is_none() {
        f.reject(
            "quantity",
            "must be a non-zero integer (negative for a refund).",
        );
    }
    quantity
}

/// New lines a write adds (each takes an identifier).
pub fn new_lines(fields: &Map<String, Value>) -> usize {
    match fields.get("basketProducts") {
        Some(Value::Object(entries)) => entries
            .values()
            .filter(|e| e.get("id").is_none_or(Value::is_null))
            .count(),
        _ => 0,
    }
}

/// The sale baskets a write's return lines name.
pub fn returned_baskets(fields: &Map<String, Value>) -> Vec<i64> {
    let Some(Value::Object(entries)) = fields.get("basketProducts") else {
        return Vec::new();
    };
    let mut baskets: Vec<i64> = entries
        .values()
        .filter_map(|e| e.get("returnOf")?.get("basketId")?.as_i64())
        .collect();
    baskets.sort_unstable();
    baskets.dedup();
    baskets
}

/// Lines of one write that together give back more of a sale line than is left of it.
fn over_returned(lines: &[BasketLine], basket_id: i64, ctx: &BasketContext<'_>) -> Vec<String> {
    let mut units: Vec<(ReturnOf, i64)> = Vec::new();
    for line in lines {
        if let Some(r) = line.return_of {
            match units.iter_mut().find(|(o, _)| o.line_id == r.line_id) {
                Some((_, n)) => *n -= line.quantity,
                None => units.push((r, -line.quantity)),
            }
        }
    }
    units
        .into_iter()
        .filter_map(|(r, n)| {
            let left = (ctx.returnable)(basket_id, &r).ok()?.left;
            (n > left).then(|| {
                format!(
                    "returnOf: together the lines give back {n} unit(s) of line {}; only {left} can still be returned.",
                    r.line_id
                )
            })
        })
        .collect()
}
