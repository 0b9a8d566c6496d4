//! A product and its price instances (api-reference.md, Product).

use std::collections::BTreeSet;

use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::fields::{next_id, Fields, Shape};
use crate::money;
use merchantd_macros::Record;

#[derive(Clone, Debug, PartialEq, Record)]
#[record(
    table = "product_instances",
    schema = "ProductInstance",
    noun = "Price instance"
)]
pub struct InstanceRecord {
    #[field(writable)]
    pub id: i64,
    #[field(parent, hidden)]
    pub product_id: i64,
    #[field(max_len = 200)]
    pub name: Option<String>,
    #[field(kind = "money", required)]
    pub price: Decimal,
    #[field(kind = "rate", required)]
    pub tax_percentage: Decimal,
    #[field(max_len = 100)]
    pub size: Option<String>,
    #[field(max_len = 1000)]
    pub tags: Option<String>,
    /// Named rates of the merchant's `[sales]` settings (GST and PST); when empty, the line
    /// is taxed at `taxPercentage` alone.
    pub tax_codes: Vec<String>,
    #[field(read_only)]
    pub active_date: Option<i64>,
    pub delete_date: Option<i64>,
}

#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(table = "products", event = "product")]
pub struct ProductRecord {
    pub id: i64,
    #[field(max_len = 200, required)]
    pub name: String,
    #[field(max_len = 64)]
    pub barcode: Option<String>,
    #[field(max_len = 4000)]
    pub details: Option<String>,
    #[field(max_len = 1000)]
    pub tags: Option<String>,
    #[field(min = 0.0, max = 1e12)]
    pub unit: Option<f64>,
    #[field(kind = "images")]
    pub images: Vec<String>,
    #[field(name = "categories", kind = "categories")]
    pub category_ids: Vec<i64>,
    #[field(children, stored, live = "live_instances")]
    /// Every instance ever made, deleted ones included (baskets still refer to them).
    pub instances: Vec<InstanceRecord>,
    #[field(name = "timestamp", kind = "date", read_only)]
    pub created_at: i64,
    pub active_date: Option<i64>,
    pub delete_date: Option<i64>,
}

/// The fields writes accept (see [`Shape`]); `instances` holds the price variants.
pub const SHAPE: Shape =
    Shape::nested::<ProductRecord>(&[("instances", Shape::of::<InstanceRecord>())]);

/// What the product rules need to know about the rest of the merchant.
pub struct ProductContext<'a> {
    pub category_exists: &'a dyn Fn(i64) -> bool,
    /// The merchant's named tax rates.
    pub tax_codes: &'a [&'a str],
}

impl ProductRecord {
    crate::blank!(|id, now| created_at: now);

    pub fn live_instances(&self) -> impl Iterator<Item = &InstanceRecord> {
        self.instances.iter().filter(|i| i.delete_date.is_none())
    }

    /// How many new identifiers a write of these fields needs (the product's own, if new, is
    /// counted by the caller).
    pub fn new_instances(fields: &Map<String, Value>) -> usize {
        crate::fields::new_children(fields, "instances")
    }

    /// Applies written fields; `ids` hands out identifiers for new instances.
    pub fn apply(
        mut self,
        fields: Map<String, Value>,
        ids: &mut dyn Iterator<Item = i64>,
        ctx: &ProductContext<'_>,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        let instances_written = fields.get("instances").cloned();
        let categories_written = fields.get("categories").cloned();
        let images_written = fields.get("images").cloned();
        let mut f = Fields::declared::<Self>(fields);
        let name = f.required_text("name", &self.name);
        self.barcode = f.text("barcode").apply(self.barcode);
        self.details = f.text("details").apply(self.details);
        self.tags = f.text("tags").apply(self.tags);
        self.unit = f.number("unit").apply(self.unit);
        self.active_date = f.date("activeDate").apply(self.active_date);
        match categories_written {
            None => {}
            Some(Value::Null) => self.category_ids.clear(),
            Some(Value::Array(items)) => {
                let mut ids = BTreeSet::new();
                for item in items {
                    match item.as_i64().filter(|id| *id >= 0) {
                        Some(id) if (ctx.category_exists)(id) => {
                            ids.insert(id);
                        }
                        Some(id) => f.reject(
                            "categories",
                            format!("{id} is not a category of this merchant."),
                        ),
                        None => f.reject("categories", format!("{item} is not a category id.")),
                    }
                }
                self.category_ids = ids.into_iter().collect();
            }
            Some(_) => f.reject("categories", "must be an array of category ids."),
        }
        match images_written {
            None => {}
            Some(Value::Null) => self.images.clear(),
            Some(Value::Array(items)) => {
                let mut names = Vec::new();
                for item in items {
                    match item.as_str().filter(|s| valid_file_name(s)) {
                        Some(name) => names.push(name.to_owned()),
                        None => f.reject("images", format!("{item} is not an uploaded file name.")),
                    }
                }
                self.images = names;
            }
            Some(_) => f.reject("images", "must be an array of uploaded file names."),
        }
        match instances_written {
            None => {}
            Some(Value::Object(entries)) => {
                let problems = self.apply_instances(entries, ids, ctx.tax_codes, now);
                for p in problems {
                    f.reject("instances", p);
                }
            }
            Some(_) => f.reject(
                "instances",
                "must be an object of instances keyed by client keys.",
            ),
        }
        f.require("name", &name);
        f.finish()?;
        self.name = name.unwrap_or_default();
        Ok(self)
    }

