//! A promotion (api-reference.md, Promotion; examples §2.8). `x` and `y` are decimals, never
//! binary floats: for `percentage` `x` is the percentage off, for `xForY` "buy x, pay for y", for
//! `mealDeal` `x` is the deal's price in minor units.

use std::collections::BTreeSet;

use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::fields::{Fields, Patch, Shape};
use crate::money;
use crate::record::Choice;
use merchantd_macros::Record;

crate::choice! {
    pub enum PromotionType {
        Percentage = "percentage",
        XForY = "xForY",
        MealDeal = "mealDeal",
    }
}

/// Every day of the week, 0 = Sunday.
pub const ALL_DAYS: [i64; 7] = [0, 1, 2, 3, 4, 5, 6];

#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(table = "promotions", event = "promotion")]
pub struct PromotionRecord {
    pub id: i64,
    #[field(max_len = 200, required)]
    pub title: String,
    #[field(max_len = 2000)]
    pub details: Option<String>,
    #[field(max_len = 2000)]
    pub terms: Option<String>,
    #[field(
        max_len = 20,
        name = "type",
        column = "promotion_type",
        kind = "choice",
        required
    )]
    pub kind: PromotionType,
    #[field(kind = "decimal", required)]
    pub x: Decimal,
    #[field(kind = "decimal")]
    pub y: Option<Decimal>,
    /// Empty: every store.
    pub store_ids: Vec<i64>,
    pub product_ids: Vec<i64>,
    pub category_ids: Vec<i64>,
    #[field(required)]
    pub start_date: i64,
    /// `None`: open-ended.
    pub end_date: Option<i64>,
    pub days_available: Vec<i64>,
    pub automatic: bool,
    /// Applies on top of the other promotions of a line, instead of competing with them.
    pub stackable: bool,
    pub active_date: Option<i64>,
    pub delete_date: Option<i64>,
}

/// The fields writes accept (see [`Shape`]).
pub const SHAPE: Shape = Shape::of::<PromotionRecord>();

/// Which of the merchant's records the written ids may name.
pub struct References<'a> {
    pub store: &'a dyn Fn(i64) -> bool,
    pub category: &'a dyn Fn(i64) -> bool,
}

impl PromotionRecord {
    crate::blank!(|id, now| days_available: ALL_DAYS.to_vec());

    /// startDate ≤ now < endDate (or no endDate).
    pub fn is_active(&self, now: i64) -> bool {
        self.start_date <= now && self.end_date.is_none_or(|end| now < end)
    }

    /// endDate ≤ now.
    pub fn is_expired(&self, now: i64) -> bool {
        self.end_date.is_some_and(|end| end <= now)
    }

    /// now < startDate ≤ now + window.
    pub fn is_imminent(&self, now: i64, window_ms: i64) -> bool {
        now < self.start_date && self.start_date <= now.saturating_add(window_ms)
    }

    /// Valid at one of `stores` (a promotion without stores is valid everywhere).
    pub fn valid_at_any(&self, stores: &BTreeSet<i64>) -> bool {
        self.store_ids.is_empty() || self.store_ids.iter().any(|s| stores.contains(s))
    }

    /// Whether a sale at `store` at `now`, on `weekday` (0 = Sunday, in the store's time zone),
    /// can take this promotion.
    pub fn applies_to_sale(&self, store: i64, now: i64, weekday: i64) -> bool {
        self.delete_date.is_none()
            && self.is_active(now)
            && (self.store_ids.is_empty() || self.store_ids.contains(&store))
            && self.days_available.contains(&weekday)
    }

    /// The promotion as the sale engine applies it.
    pub fn offer(&self) -> crate::sales::pricing::Offer {
        crate::sales::pricing::Offer {
            id: self.id,
            kind: self.kind,
            x: self.x,
            y: self.y,
            product_ids: self.product_ids.clone(),
            category_ids: self.category_ids.clone(),
            stackable: self.stackable,
        }
    }

