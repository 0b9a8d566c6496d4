//! A basket's lines: what each sells (or gives back, for a return line), at which price,
//! and the rules that hold across the lines of one write.

use super::basket::{BasketContext, InstancePrice};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::fields::{next_id, Fields};
use crate::money;
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
    #[field(max_len = 2000)]
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
    #[field(max_len = crate::offline::sync::CLIENT_ID_LEN, create_only)]
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

pub(crate) fn line_from(
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
        .text("note")
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
pub(crate) fn returned_line(
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
pub(crate) fn line_quantity(
    f: &mut Fields,
    raw: Option<Value>,
    current: Option<i64>,
) -> Option<i64> {
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
    crate::fields::new_children(fields, "basketProducts")
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
pub(crate) fn over_returned(
    lines: &[BasketLine],
    basket_id: i64,
    ctx: &BasketContext<'_>,
) -> Vec<String> {
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
