//! Erasing a customer's personal data (docs/customers.md, "Export and erase"): what is personal
//! in the records that name a customer, and how the copies of it kept elsewhere (event
//! payloads, logs, stored idempotent answers) are scrubbed. The financial records stay: the
//! customer's id, its baskets, payments and orders keep their amounts and point at the
//! anonymous record the customer becomes.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::customer::CustomerRecord;
use super::sales::OrderRecord;

/// The name an erased customer keeps (a customer has a name).
pub const ERASED_NAME: &str = "Erased customer";

/// What replaces a personal value found in free text (a log, a stored answer).
pub const ERASED_TEXT: &str = "[erased]";

/// The shortest value looked for in free text: a shorter one ("Al") would blot out unrelated
/// words, and identifies no one alone.
const SHORTEST_SEARCHED: usize = 3;

/// The keys of a customer's rendering that hold personal data.
const CUSTOMER_KEYS: [&str; 5] = ["name", "email", "phone", "note", "attributes"];

/// The keys of an order's rendering that hold its customer's personal data.
const ORDER_KEYS: [&str; 4] = [
    "customerName",
    "customerEmail",
    "customerPhone",
    "deliveryAddress",
];

impl CustomerRecord {
    /// Makes the customer anonymous: personal fields cleared, the name [`ERASED_NAME`],
    /// marketing consent withdrawn, deleted (if it was not) and marked erased. Gives the
    /// identifying values it held, to be looked for in free text.
    pub fn erase(&mut self, now: i64) -> Vec<String> {
        let mut held = vec![std::mem::replace(&mut self.name, ERASED_NAME.into())];
        held.extend(self.email.take());
        held.extend(self.phone.take());
        self.note = None;
        self.attributes = None;
        self.marketing_consent = false;
        self.delete_date.get_or_insert(now);
        self.erase_date = Some(now);
        held
    }
}

