//! Every limit `docs/openapi.json` states holds at its boundary: each is sent at the limit
//! (not refused for it) and one past it (refused, naming what was over). The limits are read
//! from the document, not listed here: a limit the document gains without a case here fails
//! the test, and so does a limit the server keeps at another value than the document says.
//!
//! Kinds of limit: a written field's `maxLength`, `minimum` and `maximum` (through an update
//! of a record the scenario of `examples.rs` left open, or a create for what only a create
//! writes); a header's `x-limit` (items of a list, characters, digits, a page's maximum); a
//! body's objects (`maxProperties`) and items (`maxItems`).

use std::collections::BTreeSet;
use std::path::Path;

use reqwest::{Method, StatusCode};
use serde_json::{json, Map, Value};

use crate::contract::Checked;
use crate::examples::{scenario, Open, Recorder};
use crate::helpers::{spawn_app, Backend, TestApp};
use crate::operator::{acme, operator_token};

fn document() -> Value {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/openapi.json"))
            .expect("docs/openapi.json");
    serde_json::from_str(&text).expect("JSON")
}

fn schemas(doc: &Value) -> &Map<String, Value> {
    doc["components"]["schemas"].as_object().expect("schemas")
}

fn ref_name(value: &Value) -> Option<&str> {
    value["$ref"].as_str().and_then(|r| r.rsplit('/').next())
}

/// One limit of a written field: the record's schema base name (`ProductInstance`), the
/// field, the keyword and its value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct FieldLimit {
    record: String,
    field: String,
    keyword: &'static str,
    value: i64,
}

/// The limits of the fields of every `<Record>Create` and `<Record>Update` schema (an
/// update's are a create's, so each is one limit).
fn field_limits(doc: &Value) -> BTreeSet<FieldLimit> {
    let mut out = BTreeSet::new();
    for (name, schema) in schemas(doc) {
        let Some(record) = name
            .strip_suffix("Create")
            .or_else(|| name.strip_suffix("Update"))
        else {
            continue;
        };
        // An update's `id` names the record: its minimum is an id's, sent by every write.
        let props = schema["properties"].as_object().into_iter().flatten();
        for (field, prop) in props.filter(|(field, _)| field.as_str() != "id") {
            let alternatives = prop["oneOf"].as_array().cloned().unwrap_or_default();
            for part in std::iter::once(prop).chain(alternatives.iter()) {
                for keyword in ["maxLength", "maximum", "minimum", "maxItems"] {
                    if let Some(value) = part[keyword].as_f64() {
                        out.insert(FieldLimit {
                            record: record.to_owned(),
                            field: field.clone(),
                            keyword,
                            value: value as i64,
                        });
                    }
                }
            }
        }
    }
    out
}

/// A value of the field's kind at `n` characters, shaped as the field's validator wants where
/// it has a shape (an email, a URL, a UUID, a country).
fn text_of(field: &str, n: usize) -> String {
    let pad = |prefix: &str, suffix: &str| {
        let fill = n.saturating_sub(prefix.len() + suffix.len());
        format!("{prefix}{}{suffix}", "a".repeat(fill))
    };
    match field {
        f if f.to_ascii_lowercase().contains("email") && n > 12 => pad("", "@example.com"),
        f if f.to_ascii_lowercase().contains("phone") => "1".repeat(n),
        "url" => pad("https://hooks.example.com/", ""),
        "clientId" => pad("0d9c6a1e-4f1b-4c55-9a43-", &"0".repeat(12.min(n))),
        "countryId" => ["G", "GB", "GBR"]
            .get(n.saturating_sub(1))
            .copied()
            .unwrap_or("GBRX")
            .to_owned(),
        _ => "a".repeat(n),
    }
}

/// The value at a limit (`past` = false) or one past it.
fn value_at(limit: &FieldLimit, past: bool) -> Value {
    let step = i64::from(past);
    match limit.keyword {
        "maxLength" => json!(text_of(&limit.field, (limit.value + step) as usize)),
        "maximum" => json!(limit.value + step),
        "minimum" => json!(limit.value - step),
        other => panic!("no case for {other} of {}.{}", limit.record, limit.field),
    }
}

