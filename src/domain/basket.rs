//! A sale or wastage at one store, and its lines (api-reference.md, Basket).

use rust_decimal::Decimal;
use serde_json::{Map, Value};

use super::fields::{next_id, Fields, Shape};
use super::money;
use super::pricing::{Priced, Receipt, Rounding};
use super::record::Choice;
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
    /// The basket priced by the sale engine: lines, discounts, tax per rate, totals and the
    /// cash total; computed at each write while open, frozen by completion.
    #[field(kind = "json", read_only)]
    pub receipt: Option<Priced>,
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
    /// The instance a line sells: `Err` explains (unknown product, several instances...).
    pub instance: &'a dyn Fn(i64, Option<i64>) -> Result<InstancePrice, String>,
    /// Σ amount of the completed transactions of a basket, in minor units: (cash, other).
    pub paid: &'a dyn Fn(i64) -> (i64, i64),
    /// Why a promotion cannot be applied to this basket by hand, if it cannot.
    pub promotion: &'a dyn Fn(&BasketRecord, i64) -> Result<(), String>,
    /// The basket priced (the sale engine with the merchant's catalogue and promotions).
    pub price: &'a dyn Fn(&BasketRecord) -> Receipt,
    pub rounding: Rounding,
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
        if let Some(priced) = &self.receipt {
            return Decimal::from(priced.receipt.tax);
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
        fields: Map<String, Value>,
        ids: &mut dyn Iterator<Item = i64>,
        ctx: &BasketContext<'_>,
        now: i64,
        creating: bool,
    ) -> Result<Self, Vec<String>> {
        let lines = fields.get("basketProducts").cloned();
        let kind = fields.get("type").cloned();
        let promotions = fields.get("promotionIds").cloned();
        let mut f = Fields::declared::<Self>(fields);
        match f.integer("storeId") {
            super::fields::Patch::Set(store) if !creating && store != self.store_id => {
                f.reject("storeId", "a basket cannot move to another store.")
            }
            super::fields::Patch::Set(store) if (ctx.store_exists)(store) => self.store_id = store,
            super::fields::Patch::Set(store) => f.reject(
                "storeId",
                format!("{store} is not a store of this merchant."),
            ),
            super::fields::Patch::Clear if creating => {}
            super::fields::Patch::Clear => f.reject("storeId", "cannot be cleared."),
            super::fields::Patch::Keep => {}
        }
        if creating && self.store_id == 0 {
            f.reject("storeId", "required field is missing.");
        }
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
        match promotions {
            None => {}
            Some(Value::Null) => self.promotion_ids.clear(),
            Some(Value::Array(items)) => {
                let mut ids: Vec<i64> = Vec::new();
                for item in items {
                    match item.as_i64() {
                        Some(id) => match (ctx.promotion)(&self, id) {
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
        let mut receipt = (ctx.price)(&self);
        if f.boolean("completed") == Some(true) {
            if self.basket_type == BasketType::Sale {
                let (cash, other) = (ctx.paid)(self.id);
                let (due, rounding) = receipt.due(cash, other, ctx.rounding);
                if cash + other < due {
                    f.reject(
                        "completed",
                        format!("Completed transactions cover {} of {due}.", cash + other),
                    );
                }
                receipt.cash_rounding = rounding;
            }
            self.completed = true;
            self.complete_date = Some(now);
        }
        f.finish()?;
        self.receipt = Some(Priced::new(receipt));
        Ok(self)
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
                _ => None,
            };
            match line_from(entry, existing, ids, ctx, self.id, now) {
                Ok(line) => lines.push(line),
                Err(list) => problems.extend(list.into_iter().map(|p| format!("{key}: {p}"))),
            }
        }
        if problems.is_empty() {
            self.lines = lines;
        }
        problems
    }
}

fn line_from(
    entry: Map<String, Value>,
    existing: Option<BasketLine>,
    ids: &mut dyn Iterator<Item = i64>,
    ctx: &BasketContext<'_>,
    basket_id: i64,
    now: i64,
) -> Result<BasketLine, Vec<String>> {
    let price = entry.get("price").cloned();
    let quantity = entry.get("quantity").cloned();
    let mut f = Fields::declared::<BasketLine>(entry);
    let product = match f.integer("productId") {
        super::fields::Patch::Set(p) => Some(p),
        _ => existing.as_ref().map(|l| l.product_id),
    };
    let wanted_instance = match f.integer("productInstanceId") {
        super::fields::Patch::Set(i) => Some(i),
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
    f.require("productId", &product);
    f.require("quantity", &quantity);
    let instance = product.and_then(|p| match (ctx.instance)(p, wanted_instance) {
        Ok(i) => Some(i),
        Err(why) => {
            f.reject("productInstanceId", why);
            None
        }
    });
    f.finish()?;
    let (Some(instance), Some(quantity)) = (instance, quantity) else {
        return Err(vec!["the line is incomplete.".into()]);
    };
    let same_instance = existing
        .as_ref()
        .is_some_and(|l| l.product_instance_id == instance.instance_id);
    let id = match &existing {
        Some(l) => l.id,
        None => next_id(ids)?,
    };
    Ok(BasketLine {
        id,
        basket_id,
        product_id: instance.product_id,
        product_instance_id: instance.instance_id,
        quantity,
        price: charged.unwrap_or(match &existing {
            Some(l) if same_instance => l.price,
            _ => instance.price,
        }),
        original_price: instance.price,
        tax_percentage: instance.tax_percentage,
        note,
        added_date: existing.map_or(now, |l| l.added_date),
    })
}

/// A line's quantity: a non-zero integer, negative for a refund; `current` when left out.
fn line_quantity(f: &mut Fields, raw: Option<Value>, current: Option<i64>) -> Option<i64> {
    let quantity = match raw {
        None | Some(Value::Null) => return current,
        Some(v) => v
            .as_i64()
            .filter(|q| *q != 0 && q.abs() <= money::MAX_QUANTITY),
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
