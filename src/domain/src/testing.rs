//! What the domain's unit tests share.

use serde_json::{Map, Value};

/// The object a test wrote with `json!({...})`, as a write's fields.
pub fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(map) => map,
        other => panic!("a test object must be a JSON object, not {other}"),
    }
}

/// Fails unless each needle is part of one of the problems a write was refused with.
pub fn assert_named(problems: &[String], needles: &[&str]) {
    for needle in needles {
        assert!(
            problems.iter().any(|p| p.contains(needle)),
            "{needle} in {problems:?}"
        );
    }
}