    /// Applies written fields. `creating` makes title, type, x and startDate required.
    pub fn apply(
        mut self,
        fields: Map<String, Value>,
        creating: bool,
        refs: &References<'_>,
    ) -> Result<Self, Vec<String>> {
        // `Fields` reads text, dates and flags; decimals and arrays are read from the raw
        // values here (the unknown-field check still runs on the whole object).
        let raw = |key: &str| fields.get(key).cloned();
        let (raw_x, raw_y) = (raw("x"), raw("y"));
        let (raw_stores, raw_products) = (raw("storeIds"), raw("productIds"));
        let (raw_categories, raw_days) = (raw("categoryIds"), raw("daysAvailable"));
        let mut f = Fields::declared::<Self>(fields);

        let title = f.required_text("title", &self.title);
        self.details = f.text("details").apply(self.details);
        self.terms = f.text("terms").apply(self.terms);
        let current_kind = (!creating).then_some(self.kind);
        let kind = match f.text("type") {
            Patch::Set(t) => PromotionType::parse(&t).or_else(|| {
                f.reject(
                    "type",
                    format!("\"{t}\" is not one of percentage, xForY, mealDeal."),
                );
                current_kind
            }),
            Patch::Clear => None,
            Patch::Keep => current_kind,
        };
        let x = decimal(&mut f, "x", raw_x).apply((!creating).then_some(self.x));
        self.y = decimal(&mut f, "y", raw_y).apply(self.y);
        self.store_ids = match id_array(&mut f, "storeIds", raw_stores) {
            Patch::Set(ids) => checked(&mut f, "storeIds", ids, refs.store, "store"),
            other => other.apply(Some(self.store_ids)).unwrap_or_default(),
        };
        // TODO(products): check productIds against the merchant's live products once the
        // product resource exists; until then any non-negative integers are accepted.
        self.product_ids = id_array(&mut f, "productIds", raw_products)
            .apply(Some(self.product_ids))
            .unwrap_or_default();
        self.category_ids = match id_array(&mut f, "categoryIds", raw_categories) {
            Patch::Set(ids) => checked(&mut f, "categoryIds", ids, refs.category, "category"),
            other => other.apply(Some(self.category_ids)).unwrap_or_default(),
        };
        let start = f
            .date("startDate")
            .apply((!creating).then_some(self.start_date));
        self.end_date = f.date("endDate").apply(self.end_date);
        self.days_available = days(&mut f, raw_days, self.days_available);
        if let Some(automatic) = f.boolean("automatic") {
            self.automatic = automatic;
        }
        if let Some(stackable) = f.boolean("stackable") {
            self.stackable = stackable;
        }
        self.active_date = f.date("activeDate").apply(self.active_date);

        f.require("title", &title);
        f.require("type", &kind);
        f.require("x", &x);
        f.require("startDate", &start);
        if let (Some(kind), Some(x)) = (kind, x) {
            if let Err((key, why)) = check_amounts(kind, x, self.y) {
                if !f.problems.iter().any(|p| p.starts_with(&format!("{key}:"))) {
                    f.reject(key, why);
                }
            }
        }
        if let (Some(start), Some(end)) = (start, self.end_date) {
            if end <= start {
                f.reject("endDate", "must be after startDate.");
            }
        }
        f.finish()?;
        self.title = title.unwrap_or_default();
        self.kind = kind.unwrap_or(PromotionType::Percentage);
        self.x = x.unwrap_or_default();
        self.start_date = start.unwrap_or_default();
        Ok(self)
    }
}

