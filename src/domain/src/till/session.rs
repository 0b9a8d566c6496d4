//! A till's day (issue 23, docs/tills.md): a session opened at a register with a float, the
//! cash paid in and out during it, and its close with the counted cash. The session's running
//! figures are what its X-report shows while it is open; closing freezes them into its
//! Z-report, which never changes again.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::fields::{Fields, Patch, Shape};
use crate::money::MAX_MONEY;
use crate::record::Choice;
use crate::sales::basket::{BasketRecord, BasketType};
use crate::sales::payment::TransactionRecord;
use merchantd_macros::Record;

/// The payment type whose amounts are notes and coins in the drawer.
pub const CASH: &str = "CASH";

#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(
    path = "/register/session",
    table = "register_sessions",
    plural = "sessions",
    noun = "Session",
    event = "session"
)]
pub struct SessionRecord {
    pub id: i64,
    /// A live register of the merchant with no session open.
    #[field(required, create_only, filter = "registerIds")]
    pub register_id: i64,
    /// The register's store.
    #[field(read_only)]
    pub store_id: i64,
    /// Who opened it: the token's employee unless the write names another.
    #[field(create_only)]
    pub employee_id: Option<i64>,
    /// The cash in the drawer at the start, in minor units.
    #[field(required, create_only)]
    pub opening_float: i64,
    /// Written `true` (with `countedCash`) to close it; a closed session never changes (111).
    pub closed: bool,
    /// The cash counted at the close, in minor units: required to close (or given by
    /// `countedDenominations`).
    pub counted_cash: Option<i64>,
    /// The count by denomination: a coin or note's minor units → how many (`{"2000": 2,
    /// "5": 9}`); must add up to `countedCash` when both are sent.
    #[field(kind = "json")]
    pub counted_denominations: Option<Denominations>,
    /// Float + cash sales − cash refunds + paid in − paid out, at the close.
    #[field(read_only)]
    pub expected_cash: Option<i64>,
    /// Counted − expected, at the close.
    #[field(read_only)]
    pub difference: Option<i64>,
    /// The number the register's next sale took when the session opened.
    #[field(read_only)]
    pub first_receipt_number: i64,
    /// The register's last number at the close (below the first when nothing was sold).
    #[field(read_only)]
    pub last_receipt_number: Option<i64>,
    /// Who closed it.
    #[field(read_only)]
    pub closed_by: Option<i64>,
    /// When it closed.
    #[field(read_only)]
    pub close_date: Option<i64>,
    /// The figures at the close: what the Z-report shows.
    #[field(kind = "json", read_only, hidden)]
    pub figures: Option<TillFigures>,
    /// When it opened.
    #[field(read_only)]
    pub active_date: Option<i64>,
    /// Never set: a session is not deleted.
    pub delete_date: Option<i64>,
}

/// Minor units of one coin or note → how many were counted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Denominations(pub BTreeMap<String, i64>);

crate::json_cell!(Denominations, Denominations, "Denominations");

/// How many, and how much, of one kind of thing a session saw. Amounts are minor units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tally {
    pub count: i64,
    pub quantity: i64,
    pub amount: i64,
    pub tax: i64,
}

impl Tally {
    fn add(&mut self, count: i64, quantity: i64, amount: i64, tax: i64) {
        self.count += count;
        self.quantity += quantity;
        self.amount += amount;
        self.tax += tax;
    }
}

/// A session's running figures: the body of its X- and Z-reports.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TillFigures {
    /// Completed baskets whose total is not negative: count, units, total, tax.
    pub sales: Tally,
    /// Completed baskets that give back more than they sell (a linked return).
    pub returns: Tally,
    /// Σ promotion discounts.
    pub discounts: i64,
    /// Σ cash rounding recorded at completion.
    pub cash_rounding: i64,
    /// Payment type → payments taken in the session (not refunds).
    pub payments: BTreeMap<String, Tally>,
    /// Payment type → refunds given in the session.
    pub refunds: BTreeMap<String, Tally>,
    /// Tax code → baskets, taxable amount (`amount`) and tax.
    pub taxes: BTreeMap<String, Tally>,
    /// Employee id ("0": none named) → baskets and their total.
    pub employees: BTreeMap<String, Tally>,
    /// Category id ("0": none) → units and net amount of the lines of its products (a
    /// product in two categories counts in both).
    pub categories: BTreeMap<String, Tally>,
    pub paid_in: Tally,
    pub paid_out: Tally,
}