/// Where a record's writes go: its own path (top-level) or its parent's, under the parent's
/// property holding it.
fn placement(doc: &Value, record: &str) -> (String, Option<String>) {
    for (path, item) in doc["paths"].as_object().unwrap() {
        let body = &item["post"]["requestBody"]["content"]["application/json"]["schema"];
        if ref_name(body) == Some(&format!("{record}WriteBody")) {
            return (path.clone(), None);
        }
    }
    for (name, schema) in schemas(doc) {
        let Some(parent) = name.strip_suffix("Create") else {
            continue;
        };
        for (field, prop) in schema["properties"].as_object().into_iter().flatten() {
            let child = ref_name(&prop["additionalProperties"]);
            if child == Some(&format!("{record}Write")) || child == Some(&format!("{record}Create"))
            {
                let (path, _) = placement(doc, parent);
                return (path, Some(field.clone()));
            }
        }
    }
    panic!("{record}: no path writes it")
}

fn plural_of(doc: &Value, path: &str) -> String {
    let body = ref_name(
        &doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"],
    )
    .expect("a write body");
    schemas(doc)[body]["required"][0]
        .as_str()
        .expect("the plural")
        .to_owned()
}

/// The object one boundary write sends: an update of the open record (`update`), or a
/// create from the body that made it (for what only a create writes, or a record no write
/// changes once made), the field set to `value`.
fn object_for(
    doc: &Value,
    open: &Open,
    limit: &FieldLimit,
    value: Value,
    update: bool,
) -> (String, Value) {
    let (path, nested) = placement(doc, &limit.record);
    let (id, created) = open
        .get(path.as_str())
        .unwrap_or_else(|| panic!("nothing open at {path}"));
    let fresh = |mut object: Value| {
        if object.get("clientId").is_some() {
            object["clientId"] = json!(format!("0d9c6a1e-4f1b-4c55-9a43-{:012}", rand_suffix()));
        }
        object
    };
    let object = match nested {
        None if update => json!({"id": id, &limit.field: value}),
        None => {
            let mut object = fresh(created.clone());
            object[&limit.field] = value;
            object
        }
        Some(children) => {
            let mut child = fresh(
                created[&children]
                    .as_object()
                    .and_then(|c| c.values().next().cloned())
                    .unwrap_or_else(|| panic!("{path}: no {children} to copy")),
            );
            let key = match path.as_str() {
                // A count's lines are keyed by their product.
                "/stock/reconcile" => child["productId"].to_string(),
                _ => "boundary".to_owned(),
            };
            child[&limit.field] = value;
            match update {
                true => json!({"id": id, &children: {key: child}}),
                false => {
                    let mut parent = fresh(created.clone());
                    parent[&children] = json!({key: child});
                    parent
                }
            }
        }
    };
    (path, object)
}

