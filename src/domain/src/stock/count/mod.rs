//! A stock count at one store (api-reference.md, Stock reconciliation; examples §2.14).
//!
//! Rules the documents leave open, as decided here:
//! - `products` is keyed by product id in writes and reads. A write merges into the stored
//!   counts: an entry sent replaces that product's fields it names (a new product needs
//!   `productId` and `quantity`), `null` removes a product, and products left out stay, so a
//!   count may be taken aisle by aisle. `products: null` clears them all.
//! - A count stays at its store, and one without products cannot be completed.
//! - Completing compares each counted product with its `stockLeft` at that moment (`expected`)
//!   and keeps `counted` and `discrepancy` (= counted − expected). A shortfall becomes one
//!   completed `wastage` basket at the store, a line per short product at the product's first
//!   live price instance (its only one, usually); a product without a live instance is booked
//!   at price 0 with instance 0. A surplus becomes one *surplus entry* per product: a stored
//!   row of stock received at the store by the count, with a global id, listed in
//!   `surplusEntryIds`. Stock moves once, by the count: the wastage basket makes no move of
//!   its own.
//! - Two counts of one request may not both complete the same product at the same store (the
//!   second would compare with stock the first has not moved yet); the second is refused.

use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::fields::{next_id, Fields, Patch, Shape};
use crate::money;
use crate::sales::basket::{BasketLine, BasketRecord, BasketType, InstancePrice};
use crate::sales::pricing::Receipt;
use merchantd_macros::Record;

/// One counted product, keyed by its product in the count's `products`.
#[derive(Clone, Debug, PartialEq, Record)]
#[record(
    table = "stock_reconciliation_lines",
    schema = "CountLine",
    noun = "Counted product",
    key = "product_id",
    computed(
        name = "counted",
        kind = "integer",
        get = "units_counted",
        after = "expected"
    ),
    computed(
        name = "discrepancy",
        kind = "integer",
        get = "discrepancy",
        after = "expected",
        nullable
    )
)]
pub struct CountLine {
    #[field(parent, hidden)]
    pub reconciliation_id: i64,
    #[field(required)]
    pub product_id: i64,
    /// Units counted (the written `quantity`).
    #[field(name = "quantity", required)]
    pub counted: i64,
    #[field(kind = "money")]
    pub cost_price: Option<Decimal>,
    #[field(kind = "rate")]
    pub vat_percentage: Option<Decimal>,
    #[field(max_len = 2000)]
    pub note: Option<String>,
    /// `stockLeft` when the count was completed; `None` while open.
    #[field(read_only)]
    pub expected: Option<i64>,
}

impl CountLine {
    /// The units counted, as reads show them beside `expected`.
    pub fn units_counted(&self) -> i64 {
        self.counted
    }

    /// counted − expected, once completed.
    pub fn discrepancy(&self) -> Option<i64> {
        self.expected.map(|e| self.counted - e)
    }
}

/// Stock a count found over what was expected, received at its store.
#[derive(Clone, Debug, PartialEq, Record)]
#[record(
    table = "stock_surplus_entries",
    schema = "SurplusEntry",
    noun = "Surplus entry"
)]
pub struct SurplusEntry {
    pub id: i64,
    #[field(parent)]
    pub reconciliation_id: i64,
    pub store_id: i64,
    pub product_id: i64,
    pub quantity: i64,
    pub entry_date: i64,
}

#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(
    path = "/stock/reconcile",
    history,
    table = "stock_reconciliations",
    noun = "Count",
    event = "stock_count",
    ids("stockReconciliationIds", "stockReconciliationId"),
    computed(
        name = "surplusEntryIds",
        kind = "ids",
        get = "surplus_entry_ids",
        after = "wastageBasketId"
    )
)]
pub struct StockReconciliation {
    pub id: i64,
    #[field(required, filter = "storeIds")]
    pub store_id: i64,
    #[field(max_len = 2000)]
    pub note: Option<String>,
    pub completed: bool,
    pub complete_date: Option<i64>,
    /// Ordered by product id.
    #[field(name = "products", children)]
    pub lines: Vec<CountLine>,
    #[field(read_only)]
    pub wastage_basket_id: Option<i64>,
    #[field(skip)]
    pub surplus_entries: Vec<SurplusEntry>,
    #[field(read_only)]
    pub active_date: Option<i64>,
    pub delete_date: Option<i64>,
    /// The wastage basket booked by the write that completed the count, stored with it in the
    /// same transaction. Records read back from the database hold only its id.
    #[field(skip)]
    pub booked_basket: Option<Box<BasketRecord>>,
}