crate::json_cell!(TillFigures, TillFigures, "TillFigures");

impl TillFigures {
    /// Adds a completed sale basket (wastage is no sale); `categories` gives a product's.
    pub fn add_sale(&mut self, basket: &BasketRecord, categories: &dyn Fn(i64) -> Vec<i64>) {
        let Some(receipt) = basket
            .receipt
            .as_ref()
            .filter(|_| basket.basket_type == BasketType::Sale)
        else {
            return;
        };
        let units: i64 = basket.lines.iter().map(|l| l.quantity.abs()).sum();
        let kind = if receipt.total < 0 {
            &mut self.returns
        } else {
            &mut self.sales
        };
        kind.add(1, units, receipt.total, receipt.tax);
        self.discounts += receipt.discount;
        self.cash_rounding += receipt.cash_rounding;
        for tax in &receipt.taxes {
            let t = self.taxes.entry(tax.code.clone()).or_default();
            t.add(1, 0, tax.taxable, tax.tax);
        }
        let employee = basket.employee_id.unwrap_or(0).to_string();
        let e = self.employees.entry(employee).or_default();
        e.add(1, units, receipt.total, receipt.tax);
        for (line, amounts) in basket.lines.iter().zip(&receipt.lines) {
            let mut ids = categories(line.product_id);
            if ids.is_empty() {
                ids.push(0);
            }
            for id in ids {
                let c = self.categories.entry(id.to_string()).or_default();
                c.add(0, line.quantity, amounts.net, amounts.tax);
            }
        }
    }

    /// Adds (`sign` 1) or takes back (-1) a completed payment or refund taken in the session:
    /// the drawer holds what the session took, whichever session completes the basket.
    pub fn add_payment(&mut self, t: &TransactionRecord, sign: i64) {
        let book = if t.refund_of.is_some() {
            &mut self.refunds
        } else {
            &mut self.payments
        };
        let tally = book.entry(t.payment_type.clone()).or_default();
        tally.add(sign, 0, sign * t.amount, 0);
        if *tally == Tally::default() {
            book.remove(&t.payment_type);
        }
    }

    /// Adds cash paid in or out of the drawer.
    pub fn add_movement(&mut self, movement: &CashMovementRecord) {
        let book = match movement.movement_type {
            MovementType::PaidIn => &mut self.paid_in,
            MovementType::PaidOut => &mut self.paid_out,
        };
        book.add(1, 0, movement.amount, 0);
    }

    /// Cash sales less cash refunds plus paid in less paid out: what the day moved in the
    /// drawer beside the float.
    pub fn cash_moved(&self) -> i64 {
        let cash = |book: &BTreeMap<String, Tally>| book.get(CASH).map_or(0, |t| t.amount);
        cash(&self.payments) - cash(&self.refunds) + self.paid_in.amount - self.paid_out.amount
    }
}

/// The fields session writes accept (see [`Shape`]).
pub const SHAPE: Shape = Shape::of::<SessionRecord>();

/// What session rules need from the rest of the merchant.
pub struct SessionContext<'a> {
    /// A live register's store, or why the id is not one.
    pub register: &'a dyn Fn(i64) -> Result<i64, String>,
    /// The session open at a register, if any.
    pub open_at: &'a dyn Fn(i64) -> Option<i64>,
    /// A live employee of this merchant?
    pub employee_exists: &'a dyn Fn(i64) -> bool,
    /// The register's last receipt number so far.
    pub last_receipt: &'a dyn Fn(i64) -> i64,
    /// The session's running figures.
    pub figures: &'a dyn Fn(i64) -> TillFigures,
    /// The employee the writing token acts as (0: none).
    pub caller: i64,
}