/// Whether an update can carry the field: the record's update schema has it.
fn updatable(doc: &Value, limit: &FieldLimit) -> bool {
    let (path, nested) = placement(doc, &limit.record);
    let record = match nested {
        Some(_) => limit.record.clone(),
        None => {
            return schemas(doc)
                .get(&format!("{}Update", limit.record))
                .is_some_and(|u| u["properties"].get(&limit.field).is_some())
        }
    };
    let _ = path;
    schemas(doc).contains_key(&format!("{record}Create"))
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Whether an answer refuses `name` for a limit: a 400, 413 or 422 whose text names it.
fn refuses(status: StatusCode, body: &Value, name: &str, limit_words: &[&str]) -> bool {
    let text = body.to_string();
    [
        StatusCode::BAD_REQUEST,
        StatusCode::PAYLOAD_TOO_LARGE,
        StatusCode::UNPROCESSABLE_ENTITY,
    ]
    .contains(&status)
        && text.contains(name)
        && limit_words.iter().any(|w| text.contains(w))
}

/// The words a refusal of a limit carries.
fn words(limit: &FieldLimit) -> Vec<String> {
    match limit.keyword {
        "maxLength" => vec![format!("at most {}", limit.value)],
        // An id below its least value is refused as no record, or as no id.
        "minimum" if limit.field.ends_with("Id") => {
            vec![format!("{}", limit.value - 1), "non-negative".into()]
        }
        _ => vec!["between".into(), "non-negative".into()],
    }
}

/// Fields whose validator also checks a shape no value of the limit's length has (no time
/// zone is 64 characters long): at the limit they are refused, but not for the limit.
const SHAPED: &[&str] = &["timezone", "countryId", "barcode"];

async fn limit_write(
    app: &TestApp,
    (token, doc, open): (&str, &Value, &Open),
    limit: &FieldLimit,
    (past, update): (bool, bool),
    rec: &mut Recorder,
) -> (StatusCode, Value) {
    let (path, object) = object_for(doc, open, limit, value_at(limit, past), update);
    let plural = plural_of(doc, &path);
    rec.send(
        app,
        (Method::POST, &path),
        token,
        &[],
        Some(json!({ plural: {"b": object} })),
    )
    .await
}

async fn fields(app: &TestApp, token: &str, doc: &Value, open: &Open, rec: &mut Recorder) -> usize {
    let limits = field_limits(doc);
    for limit in &limits {
        let words = words(limit);
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let mut update = updatable(doc, limit);
        for past in [false, true] {
            let mut answer = limit_write(app, (token, doc, open), limit, (past, update), rec).await;
            if update && answer.1.to_string().contains("alreadyComplete") {
                // A record no write changes once made (a cash movement): its creates carry it.
                update = false;
                answer = limit_write(app, (token, doc, open), limit, (past, update), rec).await;
            }
            let (status, body) = answer;
            let refused = refuses(status, &body, &limit.field, &words);
            let at = if past {
                "one past the limit"
            } else {
                "the limit"
            };
            let what = format!(
                "{}.{} {} {}",
                limit.record, limit.field, limit.keyword, limit.value
            );
            assert_eq!(
                refused, past,
                "{what}: at {at} the answer was {status} {body}"
            );
            // An id's least value is 0, which names no record.
            let id = limit.field.ends_with("Id") && limit.keyword == "minimum";
            if !past && !id && !SHAPED.contains(&limit.field.as_str()) {
                assert_eq!(
                    status,
                    StatusCode::CREATED,
                    "{what}: at {at} the answer was {body}"
                );
            }
        }
    }
    limits.len()
}

/// A header's value at `n` of what its `x-limit` counts.
fn header_value(name: &str, what: &str, n: i64) -> String {
    match what {
        // Ids no record has: a list of merchants to suspend names none.
        "items" if name.ends_with("Ids") || name.ends_with("Id") => (1..=n)
            .map(|i| (900_000_000_000 + i).to_string())
            .collect::<Vec<_>>()
            .join(","),
        "items" => (1..=n)
            .map(|i| format!("t{i}"))
            .collect::<Vec<_>>()
            .join(","),
        "length" => "a".repeat(n as usize),
        "digits" => "1".repeat(n as usize),
        "maximum" => n.to_string(),
        other => panic!("{name}: no case for a limit of {other}"),
    }
}

/// The value a required header other than the one under test takes.
fn required_value(open: &Open, name: &str) -> String {
    let today = chrono::Utc::now().date_naive();
    let id = |path: &str| open[path].0.to_string();
    match name {
        "productIds" | "productId" => id("/product"),
        "storeIds" | "storeId" => id("/store"),
        "sessionIds" => id("/register/session"),
        "webhookId" => id("/webhook"),
        "customerId" => id("/customer"),
        "from" | "reportFrom" => format!("{today} 00:00:00"),
        "to" | "reportTo" => format!("{} 00:00:00", today + chrono::Duration::days(1)),
        "resource" => "product".into(),
        "tag" => "sync".into(),
        "object" => "STORE".into(),
        "identifier" => "1".into(),
        "bucketSize" => "100".into(),
        other => panic!("no value for the required header {other}"),
    }
}

/// Sends one request for a header's limit: the operation that first uses it, its other
/// required headers filled in, a body where it needs one.
async fn header_request(
    app: &TestApp,
    (token, operator): (&str, &str),
    doc: &Value,
    open: &Open,
    (component, value): (&str, &str),
) -> (StatusCode, Value) {
    let reference = format!("#/components/parameters/{component}");
    // A read where one has it, else a create.
    let using: Vec<_> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .iter()
                .map(move |(m, op)| (path, m, op))
        })
        .filter(|(_, _, op)| {
            op["parameters"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|p| p["$ref"] == reference))
        })
        .collect();
    let (path, method, op) = ["get", "post"]
        .iter()
        .find_map(|wanted| using.iter().find(|(_, m, _)| m == wanted).copied())
        .unwrap_or_else(|| panic!("no read or create uses {component}"));
    let parameter = &doc["components"]["parameters"][component];
    let name = parameter["name"].as_str().unwrap();
    let is_operator = op["security"][0].get("operator").is_some();
    let mut req = app
        .client
        .request(
            Method::from_bytes(method.to_uppercase().as_bytes()).unwrap(),
            app.url(path),
        )
        .bearer_auth(if is_operator { operator } else { token })
        .header(name, value);
    if !is_operator {
        req = req.header("x-accept-version", "2.0");
    }
    for p in op["parameters"].as_array().unwrap() {
        let other = &doc["components"]["parameters"][ref_name(p).unwrap()];
        let other_name = other["name"].as_str().unwrap();
        if other["required"] == true && other_name != name && other_name != "x-accept-version" {
            req = req.header(other_name, required_value(open, other_name));
        }
    }
    if path == "/log" {
        // A list of logs names its object by all three, or the log by `id`.
        for (other, sent) in [("tag", "sync"), ("object", "STORE"), ("identifier", "1")] {
            if other != name {
                req = req.header(other, sent);
            }
        }
    }
    if method == "post" && path == "/log" {
        req = req.json(&json!({"note": "boundary"}));
    } else if method == "post" && op["requestBody"]["content"]["application/json"].is_object() {
        let plural = plural_of(doc, path);
        req = req.json(&json!({ plural: {"k": open[path.as_str()].1} }));
    }
    let res = req.checked().await.expect("request");
    let status = res.status();
    let streamed = res
        .headers()
        .get("content-type")
        .is_some_and(|c| c.to_str().unwrap_or("").starts_with("text/event-stream"));
    let body = if streamed {
        Value::Null
    } else {
        res.json().await.unwrap_or(Value::Null)
    };
    (status, body)
}