impl OrderRecord {
    /// Clears the customer's contact details the order copied; gives the values it held.
    pub fn erase_customer(&mut self) -> Vec<String> {
        [
            self.customer_name.take(),
            self.customer_email.take(),
            self.customer_phone.take(),
            self.delivery_address.take(),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// The values worth looking for in free text: trimmed, long enough, each once.
pub fn searched(values: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut kept: Vec<String> = values
        .into_iter()
        .map(|v| v.trim().to_owned())
        .filter(|v| v.chars().count() >= SHORTEST_SEARCHED && v != ERASED_NAME)
        .collect();
    // Longest first, so a value containing another is replaced whole.
    kept.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    kept.dedup();
    kept
}

/// An event's payload with the personal keys of its object cleared (`customer.*` and
/// `order.*` events); `None` when nothing changed or the payload is not an object.
pub fn scrub_event(event_type: &str, data: &str) -> Option<String> {
    let object = event_type.split('.').next().unwrap_or_default();
    let mut value: Value = serde_json::from_str(data).ok()?;
    scrub_fields(object, value.as_object_mut()?).then(|| value.to_string())
}

/// Clears the personal keys of a rendered `customer` or `order`; true when one changed.
fn scrub_fields(object: &str, fields: &mut Map<String, Value>) -> bool {
    let keys: &[&str] = match object {
        "customer" => &CUSTOMER_KEYS,
        "order" => &ORDER_KEYS,
        _ => return false,
    };
    let mut changed = false;
    for key in keys {
        let erased = match (object, *key) {
            ("customer", "name") => Value::String(ERASED_NAME.into()),
            _ => Value::Null,
        };
        if let Some(v) = fields.get_mut(*key).filter(|v| **v != erased) {
            *v = erased;
            changed = true;
        }
    }
    changed
}

/// A stored idempotent answer with the customer's and its orders' renderings scrubbed, then
/// any identifying value left replaced; `None` when nothing changed. A write's answer holds,
/// per saved object, `{"id": <id>, "json": "<the record as rendered>"}`.
pub fn scrub_answer(
    answer: &str,
    customer_id: i64,
    order_ids: &BTreeSet<i64>,
    values: &[String],
) -> Option<String> {
    let mut changed = false;
    let mut text = match serde_json::from_str::<Value>(answer) {
        Ok(mut value) => {
            changed = scrub_saved(&mut value, &|id| {
                if id == customer_id {
                    "customer"
                } else if order_ids.contains(&id) {
                    "order"
                } else {
                    ""
                }
            });
            value.to_string()
        }
        Err(_) => answer.to_owned(),
    };
    if let Some(scrubbed) = scrub_text(&text, values) {
        text = scrubbed;
        changed = true;
    }
    changed.then_some(text)
}

/// Walks an answer for saved objects (`{"id", "json"}`) of the kinds `kind_of` names.
fn scrub_saved(value: &mut Value, kind_of: &dyn Fn(i64) -> &'static str) -> bool {
    match value {
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, item| scrub_saved(item, kind_of) | changed),
        Value::Object(fields) => {
            let kind = fields.get("id").and_then(Value::as_i64).map(kind_of);
            let rendered = fields.get("json").and_then(Value::as_str);
            if let (Some(kind), Some(json)) = (kind, rendered) {
                if let Ok(Value::Object(mut record)) = serde_json::from_str(json) {
                    if scrub_fields(kind, &mut record) {
                        fields.insert("json".into(), Value::Object(record).to_string().into());
                        return true;
                    }
                }
                return false;
            }
            fields
                .values_mut()
                .fold(false, |changed, v| scrub_saved(v, kind_of) | changed)
        }
        _ => false,
    }
}

/// `text` with every occurrence of each value replaced by [`ERASED_TEXT`], ignoring case (an
/// email is the same address in any case); `None` when none occurs.
pub fn scrub_text(text: &str, values: &[String]) -> Option<String> {
    let mut out = text.to_owned();
    let mut changed = false;
    for value in values {
        if let Some(next) = replace_ignoring_case(&out, value) {
            out = next;
            changed = true;
        }
    }
    changed.then_some(out)
}

fn replace_ignoring_case(text: &str, needle: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let needle = needle.to_lowercase();
    // Lower-casing may change byte lengths outside ASCII; then compare exactly instead.
    if lower.len() != text.len() || needle.is_empty() {
        return text
            .contains(needle.as_str())
            .then(|| text.replace(needle.as_str(), ERASED_TEXT));
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = 0;
    let mut found = false;
    for (at, _) in lower.match_indices(needle.as_str()) {
        if at < rest {
            continue;
        }
        out.push_str(&text[rest..at]);
        out.push_str(ERASED_TEXT);
        rest = at + needle.len();
        found = true;
    }
    out.push_str(&text[rest..]);
    found.then_some(out)
}

/// The SQL `LIKE` pattern finding `value` anywhere in a lower-cased column (`\` escapes).
pub fn like_pattern(value: &str) -> String {
    let mut pattern = String::from("%");
    for c in value.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::testing::obj;
    use serde_json::json;

    #[test]
    fn an_erased_customer_keeps_its_id_and_nothing_personal() {
        let mut c = CustomerRecord::new(7, 0)
            .apply(obj(json!({"name": "Ann Lee", "email": "ann@example.com",
                "phone": "+44 20 7946 0018", "note": "allergic to nuts",
                "marketingConsent": true, "attributes": {"tier": "gold"}})))
            .unwrap();
        let held = c.erase(5);
        assert_eq!(held, ["Ann Lee", "ann@example.com", "+44 20 7946 0018"]);
        assert_eq!(c.id, 7);
        assert_eq!(c.name, ERASED_NAME);
        assert!(c.email.is_none() && c.phone.is_none() && c.note.is_none());
        assert!(c.attributes.is_none() && !c.marketing_consent);
        assert_eq!((c.delete_date, c.erase_date), (Some(5), Some(5)));
        assert_eq!(c.search_keys(), ["customer", "erased", "erased customer"]);
    }

    #[test]
    fn events_lose_the_personal_keys_of_customers_and_orders_only() {
        let customer = json!({"id": 7, "name": "Ann", "email": "a@b.co", "marketingConsent": true});
        let scrubbed: Value =
            serde_json::from_str(&scrub_event("customer.updated", &customer.to_string()).unwrap())
                .unwrap();
        assert_eq!(
            scrubbed,
            json!({"id": 7, "name": ERASED_NAME, "email": null, "marketingConsent": true})
        );
        let order = json!({"id": 9, "customerName": "Ann", "note": "door code 12"});
        let scrubbed = scrub_event("order.created", &order.to_string()).unwrap();
        assert!(!scrubbed.contains("Ann") && scrubbed.contains("door code"));
        assert_eq!(scrub_event("product.created", r#"{"name":"Ann"}"#), None);
        assert_eq!(
            scrub_event("order.updated", r#"{"customerName":null}"#),
            None
        );
        assert_eq!(scrub_event("customer.created", "not json"), None);
    }

    #[test]
    fn free_text_loses_every_value_in_any_case() {
        let values = searched(["Ann".into(), " ann@example.com ".into(), "Al".into()]);
        assert_eq!(values, ["ann@example.com", "Ann"]);
        let text = "called ANN@Example.com; ann said hi; Alan";
        assert_eq!(
            scrub_text(text, &values).unwrap(),
            "called [erased]; [erased] said hi; Alan"
        );
        assert_eq!(scrub_text("nothing here", &values), None);
        assert_eq!(
            scrub_text("Zoë Ünal paid", &["Zoë Ünal".into()]).unwrap(),
            "[erased] paid"
        );
        assert_eq!(like_pattern("A_b%c"), "%a\\_b\\%c%");
    }

    #[test]
    fn stored_answers_lose_the_customers_and_its_orders_personal_fields() {
        let customer = json!({"id": 7, "name": "Ann", "note": "nuts"}).to_string();
        let order = json!({"id": 9, "customerPhone": "0770", "note": "door"}).to_string();
        let other = json!({"id": 8, "name": "Bob", "note": "tea"}).to_string();
        let answer = json!([{"key": "a", "result": {"Ok": {"id": 7, "json": customer}}},
            {"key": "b", "result": {"Ok": {"id": 9, "json": order}}},
            {"key": "c", "result": {"Ok": {"id": 8, "json": other}}}])
        .to_string();
        let scrubbed = scrub_answer(&answer, 7, &BTreeSet::from([9]), &[]).unwrap();
        assert!(
            !scrubbed.contains("nuts") && !scrubbed.contains("0770"),
            "{scrubbed}"
        );
        assert!(
            scrubbed.contains("door") && scrubbed.contains("tea"),
            "{scrubbed}"
        );
        assert_eq!(scrub_answer(&answer, 5, &BTreeSet::new(), &[]), None);
        let values = ["Bob".to_owned()];
        assert!(!scrub_answer("not json Bob", 5, &BTreeSet::new(), &values)
            .unwrap()
            .contains("Bob"));
    }
}