impl SessionRecord {
    crate::blank!(|id, now|);

    /// Opens a session (creating) or closes it. A session takes no other change: its float
    /// and register are what it opened with.
    pub fn apply(
        mut self,
        mut fields: Map<String, Value>,
        ctx: &SessionContext<'_>,
        now: i64,
        creating: bool,
    ) -> Result<Self, Vec<String>> {
        let float = fields.get("openingFloat").cloned();
        let counted = fields.get("countedCash").cloned();
        let denominations = fields.shift_remove("countedDenominations");
        let mut f = Fields::declared::<Self>(fields);
        if creating {
            self.open(&mut f, ctx, float.as_ref());
        } else {
            for key in ["registerId", "openingFloat", "employeeId"] {
                if f.has(key) {
                    f.reject(key, "is set when the session opens.");
                }
            }
        }
        let closing = f.boolean("closed") == Some(true);
        let mut counted = minor_units(&mut f, "countedCash", counted.as_ref());
        if let Some(d) = denominations.filter(|d| !d.is_null()) {
            match read_denominations(d) {
                Ok((d, sum)) => {
                    if counted.is_some_and(|c| c != sum) {
                        f.reject(
                            "countedDenominations",
                            format!("add up to {sum}, not the countedCash sent."),
                        );
                    }
                    counted = Some(sum);
                    self.counted_denominations = Some(d);
                }
                Err(why) => f.reject("countedDenominations", why),
            }
        }
        if !closing && (counted.is_some() || self.counted_denominations.is_some()) {
            f.reject(
                "countedCash",
                "is counted when the session closes (closed: true).",
            );
        }
        if closing {
            match counted {
                Some(c) => self.close(ctx, c, now),
                None => f.reject("countedCash", "required to close the session."),
            }
        }
        f.finish()?;
        Ok(self)
    }

    fn open(&mut self, f: &mut Fields, ctx: &SessionContext<'_>, float: Option<&Value>) {
        match f.integer("registerId") {
            Patch::Set(register) => match (ctx.register)(register) {
                Ok(_) if (ctx.open_at)(register).is_some() => f.reject(
                    "registerId",
                    format!(
                        "register {register} already has session {} open; close it first.",
                        (ctx.open_at)(register).unwrap_or_default()
                    ),
                ),
                Ok(store) => {
                    self.register_id = register;
                    self.store_id = store;
                    self.first_receipt_number = (ctx.last_receipt)(register) + 1;
                }
                Err(why) => f.reject("registerId", why),
            },
            _ => f.reject("registerId", "required field is missing."),
        }
        match f.reference("employeeId", None, ctx.employee_exists, "an employee") {
            Some(Patch::Set(e)) => self.employee_id = Some(e),
            Some(_) => self.employee_id = (ctx.caller != 0).then_some(ctx.caller),
            None => {}
        }
        match minor_units(f, "openingFloat", float) {
            Some(amount) => self.opening_float = amount,
            None if float.is_none() => f.reject("openingFloat", "required field is missing."),
            None => {}
        }
    }

    fn close(&mut self, ctx: &SessionContext<'_>, counted: i64, now: i64) {
        let figures = (ctx.figures)(self.id);
        let expected = self.opening_float + figures.cash_moved();
        self.closed = true;
        self.counted_cash = Some(counted);
        self.expected_cash = Some(expected);
        self.difference = Some(counted - expected);
        self.last_receipt_number = Some((ctx.last_receipt)(self.register_id));
        self.closed_by = (ctx.caller != 0).then_some(ctx.caller);
        self.close_date = Some(now);
        self.figures = Some(figures);
    }
}