/// What count rules need from the rest of the merchant.
pub struct CountContext<'a> {
    /// A live store of this merchant?
    pub store_exists: &'a dyn Fn(i64) -> bool,
    /// A live product of this merchant?
    pub product_exists: &'a dyn Fn(i64) -> bool,
    /// `stockLeft` of a product at a store now.
    pub stock_left: &'a dyn Fn(i64, i64) -> i64,
    /// The price instance a wastage line books a product at (see the module comment).
    pub wastage_price: &'a dyn Fn(i64) -> InstancePrice,
    /// Another count of this request that completed this product at this store.
    pub completed_in_request: &'a dyn Fn(i64, i64) -> Option<i64>,
    /// A basket priced by the sale engine (the wastage basket carries its receipt, as every
    /// basket does).
    pub price: &'a dyn Fn(&BasketRecord) -> Receipt,
}

/// The fields writes accept (see [`Shape`]); `products` holds the counted products.
pub const SHAPE: Shape =
    Shape::nested::<StockReconciliation>(&[("products", Shape::of::<CountLine>())]);

fn units(n: i64) -> String {
    if n == 1 {
        "1 unit".into()
    } else {
        format!("{n} units")
    }
}

impl StockReconciliation {
    /// The ids of the surplus entries its completion booked.
    pub fn surplus_entry_ids(&self) -> Vec<i64> {
        self.surplus_entries.iter().map(|e| e.id).collect()
    }

    crate::blank!(|id, now|);

    /// Units counted under what was expected, per product.
    pub fn shortfalls(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.lines.iter().filter_map(|l| {
            l.discrepancy()
                .filter(|d| *d < 0)
                .map(|d| (l.product_id, -d))
        })
    }

    /// Units counted over what was expected, per product.
    pub fn surpluses(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.lines.iter().filter_map(|l| {
            l.discrepancy()
                .filter(|d| *d > 0)
                .map(|d| (l.product_id, d))
        })
    }

    /// What completing this count booked, for the success message (examples §2.14).
    pub fn outcome(&self) -> String {
        let short: i64 = self.shortfalls().map(|(_, n)| n).sum();
        let over: i64 = self.surpluses().map(|(_, n)| n).sum();
        let mut parts = Vec::new();
        if let (true, Some(basket)) = (short > 0, self.wastage_basket_id) {
            parts.push(format!(
                "{} short, booked as wastage basket {basket}",
                units(short)
            ));
        }
        if over > 0 {
            parts.push(format!("{} over, booked as received stock", units(over)));
        }
        if parts.is_empty() {
            parts.push("every product as expected".into());
        }
        format!("Count {}: {}.", self.id, parts.join("; "))
    }

    /// Applies written fields to an open count; `completed: true` books the differences.
    pub fn apply(
        mut self,
        fields: Map<String, Value>,
        ids: &mut dyn Iterator<Item = i64>,
        ctx: &CountContext<'_>,
        now: i64,
        creating: bool,
    ) -> Result<Self, Vec<String>> {
        let products = fields.get("products").cloned();
        let mut f = Fields::declared::<Self>(fields);
        f.set_fixed_reference(
            "storeId",
            &mut self.store_id,
            creating,
            ctx.store_exists,
            "a store",
            "a count cannot move to another store.",
        );
        if creating && self.store_id == 0 {
            f.require("storeId", &None::<i64>);
        }
        self.note = f.text("note").apply(self.note);
        match products {
            None => {}
            Some(Value::Object(entries)) => {
                for p in self.apply_products(entries, ctx) {
                    f.reject("products", p);
                }
            }
            Some(Value::Null) => self.lines.clear(),
            Some(_) => f.reject(
                "products",
                "must be an object of counts keyed by product id.",
            ),
        }
        if f.boolean("completed") == Some(true) && f.problems.is_empty() {
            if let Err(why) = self.complete(ids, ctx, now) {
                f.reject("completed", why);
            }
        }
        f.finish()?;
        Ok(self)
    }

    fn apply_products(
        &mut self,
        entries: Map<String, Value>,
        ctx: &CountContext<'_>,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        let mut lines: std::collections::BTreeMap<i64, CountLine> = self
            .lines
            .iter()
            .map(|l| (l.product_id, l.clone()))
            .collect();
        for (key, entry) in entries {
            let product = key
                .parse::<i64>()
                .ok()
                .filter(|id| *id >= 0 && key.bytes().all(|b| b.is_ascii_digit()));
            let Some(product) = product else {
                problems.push(format!("{key}: the key must be the product id."));
                continue;
            };
            match entry {
                Value::Null => {
                    lines.remove(&product);
                }
                Value::Object(entry) => {
                    match self.line_from(product, entry, lines.get(&product), ctx) {
                        Ok(line) => {
                            lines.insert(product, line);
                        }
                        Err(list) => {
                            problems.extend(list.into_iter().map(|p| format!("{key}: {p}")))
                        }
                    }
                }
                _ => problems.push(format!(
                    "{key}: must be an object (or null to remove the product)."
                )),
            }
        }
        if problems.is_empty() {
            self.lines = lines.into_values().collect();
        }
        problems
    }