async fn headers(app: &TestApp, tokens: (&str, &str), doc: &Value, open: &Open) -> usize {
    let mut n = 0;
    for (component, parameter) in doc["components"]["parameters"].as_object().unwrap() {
        let Some((what, limit)) = parameter["schema"]["x-limit"]
            .as_object()
            .and_then(|l| l.iter().next())
        else {
            continue;
        };
        let limit = limit.as_i64().unwrap();
        let name = parameter["name"].as_str().unwrap();
        for past in [false, true] {
            let value = header_value(name, what, limit + i64::from(past));
            let (status, body) = header_request(app, tokens, doc, open, (component, &value)).await;
            match past {
                // At its limit the header is read: the answer is the operation's own (a
                // sequence past the log's end is 410), never a 400 naming it.
                false => assert!(
                    !(status.is_server_error()
                        || status == StatusCode::BAD_REQUEST && body.to_string().contains(name)),
                    "{component} at its limit ({what} {limit}): {status} {body}"
                ),
                true => assert!(
                    status == StatusCode::BAD_REQUEST && body.to_string().contains(name),
                    "{component} one past its limit ({what} {limit}): {status} {body}"
                ),
            }
        }
        n += 1;
    }
    n
}

/// The bodies' own limits: objects per write (the batch), per operator create, and the
/// deliveries one resend names.
async fn bodies(app: &TestApp, (token, operator): (&str, &str), doc: &Value, open: &Open) -> usize {
    let batch = doc["components"]["schemas"]["CategoryWriteBody"]["properties"]["categories"]
        ["maxProperties"]
        .as_u64()
        .expect("the batch limit") as usize;
    for (n, expected) in [
        (batch, StatusCode::CREATED),
        (batch + 1, StatusCode::PAYLOAD_TOO_LARGE),
    ] {
        let objects: Map<String, Value> = (0..n)
            .map(|i| (format!("c{i}"), json!({"title": format!("Shelf {i}")})))
            .collect();
        let res = app
            .api(Method::POST, "/category", token)
            .json(&json!({"categories": objects}))
            .checked()
            .await
            .unwrap();
        assert_eq!(res.status(), expected, "{n} categories in one write");
    }
    let create = doc["components"]["schemas"]["CreateMerchantsBody"]["properties"]["merchants"]
        ["maxProperties"]
        .as_u64()
        .expect("the operator's create limit") as usize;
    for (n, expected) in [
        (create, StatusCode::CREATED),
        (create + 1, StatusCode::PAYLOAD_TOO_LARGE),
    ] {
        let merchants: Map<String, Value> = (0..n)
            .map(|i| (format!("m{i}"), acme(&format!("bound-{n}-{i}"))))
            .collect();
        let res = app
            .client
            .post(app.url("/operator/merchant"))
            .bearer_auth(operator)
            .json(&json!({"merchants": merchants}))
            .checked()
            .await
            .unwrap();
        assert_eq!(res.status(), expected, "{n} merchants in one create");
    }
    let resend = doc["components"]["schemas"]["ResendWebhookDeliveriesBody"]["properties"]
        ["sequences"]["maxItems"]
        .as_u64()
        .expect("the resend limit") as i64;
    let hook = open["/webhook"].0;
    for (n, refused) in [(resend, false), (resend + 1, true)] {
        let sequences: Vec<i64> = (1..=n).collect();
        let res = app
            .api(Method::POST, "/webhook/resend", token)
            .json(&json!({"webhookId": hook, "sequences": sequences}))
            .checked()
            .await
            .unwrap();
        let status = res.status();
        let body: Value = res.json().await.unwrap();
        assert_eq!(
            refuses(status, &body, "sequences", &[&format!("{resend}")]),
            refused,
            "{n} sequences: {status} {body}"
        );
    }
    3
}

