//! Write bodies (DESIGN §6): `{"<plural>": {"<clientKey>": {...}, ...}}` as JSON, or the legacy
//! form with one `postBody` field holding that JSON.

use actix_web::http::header;
use actix_web::HttpRequest;
use serde_json::Value;

use crate::http::error::ApiError;
use domain::batch::BatchObject;

/// The body's media type, lower-cased and without parameters (`text/csv; charset=utf-8` is
/// `text/csv`); empty when none is sent.
pub fn media_type(req: &HttpRequest) -> String {
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The request's JSON document, from a JSON body or a `postBody` form.
pub fn json_document(req: &HttpRequest, body: &[u8]) -> Result<Value, ApiError> {
    let mime = media_type(req);
    let text: std::borrow::Cow<'_, [u8]> = match mime.as_str() {
        "application/json" => body.into(),
        "application/x-www-form-urlencoded" => {
            let fields: Vec<(String, String)> = serde_urlencoded::from_bytes(body)
                .map_err(|_| ApiError::bad_body("The form body could not be decoded."))?;
            let post_body = fields
                .into_iter()
                .find(|(k, _)| k == "postBody")
                .map(|(_, v)| v)
                .ok_or_else(|| ApiError::bad_body("postBody: the form field is missing."))?;
            post_body.into_bytes().into()
        }
        _ => {
            return Err(ApiError::UnsupportedMediaType {
                detail: "Content-Type: send application/json (or a postBody form).".into(),
            })
        }
    };
    serde_json::from_slice(&text)
        .map_err(|e| ApiError::bad_body(format!("The body is not valid JSON: {e}.")))
}

/// The top-level keys the old Shopwave client libraries send in place of the plural, as
/// (plural, old key). Their value is a keyed batch as usual or one bare object.
const OLD_KEYS: [(&str, &str); 2] = [
    ("suppliers", "supplier"),
    ("stockReconciliations", "stockReconcile"),
];

/// The old clients' key of `plural` when the document holds it alone (asked before looking
/// up whether the caller may use the old conventions, so a usual body never pays for it).
pub fn old_key(document: &Value, plural: &str) -> Option<&'static str> {
    let top = document.as_object()?;
    let (_, old) = OLD_KEYS.iter().find(|(p, _)| *p == plural)?;
    (top.len() == 1 && top.contains_key(*old)).then_some(*old)
}

/// The document with the old key renamed to `plural`; one bare object (a value holding
/// anything but objects) becomes a batch of one under the client key `"0"`.
pub fn from_old_key(mut document: Value, old: &str, plural: &str) -> Value {
    let Some(value) = document.as_object_mut().and_then(|top| top.remove(old)) else {
        return document;
    };
    let keyed = value
        .as_object()
        .is_some_and(|o| !o.is_empty() && o.values().all(Value::is_object));
    let batch = if keyed || !value.is_object() {
        value
    } else {
        serde_json::json!({ "0": value })
    };
    serde_json::json!({ plural: batch })
}

