//! The last pass over the assembled document: what the builders leave inline becomes a named
//! component (every parameter under `components.parameters`, every body and answer schema
//! under `components.schemas`, named after its operation), the operations without words get
//! theirs from [`prose`](crate::prose), the tags are declared with what they group, the
//! version header's values get names, and the recorded examples are attached.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::prose::{DESCRIPTIONS, TAGS};

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

pub fn finish(mut doc: Value) -> Value {
    describe(&mut doc);
    hoist_parameters(&mut doc);
    hoist_contents(&mut doc);
    name_values(&mut doc);
    declare_tags(&mut doc);
    crate::examples::attach(&mut doc);
    doc
}

/// Every operation of the document: its path, method and object.
pub fn operations(doc: &mut Value) -> Vec<(String, String, &mut Map<String, Value>)> {
    let mut out = Vec::new();
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return out;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item.iter_mut() {
            if let (true, Some(op)) = (METHODS.contains(&method.as_str()), op.as_object_mut()) {
                out.push((path.clone(), method.clone(), op));
            }
        }
    }
    out
}

/// `Idempotency-Key` → `IdempotencyKey`, `listStore` → `ListStore`.
pub fn pascal(text: &str) -> String {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

fn operation_id(op: &Map<String, Value>) -> String {
    op.get("operationId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn describe(doc: &mut Value) {
    let words: BTreeMap<&str, &str> = DESCRIPTIONS.iter().copied().collect();
    for (_, _, op) in operations(doc) {
        if op.contains_key("description") {
            continue;
        }
        if let Some(text) = words.get(operation_id(op).as_str()) {
            op.insert("description".into(), json!(text));
        }
    }
}

fn components<'a>(doc: &'a mut Value, kind: &str) -> &'a mut Map<String, Value> {
    let components = doc
        .as_object_mut()
        .map(|d| d.entry("components").or_insert_with(|| json!({})))
        .and_then(Value::as_object_mut);
    let Some(components) = components else {
        unreachable!("the document is an object")
    };
    match components
        .entry(kind)
        .or_insert_with(|| json!({}))
        .as_object_mut()
    {
        Some(map) => map,
        None => unreachable!("components.{kind} is an object"),
    }
}

/// A name for `value` under `taken`: `preferred` if free (or already naming the same value),
/// else `fallback`.
fn place(
    taken: &mut Map<String, Value>,
    value: Value,
    preferred: String,
    fallback: String,
) -> String {
    for name in [preferred, fallback.clone()] {
        match taken.get(&name) {
            Some(existing) if *existing == value => return name,
            Some(_) => continue,
            None => {
                taken.insert(name.clone(), value);
                return name;
            }
        }
    }
    let mut n = 2;
    while taken.contains_key(&format!("{fallback}{n}")) {
        n += 1;
    }
    let name = format!("{fallback}{n}");
    taken.insert(name.clone(), value);
    name
}

fn reference(kind: &str, name: &str) -> Value {
    json!({ "$ref": format!("#/components/{kind}/{name}") })
}

/// Every inline parameter becomes `components.parameters.<Name>`: the header's own name, or,
/// where another operation's parameter of that name differs, the operation's name before it.
fn hoist_parameters(doc: &mut Value) {
    let mut taken = components(doc, "parameters").clone();
    for (_, _, op) in operations(doc) {
        let id = operation_id(op);
        let Some(parameters) = op.get_mut("parameters").and_then(Value::as_array_mut) else {
            continue;
        };
        for parameter in parameters.iter_mut() {
            if parameter.get("$ref").is_some() {
                continue;
            }
            let name = parameter["name"].as_str().unwrap_or_default();
            let preferred = pascal(name);
            let fallback = format!("{}{preferred}", pascal(&id));
            let named = place(&mut taken, parameter.take(), preferred, fallback);
            *parameter = reference("parameters", &named);
        }
    }
    *components(doc, "parameters") = taken;
}

/// Every inline body or answer schema becomes `components.schemas.<Operation>Body` or
/// `<Operation>Answer` (`<Operation><status>Answer` beside the first success, with the media
/// type's name after it beside the first media type).
fn hoist_contents(doc: &mut Value) {
    let mut taken = components(doc, "schemas").clone();
    for (_, _, op) in operations(doc) {
        let id = pascal(&operation_id(op));
        if let Some(content) = op
            .get_mut("requestBody")
            .and_then(|b| b.get_mut("content"))
            .and_then(Value::as_object_mut)
        {
            hoist_content(&mut taken, content, &format!("{id}Body"));
        }
        let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) else {
            continue;
        };
        let mut first_success = true;
        for (status, response) in responses.iter_mut() {
            let Some(content) = response.get_mut("content").and_then(Value::as_object_mut) else {
                continue;
            };
            let name = match (status.starts_with('2'), first_success) {
                (true, true) => {
                    first_success = false;
                    format!("{id}Answer")
                }
                _ => format!("{id}{status}Answer"),
            };
            hoist_content(&mut taken, content, &name);
        }
    }
    *components(doc, "schemas") = taken;
}

fn hoist_content(taken: &mut Map<String, Value>, content: &mut Map<String, Value>, name: &str) {
    for (i, (media, body)) in content.iter_mut().enumerate() {
        let Some(schema) = body.get_mut("schema") else {
            continue;
        };
        if schema.get("$ref").is_some() {
            continue;
        }
        let name = match i {
            0 => name.to_owned(),
            _ => format!("{name}{}", pascal(media.split('/').nth(1).unwrap_or(media))),
        };
        let fallback = name.clone();
        let named = place(taken, schema.take(), name, fallback);
        *schema = reference("schemas", &named);
    }
}

/// Names for the values of the enums generators would otherwise number (`VALUE_0`).
fn name_values(doc: &mut Value) {
    let schemas = components(doc, "schemas");
    let accepted = api::http::version::ACCEPTED;
    if let Some(version) = schemas.get_mut("ApiVersion").and_then(Value::as_object_mut) {
        version.insert(
            "x-enum-varnames".into(),
            json!(accepted.iter().map(|(_, name)| *name).collect::<Vec<_>>()),
        );
    }
    if let Some(boolean) = schemas
        .get_mut("HeaderBoolean")
        .and_then(Value::as_object_mut)
    {
        boolean.insert("x-enum-varnames".into(), json!(["TRUE", "FALSE"]));
    }
}

fn declare_tags(doc: &mut Value) {
    let tags: Vec<Value> = TAGS
        .iter()
        .map(|(name, description)| json!({ "name": name, "description": description }))
        .collect();
    if let Some(doc) = doc.as_object_mut() {
        doc.insert("tags".into(), Value::Array(tags));
    }
}