    fn line_from(
        &self,
        key: i64,
        entry: Map<String, Value>,
        existing: Option<&CountLine>,
        ctx: &CountContext<'_>,
    ) -> Result<CountLine, Vec<String>> {
        let cost = entry.get("costPrice").cloned();
        let vat = entry.get("vatPercentage").cloned();
        let mut f = Fields::declared::<CountLine>(entry);
        let product = match f.integer("productId") {
            Patch::Set(p) if p != key => {
                f.reject("productId", format!("{p} differs from the key {key}."));
                None
            }
            Patch::Set(p) if existing.is_none() && !(ctx.product_exists)(p) => {
                f.reject(
                    "productId",
                    format!("{p} is not a product of this merchant."),
                );
                None
            }
            Patch::Set(p) => Some(p),
            _ => existing.map(|l| l.product_id),
        };
        let counted = match f.integer("quantity") {
            Patch::Set(q) if q <= money::MAX_QUANTITY => Some(q),
            Patch::Set(_) => {
                f.reject(
                    "quantity",
                    format!("must be at most {} units.", money::MAX_QUANTITY),
                );
                None
            }
            _ => existing.map(|l| l.counted),
        };
        let mut decimal =
            |field: &str, parse: fn(&Value) -> Result<Decimal, String>, value, current| match value
            {
                None => current,
                Some(Value::Null) => None,
                Some(v) => parse(&v).map_err(|e| f.reject(field, e)).ok(),
            };
        let cost_price = decimal(
            "costPrice",
            money::money,
            cost,
            existing.and_then(|l| l.cost_price),
        );
        let vat_percentage = decimal(
            "vatPercentage",
            money::rate,
            vat,
            existing.and_then(|l| l.vat_percentage),
        );
        let note = f.text("note").apply(existing.and_then(|l| l.note.clone()));
        f.require("productId", &product);
        f.require("quantity", &counted);
        f.finish()?;
        let (Some(product_id), Some(counted)) = (product, counted) else {
            return Err(vec!["the count is incomplete.".into()]);
        };
        Ok(CountLine {
            reconciliation_id: self.id,
            product_id,
            counted,
            cost_price,
            vat_percentage,
            note,
            expected: None,
        })
    }

    /// Compares the counts with the stock left now and books the differences.
    fn complete(
        &mut self,
        ids: &mut dyn Iterator<Item = i64>,
        ctx: &CountContext<'_>,
        now: i64,
    ) -> Result<(), String> {
        if self.lines.is_empty() {
            return Err("a count without products cannot be completed.".into());
        }
        if !(ctx.store_exists)(self.store_id) {
            return Err(format!(
                "store {} no longer exists; the count cannot be completed.",
                self.store_id
            ));
        }
        for line in &self.lines {
            if let Some(other) = (ctx.completed_in_request)(self.store_id, line.product_id) {
                return Err(format!(
                    "count {other} of this request completed product {} at store {} already; \
                     complete this count in a later request.",
                    line.product_id, self.store_id
                ));
            }
        }
        for line in &mut self.lines {
            line.expected = Some((ctx.stock_left)(self.store_id, line.product_id));
        }
        let short: Vec<(i64, i64)> = self.shortfalls().collect();
        if !short.is_empty() {
            let basket_id = next_id(ids)?;
            let mut basket = BasketRecord::new(basket_id, now);
            basket.store_id = self.store_id;
            basket.name = Some(format!("Stock count {}", self.id));
            basket.note = Some(format!("Shortfall found by stock count {}.", self.id));
            basket.basket_type = BasketType::Wastage;
            basket.completed = true;
            basket.complete_date = Some(now);
            for (product_id, quantity) in short {
                let price = (ctx.wastage_price)(product_id);
                basket.lines.push(BasketLine {
                    id: next_id(ids)?,
                    basket_id,
                    product_id,
                    product_instance_id: price.instance_id,
                    quantity,
                    price: price.price,
                    original_price: price.price,
                    tax_percentage: price.tax_percentage,
                    note: None,
                    added_date: now,
                    return_of: None,
                    restock: true,
                    client_id: None,
                });
            }
            basket.receipt = Some((ctx.price)(&basket));
            self.wastage_basket_id = Some(basket_id);
            self.booked_basket = Some(Box::new(basket));
        }
        let over: Vec<(i64, i64)> = self.surpluses().collect();
        for (product_id, quantity) in over {
            self.surplus_entries.push(SurplusEntry {
                id: next_id(ids)?,
                reconciliation_id: self.id,
                store_id: self.store_id,
                product_id,
                quantity,
                entry_date: now,
            });
        }
        self.completed = true;
        self.complete_date = Some(now);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
