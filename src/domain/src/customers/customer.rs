//! Who bought: a merchant's customers (docs/customers.md). A basket may name one; the search
//! header finds them by the first letters of a name, an email or a phone number.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::fields::{Fields, Shape};
use merchantd_macros::Record;

#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(table = "customers", event = "customer")]
pub struct CustomerRecord {
    pub id: i64,
    #[field(max_len = 200, required)]
    pub name: String,
    /// One `@`, a domain with a dot, no spaces.
    #[field(max_len = 254)]
    pub email: Option<String>,
    /// Digits, spaces and `+ - ( ) .`, at least one digit.
    #[field(max_len = 40)]
    pub phone: Option<String>,
    #[field(max_len = 2000)]
    pub note: Option<String>,
    /// Whether the customer agreed to marketing messages: `false` until they say so; a till
    /// asks, the merchant keeps the answer.
    pub marketing_consent: bool,
    /// The merchant's own fields (`{"loyaltyTier": "gold"}`): at most 50, keys of 1 to 60
    /// characters, text values of at most 500; `null` clears them, an object replaces them
    /// all.
    #[field(kind = "json")]
    pub attributes: Option<Attributes>,
    /// When it was created.
    #[field(read_only)]
    pub active_date: Option<i64>,
    /// When it was deleted.
    pub delete_date: Option<i64>,
    /// When its personal data was erased (`POST /customer/erase`); it is deleted since.
    pub erase_date: Option<i64>,
}

/// A customer's custom attributes, key → text.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Attributes(pub BTreeMap<String, String>);

crate::json_cell!(Attributes, Attributes, "CustomerAttributes");

/// The fields customer writes accept (see [`Shape`]).
pub const SHAPE: Shape = Shape::of::<CustomerRecord>();

/// At most this many attributes, keys of at most 60 characters, values of at most 500.
const MAX_ATTRIBUTES: usize = 50;

impl CustomerRecord {
    crate::blank!(|id, now|);

    /// Applies written fields (fields left out keep their value).
    pub fn apply(mut self, mut fields: Map<String, Value>) -> Result<Self, Vec<String>> {
        let attributes = fields.shift_remove("attributes");
        let mut f = Fields::declared::<Self>(fields);
        let name = f.required_text("name", &self.name);
        self.email = f.text("email").apply(self.email);
        self.phone = f.text("phone").apply(self.phone);
        self.note = f.text("note").apply(self.note);
        if let Some(consent) = f.boolean("marketingConsent") {
            self.marketing_consent = consent;
        }
        if let Some(email) = self.email.as_deref().filter(|e| !is_email(e)) {
            f.reject("email", format!("\"{email}\" is not an email address."));
        }
        if let Some(phone) = self.phone.as_deref().filter(|p| !is_phone(p)) {
            f.reject(
                "phone",
                format!("\"{phone}\" is not a phone number (digits, spaces, + - ( ) and dots)."),
            );
        }
        match attributes.map(read_attributes) {
            None => {}
            Some(Ok(a)) => self.attributes = a,
            Some(Err(why)) => f.reject("attributes", why),
        }
        f.require("name", &name);
        f.finish()?;
        self.name = name.unwrap_or_default();
        Ok(self)
    }

