//! What the document promises of itself, checked on the generated value (no Node needed):
//! words on every operation and tag, nothing left inline, no component unused, every example
//! valid against the schema beside it.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::finish::operations;
use crate::prose::{DESCRIPTIONS, TAGS};

fn doc() -> Value {
    crate::document().clone()
}

#[test]
fn every_operation_has_a_summary_a_description_and_a_declared_tag() {
    let mut doc = doc();
    let tags: BTreeSet<&str> = TAGS.iter().map(|(name, _)| *name).collect();
    let mut used = BTreeSet::new();
    for (path, method, op) in operations(&mut doc) {
        let text = |key: &str| op.get(key).and_then(Value::as_str).unwrap_or_default();
        assert!(!text("summary").is_empty(), "{method} {path}: no summary");
        assert!(
            !text("description").is_empty(),
            "{method} {path}: no description"
        );
        let tag = op["tags"][0].as_str().unwrap_or_default().to_owned();
        assert!(
            tags.contains(tag.as_str()),
            "{method} {path}: tag {tag} is not declared"
        );
        used.insert(tag);
    }
    for tag in tags {
        assert!(
            used.contains(tag),
            "tag {tag} is declared but no operation has it"
        );
    }
}

#[test]
fn every_description_in_the_table_belongs_to_an_operation_without_one_of_its_own() {
    let built = serde_json::to_value(crate::build()).unwrap();
    let mut built = built;
    let own: BTreeSet<String> = operations(&mut built)
        .into_iter()
        .filter(|(_, _, op)| op.contains_key("description"))
        .map(|(_, _, op)| op["operationId"].as_str().unwrap_or_default().to_owned())
        .collect();
    let all: BTreeSet<String> = operations(&mut built)
        .into_iter()
        .map(|(_, _, op)| op["operationId"].as_str().unwrap_or_default().to_owned())
        .collect();
    for (id, _) in DESCRIPTIONS {
        assert!(all.contains(*id), "{id}: no such operation");
        assert!(!own.contains(*id), "{id}: its builder describes it already");
    }
}

/// Every parameter, body and answer is a named component.
#[test]
fn nothing_is_left_inline() {
    let mut doc = doc();
    for (path, method, op) in operations(&mut doc) {
        let op = Value::Object(op.clone());
        for parameter in op["parameters"].as_array().cloned().unwrap_or_default() {
            assert!(
                parameter.get("$ref").is_some(),
                "{method} {path}: inline {parameter}"
            );
        }
        let mut contents = vec![op["requestBody"]["content"].clone()];
        for (_, answer) in op["responses"].as_object().cloned().unwrap_or_default() {
            contents.push(answer["content"].clone());
        }
        for content in contents {
            for (media, body) in content.as_object().cloned().unwrap_or_default() {
                assert!(
                    body["schema"].get("$ref").is_some(),
                    "{method} {path} {media}: inline schema"
                );
            }
        }
    }
}

/// Every component is referred to (Redocly's `no-unused-components`).
#[test]
fn every_component_is_used() {
    let doc = doc();
    let text = serde_json::to_string(&doc).unwrap();
    for kind in ["schemas", "parameters", "responses"] {
        for name in doc["components"][kind].as_object().unwrap().keys() {
            let reference = format!("\"#/components/{kind}/{name}\"");
            assert!(
                text.contains(&reference),
                "components.{kind}.{name} is never used"
            );
        }
    }
}

#[test]
fn every_example_validates_against_its_schema() {
    let doc = doc();
    let attached = crate::examples::attached(&doc);
    assert!(!attached.is_empty(), "no example is attached");
    for (pointer, example) in attached {
        let problems = crate::examples::problems(&doc, &pointer, &example);
        assert!(
            problems.is_empty(),
            "the example at {pointer} does not fit its schema (record the examples again \
             with MERCHANTD_RECORD_EXAMPLES=1 cargo test --test api examples):\n  {}",
            problems.join("\n  ")
        );
    }
}

/// Each limit a written field keeps is its declaration's, shown where generators read it.
#[test]
fn a_declared_limit_is_the_documents() {
    let doc = doc();
    let name = &doc["components"]["schemas"]["ProductCreate"]["properties"]["name"];
    let declared = <domain::catalogue::product::ProductRecord as domain::record::Declared>::DECL
        .field("name")
        .and_then(|f| f.limits.max_len)
        .unwrap();
    assert_eq!(name["maxLength"], declared);
    let rate = doc["components"]["schemas"]["ProductInstanceCreate"]["properties"]["taxPercentage"]
        ["pattern"]
        .as_str()
        .unwrap();
    assert!(
        rate.contains(&format!("{{1,{}}}", domain::money::MAX_SCALE)),
        "{rate}"
    );
}

#[test]
fn the_version_header_names_its_values() {
    let doc = doc();
    assert_eq!(
        doc["components"]["schemas"]["ApiVersion"]["x-enum-varnames"],
        serde_json::json!(["V2_0", "V2"])
    );
}