/// `1000: 3` → (the count, Σ denomination × count), or why it cannot be read.
fn read_denominations(value: Value) -> Result<(Denominations, i64), String> {
    const SHAPE: &str =
        "must be an object of a coin or note's minor units → how many (\"1000\": 3).";
    let Value::Object(entries) = value else {
        return Err(SHAPE.into());
    };
    if entries.len() > 50 {
        return Err("at most 50 denominations.".into());
    }
    let mut out = BTreeMap::new();
    let mut sum: i64 = 0;
    for (key, count) in entries {
        let unit = key
            .parse::<i64>()
            .ok()
            .filter(|u| (1..=MAX_MONEY).contains(u));
        let count = count.as_i64().filter(|c| (0..=1_000_000).contains(c));
        let (Some(unit), Some(count)) = (unit, count) else {
            return Err(SHAPE.into());
        };
        if out.contains_key(&unit.to_string()) {
            return Err(format!("{unit} is named twice."));
        }
        sum = unit
            .checked_mul(count)
            .and_then(|v| sum.checked_add(v))
            .filter(|s| *s <= MAX_MONEY)
            .ok_or("add up to more than any amount can be.")?;
        out.insert(unit.to_string(), count);
    }
    Ok((Denominations(out), sum))
}

/// A whole, non-negative number of minor units, if sent.
fn minor_units(f: &mut Fields, key: &str, value: Option<&Value>) -> Option<i64> {
    crate::sales::payment::minor_units(f, key, value)
}

crate::choice! {
    pub enum MovementType {
        PaidIn = "paidIn",
        PaidOut = "paidOut",
    }
}

/// Cash put into or taken out of a drawer during an open session, with why. It never changes.
#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(
    path = "/register/cash",
    table = "cash_movements",
    plural = "cashMovements",
    noun = "Cash movement",
    event = "cash_movement"
)]
pub struct CashMovementRecord {
    pub id: i64,
    #[field(required, filter = "sessionIds")]
    pub session_id: i64,
    #[field(name = "type", kind = "choice", required)]
    pub movement_type: MovementType,
    /// Minor units, more than 0.
    #[field(required)]
    pub amount: i64,
    #[field(max_len = 500, required)]
    pub reason: String,
    #[field(read_only)]
    pub employee_id: Option<i64>,
    #[field(read_only)]
    pub active_date: Option<i64>,
    pub delete_date: Option<i64>,
}

/// The fields cash movement writes accept (see [`Shape`]).
pub const MOVEMENT_SHAPE: Shape = Shape::of::<CashMovementRecord>();

impl CashMovementRecord {
    crate::blank!(|id, now|);

    /// A new movement; `session_open` says whether an id is an open session of this merchant.
    pub fn apply(
        mut self,
        mut fields: Map<String, Value>,
        session_open: &dyn Fn(i64) -> Result<(), String>,
        caller: i64,
    ) -> Result<Self, Vec<String>> {
        let kind = fields.shift_remove("type");
        let amount = fields.get("amount").cloned();
        let mut f = Fields::declared::<Self>(fields);
        match f.integer("sessionId") {
            Patch::Set(s) => match session_open(s) {
                Ok(()) => self.session_id = s,
                Err(why) => f.reject("sessionId", why),
            },
            _ => f.reject("sessionId", "required field is missing."),
        }
        match kind
            .as_ref()
            .and_then(Value::as_str)
            .map(MovementType::parse)
        {
            Some(Some(k)) => self.movement_type = k,
            _ if kind.is_none() => f.reject("type", "required field is missing."),
            _ => f.reject("type", "must be paidIn or paidOut."),
        }
        match minor_units(&mut f, "amount", amount.as_ref()) {
            Some(a) if a > 0 => self.amount = a,
            Some(_) => f.reject("amount", "must be more than 0."),
            None if amount.is_none() => f.reject("amount", "required field is missing."),
            None => {}
        }
        let reason = f.text("reason").apply(None);
        f.require("reason", &reason);
        f.finish()?;
        self.reason = reason.unwrap_or_default();
        self.employee_id = (caller != 0).then_some(caller);
        Ok(self)
    }
}