    /// Keeps instances sent with their id, creates those without, and deletes live ones left
    /// out. An instance is never edited: a kept instance whose fields differ is refused.
    fn apply_instances(
        &mut self,
        entries: Map<String, Value>,
        ids: &mut dyn Iterator<Item = i64>,
        tax_codes: &[&str],
        now: i64,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        let mut kept = BTreeSet::new();
        let mut created = Vec::new();
        for (key, entry) in entries {
            let Value::Object(entry) = entry else {
                problems.push(format!("{key}: must be an object."));
                continue;
            };
            match entry.get("id") {
                Some(Value::Number(n)) => {
                    let existing = n
                        .as_i64()
                        .and_then(|id| self.live_instances().find(|i| i.id == id).cloned());
                    match existing {
                        Some(current) => {
                            if let Some(field) = edited_field(&current, &entry) {
                                problems.push(format!(
                                    "{key}: {field}: an instance is never edited; leave out its id to add a new one."
                                ));
                            }
                            kept.insert(current.id);
                        }
                        None => problems.push(format!(
                            "{key}: id: {n} is not a live instance of this product."
                        )),
                    }
                }
                Some(v) if !v.is_null() => problems.push(format!("{key}: id: must be an integer.")),
                _ => match new_instance(self.id, entry, ids, tax_codes, now) {
                    Ok(instance) => created.push(instance),
                    Err(list) => problems.extend(list.into_iter().map(|p| format!("{key}: {p}"))),
                },
            }
        }
        if problems.is_empty() {
            for instance in &mut self.instances {
                if instance.delete_date.is_none() && !kept.contains(&instance.id) {
                    instance.delete_date = Some(now);
                }
            }
            self.instances.extend(created);
        }
        problems
    }
}

fn new_instance(
    product_id: i64,
    entry: Map<String, Value>,
    ids: &mut dyn Iterator<Item = i64>,
    tax_codes: &[&str],
    now: i64,
) -> Result<InstanceRecord, Vec<String>> {
    let price = entry.get("price").cloned();
    let tax = entry.get("taxPercentage").cloned();
    let codes = entry.get("taxCodes").cloned();
    let mut f = Fields::declared::<InstanceRecord>(entry);
    let name = f.text("name").apply(None);
    let size = f.text("size").apply(None);
    let tags = f.text("tags").apply(None);
    let price = match price {
        None | Some(Value::Null) => None,
        Some(v) => money::money(&v).map_err(|e| f.reject("price", e)).ok(),
    };
    let tax = match tax {
        None | Some(Value::Null) => None,
        Some(v) => money::rate(&v)
            .map_err(|e| f.reject("taxPercentage", e))
            .ok(),
    };
    let codes = instance_tax_codes(&mut f, codes, tax_codes);
    f.require("price", &price);
    f.require("taxPercentage", &tax);
    f.finish()?;
    let id = next_id(ids)?;
    Ok(InstanceRecord {
        id,
        product_id,
        name,
        price: price.unwrap_or_default(),
        tax_percentage: tax.unwrap_or_default(),
        size,
        tags,
        tax_codes: codes,
        active_date: Some(now),
        delete_date: None,
    })
}

/// An instance's named tax rates: each one the merchant declares, none twice.
fn instance_tax_codes(f: &mut Fields, raw: Option<Value>, declared: &[&str]) -> Vec<String> {
    let items = match raw {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(items)) => items,
        Some(_) => {
            f.reject("taxCodes", "must be an array of the merchant's tax codes.");
            return Vec::new();
        }
    };
    let mut codes: Vec<String> = Vec::new();
    for item in items {
        match item.as_str() {
            Some(code) if declared.contains(&code) => {
                if !codes.iter().any(|c| c == code) {
                    codes.push(code.to_owned());
                }
            }
            Some(code) if declared.is_empty() => f.reject(
                "taxCodes",
                format!("\"{code}\" is not a tax code: this merchant declares none ([sales] taxes in its manifest)."),
            ),
            Some(code) => f.reject(
                "taxCodes",
                format!("\"{code}\" is not one of this merchant's tax codes ({}).", declared.join(", ")),
            ),
            None => f.reject("taxCodes", format!("{item} is not a tax code.")),
        }
    }
    codes
}

