//! Erasing a customer's personal data (docs/customers.md, "Export and erase"): what is personal
//! in the records that name a customer, and how the copies of it kept elsewhere (event
//! payloads, logs, stored idempotent answers) are scrubbed. The financial records stay: the
//! customer's id, its baskets, payments and orders keep their amounts and point at the
//! anonymous record the customer becomes.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::customers::customer::CustomerRecord;
use crate::sales::order::OrderRecord;

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
    /// What identifies the customer in free text: its name, email and phone.
    pub fn identifying(&self) -> Vec<String> {
        let mut values = vec![self.name.clone()];
        values.extend(self.email.clone());
        values.extend(self.phone.clone());
        values
    }

    /// Makes the customer anonymous: personal fields cleared, the name [`ERASED_NAME`],
    /// marketing consent withdrawn, deleted (if it was not) and marked erased. Gives the
    /// identifying values it held, to be looked for in free text.
    pub fn erase(&mut self, now: i64) -> Vec<String> {
        let held = self.identifying();
        self.name = ERASED_NAME.into();
        self.email = None;
        self.phone = None;
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
/// every identifying value left in its text replaced; `None` when nothing changed. A write's
/// answer holds, per saved object, `{"id": <id>, "json": "<the record as rendered>"}`.
pub fn scrub_answer(
    answer: &str,
    customer_id: i64,
    order_ids: &BTreeSet<i64>,
    values: &[String],
) -> Option<String> {
    let Ok(mut value) = serde_json::from_str::<Value>(answer) else {
        return scrub_text(answer, values);
    };
    let kind_of = |id| {
        if id == customer_id {
            "customer"
        } else if order_ids.contains(&id) {
            "order"
        } else {
            ""
        }
    };
    let saved = scrub_saved(&mut value, &kind_of);
    let quoted = scrub_strings(&mut value, values);
    (saved || quoted).then(|| value.to_string())
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

/// Replaces the values in every string of a JSON document (never in its keys).
fn scrub_strings(value: &mut Value, values: &[String]) -> bool {
    match value {
        Value::String(text) => match scrub_text(text, values) {
            Some(scrubbed) => {
                *text = scrubbed;
                true
            }
            None => false,
        },
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, v| scrub_strings(v, values) | changed),
        Value::Object(fields) => fields
            .values_mut()
            .fold(false, |changed, v| scrub_strings(v, values) | changed),
        _ => false,
    }
}

/// A log's JSON data with the values replaced in its strings (text that is not JSON, as text).
pub fn scrub_json_text(text: &str, values: &[String]) -> Option<String> {
    match serde_json::from_str::<Value>(text) {
        Ok(mut value) => scrub_strings(&mut value, values).then(|| value.to_string()),
        Err(_) => scrub_text(text, values),
    }
}

/// `text` with every whole-word occurrence of each value replaced by [`ERASED_TEXT`],
/// ignoring case (an email is the same address in any case); `None` when none occurs. Whole
/// words only: erasing "Ted" leaves "created", erasing "Anna" leaves "Annabel".
pub fn scrub_text(text: &str, values: &[String]) -> Option<String> {
    let mut out = text.to_owned();
    let mut changed = false;
    for value in values {
        if let Some(next) = replace_words(&out, value) {
            out = next;
            changed = true;
        }
    }
    changed.then_some(out)
}

fn replace_words(text: &str, needle: &str) -> Option<String> {
    if needle.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = 0;
    let mut before: Option<char> = None;
    for (at, c) in text.char_indices() {
        if at >= rest {
            if let Some(end) = match_at(text, at, needle) {
                let after = text[end..].chars().next();
                if !before.is_some_and(char::is_alphanumeric)
                    && !after.is_some_and(char::is_alphanumeric)
                {
                    out.push_str(&text[rest..at]);
                    out.push_str(ERASED_TEXT);
                    rest = end;
                }
            }
        }
        before = Some(c);
    }
    if rest == 0 {
        return None;
    }
    out.push_str(&text[rest..]);
    Some(out)
}

/// Where `needle` ends if `text` has it at byte `at`, comparing characters ignoring case.
fn match_at(text: &str, at: usize, needle: &str) -> Option<usize> {
    let mut chars = text[at..].char_indices();
    let mut end = at;
    for wanted in needle.chars() {
        let (i, c) = chars.next()?;
        if c != wanted && !c.to_lowercase().eq(wanted.to_lowercase()) {
            return None;
        }
        end = at + i + c.len_utf8();
    }
    Some(end)
}

/// The SQL `LIKE` patterns that find `value` in a lower-cased column or as written, and as
/// JSON text escapes it (`\` escapes): databases fold only ASCII letters, so a value beyond
/// ASCII is also looked for in its own case.
pub fn like_patterns(value: &str) -> Vec<String> {
    let mut patterns = vec![
        like(&value.to_lowercase()),
        like(value),
        like(&json_escaped(value).to_lowercase()),
    ];
    patterns.sort();
    patterns.dedup();
    patterns
}

/// `text` as it appears inside a JSON string (the escapes serde_json writes).
fn json_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn like(text: &str) -> String {
    let mut pattern = String::from("%");
    for c in text.chars() {
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
    use crate::testing::obj;
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
    fn free_text_loses_every_value_in_any_case_as_whole_words() {
        let values = searched(["Ann".into(), " ann@example.com ".into(), "Al".into()]);
        assert_eq!(values, ["ann@example.com", "Ann"]);
        let text = "called ANN@Example.com; ann said hi; Alan, Annabel";
        assert_eq!(
            scrub_text(text, &values).unwrap(),
            "called [erased]; [erased] said hi; Alan, Annabel"
        );
        assert_eq!(scrub_text("nothing here", &values), None);
        let ted = ["Ted".to_owned()];
        assert_eq!(scrub_text("created, completed", &ted), None);
        assert_eq!(
            scrub_text("İstanbul: ZOË ÜNAL paid", &["Zoë Ünal".into()]).unwrap(),
            "İstanbul: [erased] paid"
        );
        // Keys stay; strings lose the value.
        let data = r#"{"created":"by Ted","note":{"ted":"Ted"}}"#;
        assert_eq!(
            scrub_json_text(data, &ted).unwrap(),
            r#"{"created":"by [erased]","note":{"ted":"[erased]"}}"#
        );
        assert_eq!(
            like_patterns("A_b%\"c"),
            ["%A\\_b\\%\"c%", "%a\\_b\\%\"c%", "%a\\_b\\%\\\\\"c%"]
        );
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