    /// What the search looks up: the name, each of its words and the email in lower case, and
    /// the phone's digits. Every customer [`matches`](Self::matches) finds starts one of them
    /// with one of [`search_prefixes`].
    pub fn search_keys(&self) -> Vec<String> {
        let mut keys = vec![self.name.to_lowercase()];
        let words: Vec<&str> = self.name.split_whitespace().collect();
        if words.len() > 1 {
            keys.extend(words.iter().map(|w| w.to_lowercase()));
        }
        keys.extend(self.email.as_deref().map(str::to_lowercase));
        keys.extend(
            self.phone
                .as_deref()
                .map(|p| p.chars().filter(char::is_ascii_digit).collect::<String>()),
        );
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// Whether the search header's `text` starts the name (or one of its words), the email or
    /// the phone number (its digits), ignoring case.
    pub fn matches(&self, text: &str) -> bool {
        let text = text.trim().to_lowercase();
        if text.is_empty() {
            return true;
        }
        let starts = |field: &str| field.to_lowercase().starts_with(&text);
        // A phone is searched by its digits, and only by text that looks like a number.
        let digits: String = if is_phone(&text) {
            text.chars().filter(char::is_ascii_digit).collect()
        } else {
            String::new()
        };
        starts(&self.name)
            || self.name.split_whitespace().any(starts)
            || self.email.as_deref().is_some_and(starts)
            || (!digits.is_empty()
                && self.phone.as_deref().is_some_and(|p| {
                    p.chars()
                        .filter(char::is_ascii_digit)
                        .collect::<String>()
                        .starts_with(&digits)
                }))
    }
}

/// The key prefixes a search text looks up (see [`CustomerRecord::search_keys`]): the text in
/// lower case, and its digits when it looks like a phone number.
pub fn search_prefixes(text: &str) -> Vec<String> {
    let text = text.trim().to_lowercase();
    let mut prefixes = vec![text.clone()];
    if is_phone(&text) {
        prefixes.push(text.chars().filter(char::is_ascii_digit).collect());
    }
    prefixes
}

/// `null` clears; an object of text values replaces them all.
fn read_attributes(value: Value) -> Result<Option<Attributes>, String> {
    let entries = match value {
        Value::Null => return Ok(None),
        Value::Object(entries) => entries,
        _ => return Err("must be an object of text values.".into()),
    };
    if entries.len() > MAX_ATTRIBUTES {
        return Err(format!("at most {MAX_ATTRIBUTES} attributes."));
    }
    let mut attributes = BTreeMap::new();
    for (key, value) in entries {
        if key.is_empty() || key.chars().count() > 60 || key.contains('\0') {
            return Err(format!("\"{key}\": a key has 1 to 60 characters."));
        }
        match value {
            Value::String(text) if text.chars().count() <= 500 && !text.contains('\0') => {
                attributes.insert(key, text);
            }
            _ => return Err(format!("{key}: must be text of at most 500 characters.")),
        }
    }
    Ok(Some(Attributes(attributes)))
}

/// One `@` between a non-empty local part and a domain with a dot, no spaces.
fn is_email(text: &str) -> bool {
    match text.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !domain.contains('@')
                && !text.chars().any(char::is_whitespace)
        }
        None => false,
    }
}

fn is_phone(text: &str) -> bool {
    text.chars().any(|c| c.is_ascii_digit())
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || " +-().".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::testing::obj;

    #[test]
    fn a_customer_needs_a_name_and_checks_its_contacts() {
        let errs = CustomerRecord::new(1, 0).apply(obj(json!({}))).unwrap_err();
        assert_eq!(errs, vec!["name: required field is missing."]);
        let errs = CustomerRecord::new(1, 0)
            .apply(obj(
                json!({"name": "Ann", "email": "ann at home", "phone": "call me",
                "attributes": {"tier": 3}}),
            ))
            .unwrap_err();
        assert_eq!(errs.len(), 3, "{errs:?}");
        let c = CustomerRecord::new(1, 0)
            .apply(obj(json!({"name": "Ann Lee", "email": "Ann@Example.com",
                "phone": "+44 (0)20 7946-0018", "attributes": {"tier": "gold"}})))
            .unwrap();
        assert_eq!(c.attributes.as_ref().unwrap().0["tier"], "gold");
        let c = c
            .apply(obj(json!({"marketingConsent": true, "attributes": null})))
            .unwrap();
        assert!(c.marketing_consent && c.attributes.is_none() && c.email.is_some());
    }

    #[test]
    fn the_search_reads_the_first_letters_of_names_emails_and_phones() {
        let c = CustomerRecord::new(1, 0)
            .apply(obj(json!({"name": "Ann Lee", "email": "ann@example.com",
                "phone": "+44 20 7946 0018"})))
            .unwrap();
        let keys = c.search_keys();
        for hit in ["ann", "LEE", "ann@ex", "+44 20", "4420794", " an "] {
            assert!(c.matches(hit), "{hit}");
            // The index finds what the rule matches.
            let prefixes = search_prefixes(hit);
            assert!(
                keys.iter()
                    .any(|k| prefixes.iter().any(|p| k.starts_with(p.as_str()))),
                "{hit}"
            );
        }
        for miss in ["nn", "example", "0018", "bob", "flat 4", "ann 4"] {
            assert!(!c.matches(miss), "{miss}");
        }
    }
}