/// Every limit the document states, found in it: fields' and headers' (each sent by
/// [`fields`] and [`headers`]); the bodies' are only where [`bodies`] sends them.
fn stated_limits(doc: &Value) -> usize {
    let headers = doc["components"]["parameters"]
        .as_object()
        .unwrap()
        .values()
        .filter(|p| p["schema"].get("x-limit").is_some())
        .count();
    for (name, schema) in schemas(doc) {
        let text = schema.to_string();
        let batch = name.ends_with("WriteBody")
            || name.ends_with("UpdateBody")
            || name == "CreateMerchantsBody";
        assert!(
            !text.contains("\"maxProperties\"") || batch,
            "{name}: maxProperties with no case"
        );
        let items = name == "ResendWebhookDeliveriesBody"
            || name.ends_with("Create")
            || name.ends_with("Update");
        assert!(
            !text.contains("\"maxItems\"") || items,
            "{name}: maxItems with no case"
        );
    }
    field_limits(doc).len() + headers
}

#[actix_rt::test]
async fn every_documented_limit_holds_at_its_boundary() {
    let app = spawn_app(Backend::Sqlite).await.expect("app");
    let mut rec = Recorder::default();
    let open = scenario(&app, &mut rec).await;
    let doc = document();
    let token = app.owner_token().await;
    let operator = operator_token(&app.database.url).await;
    let mut sent = fields(&app, &token, &doc, &open, &mut rec).await;
    sent += headers(&app, (&token, &operator), &doc, &open).await;
    assert_eq!(sent, stated_limits(&doc), "a stated limit was not sent");
    bodies(&app, (&token, &operator), &doc, &open).await;
}