/// The objects under `plural`, in the order sent. More than `max` is a 413 and nothing is
/// looked at further.
pub fn objects(document: Value, plural: &str, max: usize) -> Result<Vec<BatchObject>, ApiError> {
    let shape = || {
        ApiError::bad_body(format!(
            "The body must be {{\"{plural}\": {{\"<clientKey>\": {{...}}}}}}."
        ))
    };
    let Value::Object(mut top) = document else {
        return Err(shape());
    };
    if let Some(other) = top.keys().find(|k| k.as_str() != plural) {
        return Err(ApiError::bad_body(format!(
            "{other}: unexpected top-level field; the body holds only \"{plural}\"."
        )));
    }
    let Some(Value::Object(batch)) = top.remove(plural) else {
        return Err(shape());
    };
    if batch.is_empty() {
        return Err(ApiError::bad_body(format!(
            "{plural}: the batch holds no object."
        )));
    }
    if batch.len() > max {
        return Err(ApiError::PayloadTooLarge {
            detail: format!(
                "{} objects in one request; at most {max} are allowed.",
                batch.len()
            ),
        });
    }
    Ok(batch
        .into_iter()
        .map(|(key, value)| match value {
            Value::Object(fields) => match domain::fields::nul_at(&fields) {
                // PostgreSQL stores no NUL in text (SQLite would): refused alike on both.
                Some(path) => BatchObject::new(
                    key,
                    Err(format!(
                        "{path}: must not contain the NUL character (U+0000)."
                    )),
                ),
                None => BatchObject::new(key, Ok(fields)),
            },
            _ => BatchObject::new(key, Err("the object must be a JSON object.".to_owned())),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_old_clients_keys_become_the_plural() {
        let single = serde_json::json!({"stockReconcile": {"storeId": 1, "products": {"7": {"quantity": 2}}}});
        let old = old_key(&single, "stockReconciliations").expect("an old key");
        let renamed = from_old_key(single, old, "stockReconciliations");
        assert_eq!(renamed["stockReconciliations"]["0"]["storeId"], 1);
        let keyed =
            serde_json::json!({"supplier": {"a": {"name": "Beans"}, "b": {"name": "Milk"}}});
        let renamed = from_old_key(keyed, "supplier", "suppliers");
        assert_eq!(renamed["suppliers"]["b"]["name"], "Milk");
        let bare = serde_json::json!({"supplier": {"name": "Beans"}});
        assert_eq!(
            from_old_key(bare, "supplier", "suppliers")["suppliers"]["0"]["name"],
            "Beans"
        );
        assert_eq!(
            old_key(&serde_json::json!({"suppliers": {}}), "suppliers"),
            None
        );
        assert_eq!(
            old_key(&serde_json::json!({"supplier": {}, "x": 1}), "suppliers"),
            None
        );
        assert_eq!(
            old_key(&serde_json::json!({"supplier": {}}), "stores"),
            None
        );
    }
    use serde_json::{json, Map};

    #[test]
    fn objects_keep_their_client_keys() {
        let got = objects(
            json!({"categories": {"hot": {"title": "Hot"}, "bad": 3}}),
            "categories",
            200,
        )
        .unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].key, "hot");
        assert!(got[0].fields.is_ok());
        assert!(got[1].fields.is_err());
    }

    #[test]
    fn wrong_shapes_are_400_and_too_many_is_413() {
        assert!(objects(json!([1]), "categories", 200).is_err());
        assert!(objects(json!({"products": {}}), "categories", 200).is_err());
        let many: Map<String, Value> = (0..201).map(|i| (format!("o{i}"), json!({}))).collect();
        let err = objects(json!({"categories": many}), "categories", 200).unwrap_err();
        assert!(matches!(err, ApiError::PayloadTooLarge { .. }));
    }
}

#[cfg(test)]
mod props {
    use actix_web::test::TestRequest;
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    /// Arbitrary JSON, a few levels deep.
    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            ".{0,20}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                proptest::collection::btree_map(".{0,10}", inner, 0..8)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_document_is_objects_or_a_clear_refusal(document in any_json(), max in 1usize..10) {
            match objects(document, "products", max) {
                Ok(objects) => prop_assert!(!objects.is_empty() && objects.len() <= max),
                Err(ApiError::BadRequest { .. } | ApiError::PayloadTooLarge { .. }) => {}
                Err(other) => prop_assert!(false, "unexpected {other:?}"),
            }
        }

        #[test]
        fn any_body_bytes_are_a_document_or_a_4xx(body in proptest::collection::vec(any::<u8>(), 0..200), form in any::<bool>()) {
            let content_type = if form { "application/x-www-form-urlencoded" } else { "application/json" };
            let req = TestRequest::default()
                .insert_header((header::CONTENT_TYPE, content_type))
                .to_http_request();
            match json_document(&req, &body) {
                Ok(_) | Err(ApiError::BadRequest { .. }) => {}
                Err(other) => prop_assert!(false, "unexpected {other:?}"),
            }
        }
    }
}
