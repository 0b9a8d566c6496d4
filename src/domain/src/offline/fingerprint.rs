//! The digest of a body a till sent under its `clientId` (an offline sale, a basket or a
//! payment made online): a record remembers the digest of the body it was made from, so the
//! same `clientId` sent again with the same body answers that record, and with another body is
//! refused (docs/offline.md).
//!
//! A `clientId` is a UUID, read in any case and kept in lower case, so the digest reads it in
//! lower case too: the same sale sent again with its id in another case is the same sale.
//! Records stored before that kept the digest of the body verbatim, which is still accepted.

use serde_json::{Map, Value};

use super::sync::client_key;

/// The digests a sale is compared with: today's, and the body's verbatim one when its
/// `clientId`s were not sent in the form they are kept in (else the two are the same).
#[derive(Clone, Debug, PartialEq)]
pub struct Fingerprint {
    /// What a record made from this body stores.
    pub digest: String,
    verbatim: Option<String>,
}

impl Fingerprint {
    pub fn of(fields: &Map<String, Value>) -> Self {
        let digest = fingerprint(fields);
        let verbatim = (!client_ids_as_kept(fields)).then(|| verbatim(fields));
        Self { digest, verbatim }
    }

    /// Whether a record that stores `stored` was made from this body.
    pub fn made(&self, stored: Option<&str>) -> bool {
        stored.is_some_and(|s| s == self.digest || self.verbatim.as_deref() == Some(s))
    }
}

/// Whether the record that stores `stored` was made from `fields`: by today's digest, or by
/// the verbatim one a record stored before `clientId`s were read in lower case kept (computed
/// only when today's does not match).
pub fn made_from(stored: &str, fields: &Map<String, Value>) -> bool {
    stored == fingerprint(fields) || stored == verbatim(fields)
}

/// A digest of a record as a client sent it: SHA-256 of its JSON with every object's keys
/// sorted and every `clientId` (the record's, its lines') in the form it is kept in, so the
/// same body sent again, in whatever key order and whatever case of its ids, has the same
/// digest.
pub fn fingerprint(fields: &Map<String, Value>) -> String {
    digest(fields, true)
}

/// The digest of the body verbatim, `clientId`s as sent.
fn verbatim(fields: &Map<String, Value>) -> String {
    digest(fields, false)
}

fn digest(fields: &Map<String, Value>, client_ids_kept: bool) -> String {
    let mut text = String::new();
    canonical_object(fields, client_ids_kept, &mut text);
    crate::crypto::sha256_hex(&text)
}

/// Whether every `clientId` in the body is already in the form it is kept in.
fn client_ids_as_kept(fields: &Map<String, Value>) -> bool {
    fields.iter().all(|(key, value)| match value {
        Value::String(s) if key == "clientId" => client_key(value).as_deref() == Some(s),
        Value::Object(map) => client_ids_as_kept(map),
        Value::Array(items) => items.iter().all(|item| match item {
            Value::Object(map) => client_ids_as_kept(map),
            _ => true,
        }),
        _ => true,
    })
}

fn canonical_object(map: &Map<String, Value>, client_ids_kept: bool, out: &mut String) {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by_key(|(key, _)| *key);
    out.push('{');
    for (i, (key, value)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::String(key.clone()).to_string());
        out.push(':');
        match value {
            Value::String(_) if client_ids_kept && key == "clientId" => {
                out.push_str(&Value::String(client_key(value).unwrap_or_default()).to_string())
            }
            _ => canonical(value, client_ids_kept, out),
        }
    }
    out.push('}');
}

fn canonical(value: &Value, client_ids_kept: bool, out: &mut String) {
    match value {
        Value::Object(map) => canonical_object(map, client_ids_kept, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, client_ids_kept, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn f(v: Value) -> String {
        fingerprint(v.as_object().unwrap())
    }

    #[test]
    fn key_order_does_not_change_the_fingerprint_but_a_value_does() {
        let a = json!({"b": 1, "a": {"y": [1, 2], "x": "s"}});
        let b = json!({"a": {"x": "s", "y": [1, 2]}, "b": 1});
        let c = json!({"a": {"x": "s", "y": [2, 1]}, "b": 1});
        assert_eq!(f(a.clone()), f(b));
        assert_ne!(f(a), f(c));
    }

    #[test]
    fn a_client_ids_case_does_not_change_the_fingerprint_but_other_text_does() {
        let sale = |id: &str, line: &str, note: &str| {
            json!({"clientId": id, "note": note,
                "basketProducts": {"a": {"clientId": line, "productId": 9, "quantity": 1}}})
        };
        let (upper, lower) = (
            "0D9C6A1E-4F1B-4C55-9A43-2C8D2F0A7E11",
            "0d9c6a1e-4f1b-4c55-9a43-2c8d2f0a7e11",
        );
        let (line_upper, line_lower) = (
            "6F9619FF-8B86-D011-B42D-00CF4FC964FF",
            "6f9619ff-8b86-d011-b42d-00cf4fc964ff",
        );
        let kept = f(sale(lower, line_lower, "a"));
        assert_eq!(f(sale(upper, line_lower, "a")), kept, "the sale's id");
        assert_eq!(f(sale(lower, line_upper, "a")), kept, "a line's id");
        assert_eq!(f(sale(upper, line_upper, "a")), kept, "both");
        assert_ne!(f(sale(lower, line_lower, "A")), kept, "another note");
    }

    #[test]
    fn a_record_stored_with_the_verbatim_digest_is_still_made_from_its_body() {
        let body = json!({"clientId": "0D9C6A1E-4F1B-4C55-9A43-2C8D2F0A7E11", "note": "a"});
        let body = body.as_object().unwrap();
        let old = verbatim(body);
        assert_ne!(old, fingerprint(body));
        assert!(made_from(&old, body));
        assert!(made_from(&fingerprint(body), body));
        assert!(Fingerprint::of(body).made(Some(&old)));
        assert!(Fingerprint::of(body).made(Some(&fingerprint(body))));

        let other = json!({"clientId": "0D9C6A1E-4F1B-4C55-9A43-2C8D2F0A7E11", "note": "b"});
        assert!(!made_from(&old, other.as_object().unwrap()));
        assert!(!Fingerprint::of(other.as_object().unwrap()).made(Some(&old)));
        assert!(!Fingerprint::of(body).made(None));
        // A body sent in the kept form has one digest: nothing else is computed.
        let lower = json!({"clientId": "0d9c6a1e-4f1b-4c55-9a43-2c8d2f0a7e11", "note": "a"});
        assert_eq!(Fingerprint::of(lower.as_object().unwrap()).verbatim, None);
    }
}