/// The first field of a kept instance that a write tries to change.
fn edited_field(current: &InstanceRecord, entry: &Map<String, Value>) -> Option<&'static str> {
    let text_differs = |key: &str, value: &Option<String>| {
        entry
            .get(key)
            .is_some_and(|v| v.as_str().map(str::trim) != value.as_deref())
    };
    let decimal_differs = |key: &str, value: &Decimal| {
        entry
            .get(key)
            .is_some_and(|v| !money::decimal(v).is_ok_and(|d| d == *value))
    };
    if text_differs("name", &current.name) {
        Some("name")
    } else if decimal_differs("price", &current.price) {
        Some("price")
    } else if decimal_differs("taxPercentage", &current.tax_percentage) {
        Some("taxPercentage")
    } else if text_differs("size", &current.size) {
        Some("size")
    } else if text_differs("tags", &current.tags) {
        Some("tags")
    } else if entry.get("taxCodes").is_some_and(|v| {
        v.as_array().is_none_or(|a| {
            !a.iter()
                .map(Value::as_str)
                .eq(current.tax_codes.iter().map(|c| Some(c.as_str())))
        })
    }) {
        Some("taxCodes")
    } else {
        None
    }
}

/// Names the uploader hands out (content-addressed) or any plain file name.
fn valid_file_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
        && !name.starts_with('.')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> ProductContext<'static> {
        ProductContext {
            category_exists: &|id| id == 1041,
            tax_codes: &[],
        }
    }

    use crate::testing::obj;

    #[test]
    fn a_product_with_two_instances_and_a_category() {
        let mut ids = 1044..;
        let p = ProductRecord::new(1043, 0)
            .apply(
                obj(json!({"name": "Latte", "categories": [1041], "instances": {
                    "eatin": {"name": "Eat in", "price": "300", "taxPercentage": "0.200"},
                    "away": {"name": "Take away", "price": "280", "taxPercentage": "0.200"}}})),
                &mut ids,
                &ctx(),
                0,
            )
            .unwrap();
        assert_eq!(p.live_instances().count(), 2);
        assert_eq!(p.category_ids, [1041]);
        let eat_in = p
            .instances
            .iter()
            .find(|i| i.name.as_deref() == Some("Eat in"));
        assert_eq!(eat_in.map(|i| i.price.to_string()).as_deref(), Some("300"));
    }

    #[test]
    fn instances_left_out_are_dropped_and_kept_ones_cannot_change() {
        let mut ids = 10..;
        let p = ProductRecord::new(1, 0)
            .apply(
                obj(json!({"name": "Tea", "instances": {"a": {"price": "100", "taxPercentage": "0.2"}}})),
                &mut ids,
                &ctx(),
                0,
            )
            .unwrap();
        let kept = p.instances[0].id;
        let changed = p
            .clone()
            .apply(
                obj(json!({"instances": {"k": {"id": kept, "price": "120"}}})),
                &mut ids,
                &ctx(),
                5,
            )
            .unwrap_err();
        assert!(changed[0].contains("never edited"), "{changed:?}");
        let swapped = p
            .apply(
                obj(json!({"instances": {"n": {"price": "120", "taxPercentage": "0.2"}}})),
                &mut ids,
                &ctx(),
                5,
            )
            .unwrap();
        assert_eq!(swapped.live_instances().count(), 1);
        assert_eq!(
            swapped.instances.len(),
            2,
            "the old instance stays, deleted"
        );
        assert_eq!(swapped.instances[0].delete_date, Some(5));
    }

    #[test]
    fn unknown_categories_and_bad_prices_are_named() {
        let errs = ProductRecord::new(1, 0)
            .apply(
                obj(json!({"name": "X", "categories": [7], "instances": {"a": {"price": "-1"}}})),
                &mut (1..),
                &ctx(),
                0,
            )
            .unwrap_err()
            .join(" ");
        assert!(
            errs.contains("categories: 7 is not a category of this merchant."),
            "{errs}"
        );
        assert!(
            errs.contains("instances: a: price: must not be negative."),
            "{errs}"
        );
        assert!(
            errs.contains("instances: a: taxPercentage: required field is missing."),
            "{errs}"
        );
    }
}