/// The rules `x` and `y` follow for each type.
fn check_amounts(
    kind: PromotionType,
    x: Decimal,
    y: Option<Decimal>,
) -> Result<(), (&'static str, String)> {
    if y.is_some_and(|y| y.is_sign_negative() && !y.is_zero()) {
        return Err(("y", "must not be negative.".into()));
    }
    match kind {
        PromotionType::Percentage if x <= Decimal::ZERO || x > Decimal::ONE_HUNDRED => Err((
            "x",
            format!("{x} is not a percentage above 0 and at most 100 (10 % off is \"10\")."),
        )),
        PromotionType::MealDeal if x.is_sign_negative() && !x.is_zero() => {
            Err(("x", "a meal deal price must not be negative.".into()))
        }
        PromotionType::XForY => {
            let Some(y) = y else {
                return Err(("y", "required for type xForY.".into()));
            };
            if x <= Decimal::ZERO {
                Err(("x", "must be more than 0 for type xForY.".into()))
            } else if y <= Decimal::ZERO || y >= x {
                Err((
                    "y",
                    format!("{y} must be more than 0 and less than x ({x}) for type xForY."),
                ))
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

/// A decimal given as a JSON number or string (at most 4 decimals).
fn decimal(f: &mut Fields, key: &str, raw: Option<Value>) -> Patch<Decimal> {
    match raw {
        None => Patch::Keep,
        Some(Value::Null) => Patch::Clear,
        Some(value) => match money::decimal(&value) {
            Ok(d) => Patch::Set(d),
            Err(why) => {
                f.reject(key, why);
                Patch::Keep
            }
        },
    }
}

/// An array of non-negative integers, sorted without repeats; `null` empties it.
fn id_array(f: &mut Fields, key: &str, raw: Option<Value>) -> Patch<Vec<i64>> {
    match raw {
        None => Patch::Keep,
        Some(Value::Null) => Patch::Clear,
        Some(Value::Array(items)) => {
            let ids: Option<BTreeSet<i64>> = items
                .iter()
                .map(|v| v.as_i64().filter(|id| *id >= 0))
                .collect();
            match ids {
                Some(ids) => Patch::Set(ids.into_iter().collect()),
                None => {
                    f.reject(key, "must be an array of non-negative integers.");
                    Patch::Keep
                }
            }
        }
        Some(_) => {
            f.reject(key, "must be an array of non-negative integers.");
            Patch::Keep
        }
    }
}

/// The ids that name a live `noun` of this merchant; every other one is a problem.
fn checked(
    f: &mut Fields,
    key: &str,
    ids: Vec<i64>,
    exists: &dyn Fn(i64) -> bool,
    noun: &str,
) -> Vec<i64> {
    for id in ids.iter().filter(|id| !exists(**id)) {
        f.reject(key, format!("{id} is not a {noun} of this merchant."));
    }
    ids
}

/// Days of the week 0–6 (0 = Sunday); `null` restores every day.
fn days(f: &mut Fields, raw: Option<Value>, current: Vec<i64>) -> Vec<i64> {
    const WHY: &str = "must be an array of days 0-6 (0 = Sunday).";
    match raw {
        None => current,
        Some(Value::Null) => ALL_DAYS.to_vec(),
        Some(Value::Array(items)) => {
            let days: Option<BTreeSet<i64>> = items
                .iter()
                .map(|v| v.as_i64().filter(|d| (0..=6).contains(d)))
                .collect();
            match days {
                Some(days) if days.is_empty() => {
                    f.reject("daysAvailable", "must list at least one day (0 = Sunday).");
                    current
                }
                Some(days) => days.into_iter().collect(),
                None => {
                    f.reject("daysAvailable", WHY);
                    current
                }
            }
        }
        Some(_) => {
            f.reject("daysAvailable", WHY);
            current
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::testing::obj;

    fn create(v: Value) -> Result<PromotionRecord, Vec<String>> {
        let refs = References {
            store: &|id| id == 9,
            category: &|id| id == 1041,
        };
        PromotionRecord::new(1050, 0).apply(obj(v), true, &refs)
    }

    #[test]
    fn the_worked_example_reads_back_with_defaults() {
        let p = create(
            json!({"title": "10% off hot drinks", "type": "percentage", "x": "10",
            "startDate": "2026-03-28 00:00:00", "endDate": "2026-04-30 00:00:00",
            "categoryIds": [1041]}),
        )
        .unwrap();
        assert_eq!(p.x.to_string(), "10");
        assert_eq!(p.y, None);
        assert!(p.store_ids.is_empty());
        assert_eq!(p.category_ids, [1041]);
        assert_eq!(p.days_available, [0, 1, 2, 3, 4, 5, 6]);
        assert!(!p.automatic);
        assert_eq!(p.start_date, 1_774_656_000_000);
    }

    #[test]
    fn decimals_keep_their_text() {
        let p = create(json!({"title": "t", "type": "xForY", "x": 3, "y": "2.0",
            "startDate": "2026-03-28 00:00:00"}))
        .unwrap();
        assert_eq!(
            (p.x.to_string(), p.y.map(|y| y.to_string())),
            ("3".to_owned(), Some("2.0".to_owned()))
        );
        let p = create(json!({"title": "t", "type": "mealDeal", "x": "41.7",
            "startDate": "2026-03-28 00:00:00"}))
        .unwrap();
        assert_eq!(p.x.to_string(), "41.7");
    }

    #[test]
    fn every_problem_is_named() {
        let errs = create(json!({"type": "bogo", "x": "1.23456", "storeIds": [9, 10],
            "categoryIds": [1], "productIds": [-1], "daysAvailable": [7],
            "startDate": "soon", "notAField": 1}))
        .unwrap_err();
        crate::testing::assert_named(
            &errs,
            &[
                "notAField: unknown field.",
                "title: required field is missing.",
                "type: \"bogo\" is not one of",
                "x: \"1.23456\" has more than 4 decimals.",
                "storeIds: 10 is not a store of this merchant.",
                "categoryIds: 1 is not a category of this merchant.",
                "productIds: must be an array",
                "daysAvailable: must be an array",
                "startDate: \"soon\" is not a date",
            ],
        );
    }

    #[test]
    fn rules_between_fields_hold() {
        let start = "2026-03-28 00:00:00";
        let e = create(json!({"title": "t", "type": "xForY", "x": 3, "startDate": start}));
        assert_eq!(e.unwrap_err(), vec!["y: required for type xForY."]);
        let e = create(json!({"title": "t", "type": "xForY", "x": 2, "y": 3, "startDate": start}));
        assert!(e.unwrap_err()[0].starts_with("y: 3 must be more than 0 and less than x"));
        let e = create(json!({"title": "t", "type": "percentage", "x": 150, "startDate": start}));
        assert!(e.unwrap_err()[0].starts_with("x: 150 is not a percentage"));
        let e = create(
            json!({"title": "t", "type": "percentage", "x": 5, "startDate": start,
            "endDate": start}),
        );
        assert_eq!(e.unwrap_err(), vec!["endDate: must be after startDate."]);
    }

    #[test]
    fn updates_are_partial_and_rechecked() {
        let refs = References {
            store: &|_| true,
            category: &|_| true,
        };
        let p = create(json!({"title": "t", "type": "percentage", "x": 10,
            "startDate": "2026-03-28 00:00:00", "daysAvailable": [6, 0, 6]}))
        .unwrap();
        assert_eq!(p.days_available, vec![0, 6]);
        let u = p
            .clone()
            .apply(obj(json!({"id": 1050, "automatic": true})), false, &refs)
            .unwrap();
        assert_eq!(
            (u.automatic, u.x, u.days_available.clone()),
            (true, p.x, vec![0, 6])
        );
        let e = p.apply(obj(json!({"type": "xForY"})), false, &refs);
        assert_eq!(e.unwrap_err(), vec!["y: required for type xForY."]);
    }

    #[test]
    fn life_stages_follow_the_dates() {
        let mut p = PromotionRecord::new(1, 0);
        p.start_date = 100;
        p.end_date = Some(200);
        assert!(!p.is_active(99) && p.is_active(100) && p.is_active(199) && !p.is_active(200));
        assert!(p.is_expired(200) && !p.is_expired(199));
        assert!(p.is_imminent(50, 50) && !p.is_imminent(49, 50) && !p.is_imminent(100, 50));
        p.end_date = None;
        assert!(p.is_active(i64::MAX) && !p.is_expired(i64::MAX));
        assert!(p.valid_at_any(&BTreeSet::from([3])));
        p.store_ids = vec![9];
        assert!(!p.valid_at_any(&BTreeSet::from([3])) && p.valid_at_any(&BTreeSet::from([3, 9])));
    }
}
