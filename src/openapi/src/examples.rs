//! The document's examples: real exchanges with the server, recorded by the integration tests
//! (`tests/api/examples.rs` writes `examples.json` beside this crate's manifest with
//! `MERCHANTD_RECORD_EXAMPLES=1`), each attached to its operation's body and answer. A test
//! below validates every attached example against the schema beside it.

use serde_json::Value;

/// One recorded exchange: the operation's path template, method and status, what was sent
/// (a JSON body) and what came back.
struct Exchange {
    method: String,
    path: String,
    status: String,
    request: Option<Value>,
    response: Option<Value>,
}

fn recorded() -> Vec<Exchange> {
    let parsed: Vec<Value> =
        serde_json::from_str(include_str!("../examples.json")).unwrap_or_default();
    parsed
        .into_iter()
        .map(|e| Exchange {
            method: e["method"]
                .as_str()
                .unwrap_or_default()
                .to_ascii_lowercase(),
            path: e["path"].as_str().unwrap_or_default().to_owned(),
            status: e["status"].as_u64().unwrap_or_default().to_string(),
            request: Some(e["request"].clone()).filter(|v| !v.is_null()),
            response: Some(e["response"].clone()).filter(|v| !v.is_null()),
        })
        .collect()
}

/// Sets `example` on a JSON content object that has none yet.
fn set_example(content: Option<&mut Value>, example: &Value) {
    if let Some(json) = content
        .and_then(|c| c.get_mut("application/json"))
        .and_then(Value::as_object_mut)
    {
        json.entry("example").or_insert_with(|| example.clone());
    }
}

pub fn attach(doc: &mut Value) {
    for exchange in recorded() {
        let Some(op) = doc
            .get_mut("paths")
            .and_then(|p| p.get_mut(&exchange.path))
            .and_then(|item| item.get_mut(&exchange.method))
        else {
            continue;
        };
        if let Some(request) = &exchange.request {
            set_example(
                op.get_mut("requestBody").and_then(|b| b.get_mut("content")),
                request,
            );
        }
        let Some(response) = &exchange.response else {
            continue;
        };
        let Some(answer) = op
            .get_mut("responses")
            .and_then(|r| r.get_mut(&exchange.status))
        else {
            continue;
        };
        match answer
            .get("$ref")
            .and_then(Value::as_str)
            .map(str::to_owned)
        {
            // A shared answer (an error) takes the first example recorded for it.
            Some(shared) => {
                let name = shared.rsplit('/').next().unwrap_or_default().to_owned();
                let component = doc.pointer_mut(&format!("/components/responses/{name}/content"));
                set_example(component, response);
            }
            None => set_example(answer.get_mut("content"), response),
        }
    }
}

#[cfg(test)]
/// Every `example` of the document beside a schema: the pointer to that schema and the
/// example.
pub fn attached(doc: &Value) -> Vec<(String, Value)> {
    fn walk(value: &Value, at: &str, out: &mut Vec<(String, Value)>) {
        match value {
            Value::Object(map) => {
                if let (Some(example), Some(_)) = (map.get("example"), map.get("schema")) {
                    out.push((format!("{at}/schema"), example.clone()));
                }
                for (key, child) in map {
                    let key = key.replace('~', "~0").replace('/', "~1");
                    walk(child, &format!("{at}/{key}"), out);
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    walk(child, &format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(doc, "", &mut out);
    out
}

/// Whether `example` fits the schema at `pointer` (`$ref`s resolved in `doc`): the problems
/// found.
#[cfg(test)]
pub fn problems(doc: &Value, pointer: &str, example: &Value) -> Vec<String> {
    let mut root = doc.clone();
    root["$ref"] = Value::String(format!("#{pointer}"));
    match jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&root)
    {
        Ok(validator) => validator
            .iter_errors(example)
            .take(5)
            .map(|e| format!("at {}: {e}", e.instance_path()))
            .collect(),
        Err(e) => vec![format!("the schema does not compile: {e}")],
    }
}
