//! The OpenAPI document is the server's exact contract: every answer the suite gets from a
//! merchantd server goes through [`Checked::checked`] (instead of `send`), which finds the
//! operation in `docs/openapi.json` by method and path template, the response by status, and
//! validates the content type and a JSON body against that response's schema. A status the
//! document does not list, a field it does not declare (response objects forbid extra
//! properties) or a body of another type fails the test that sent the request.
//!
//! Not checked here: requests made by other libraries (the `oauth2` crate in
//! `oauth_client_library.rs`, the browser in `browser.rs`), the raw TCP requests of the
//! slow-client and malformed-HTTP tests, and plain HTTP sent to the TLS port (`tls.rs`): none
//! of those answers comes from a route.

use std::collections::HashMap;
use std::future::Future;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use reqwest::header::{HeaderMap, CONTENT_ENCODING, CONTENT_TYPE};
use serde_json::Value;

/// Routes the document deliberately leaves out: the hooks only test builds register, and
/// Swagger UI's page at `/docs/` (a trailing-slash path, which linters and generators refuse;
/// `/docs` and `/docs/{file}` are described).
fn undocumented(path: &str) -> bool {
    path.starts_with("/__test/") || path == "/docs/"
}

pub trait Checked {
    /// Sends the request like `send`, then checks the answer against the document (a panic
    /// names what disagrees). Server-sent event streams are checked for status and content type
    /// and handed back unread; every other body is read, checked and handed back whole.
    fn checked(self) -> impl Future<Output = reqwest::Result<reqwest::Response>> + Send;
}

impl Checked for reqwest::RequestBuilder {
    async fn checked(self) -> reqwest::Result<reqwest::Response> {
        let (client, request) = self.build_split();
        let request = request?;
        let method = request.method().as_str().to_ascii_lowercase();
        let path = request.url().path().to_owned();
        let response = client.execute(request).await?;
        let status = response.status();
        let media = media_type(response.headers());
        if media.as_deref() == Some("text/event-stream") {
            contract().check(&method, &path, status.as_u16(), media.as_deref(), None);
            return Ok(response);
        }
        let version = response.version();
        let headers = response.headers().clone();
        let body = response.bytes().await?;
        // A compressed body (the test asked for it; this client does not decompress) and
        // a HEAD answer are checked for status and content type only.
        let encoded = headers.contains_key(CONTENT_ENCODING);
        let answer = if method == "head" || encoded {
            None
        } else {
            Some(&body[..])
        };
        contract().check(&method, &path, status.as_u16(), media.as_deref(), answer);
        let mut rebuilt = http::Response::new(body);
        *rebuilt.status_mut() = status;
        *rebuilt.version_mut() = version;
        *rebuilt.headers_mut() = headers;
        Ok(reqwest::Response::from(rebuilt))
    }
}

/// The document's path template for a request (`/files/{fileName}` for `/files/a.png`).
pub fn template(method: &str, path: &str) -> Option<String> {
    contract()
        .operation(&method.to_ascii_lowercase(), path)
        .map(|(template, _)| template.to_owned())
}

/// The media type of an answer, lower-case, without parameters.
fn media_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(CONTENT_TYPE)?.to_str().ok()?;
    let essence = value.split(';').next().unwrap_or_default().trim();
    Some(essence.to_ascii_lowercase())
}

/// `docs/openapi.json`, read once, and a validator per response schema, compiled when first
/// needed.
struct Contract {
    document: Value,
    validators: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
}

fn contract() -> &'static Contract {
    static CONTRACT: OnceLock<Contract> = OnceLock::new();
    CONTRACT.get_or_init(|| {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/openapi.json");
        let text = std::fs::read_to_string(&file).expect("docs/openapi.json");
        Contract {
            document: serde_json::from_str(&text).expect("docs/openapi.json is JSON"),
            validators: Mutex::new(HashMap::new()),
        }
    })
}

/// With `MERCHANTD_CONTRACT_COVERAGE=<file>`, each checked answer appends `METHOD template
/// status` (and `body` when its body was validated) to that file: which of the document's
/// responses the suite never sees.
fn note_coverage(method: &str, template: &str, status: u16, body: bool) {
    use std::io::Write;
    let Ok(file) = std::env::var("MERCHANTD_CONTRACT_COVERAGE") else {
        return;
    };
    let line = format!(
        "{} {template} {status}{}\n",
        method.to_uppercase(),
        if body { " body" } else { "" }
    );
    if let Ok(mut out) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
    {
        let _ = out.write_all(line.as_bytes());
    }
}

/// A JSON pointer's escaping of one key (`/` and `~`).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// `application/json` and `application/<x>+json`.
fn is_json(media: &str) -> bool {
    media == "application/json" || (media.starts_with("application/") && media.ends_with("+json"))
}

/// Whether the document's content key `pattern` (`image/*`, `*/*`) covers `media`.
fn covers(pattern: &str, media: &str) -> bool {
    let pattern = pattern.split(';').next().unwrap_or_default().trim();
    match pattern.strip_suffix("/*") {
        Some("*") => true,
        Some(kind) => media.split('/').next() == Some(kind),
        None => pattern.eq_ignore_ascii_case(media),
    }
}

/// Whether a concrete path fits a template: same segments, `{name}` fits any non-empty one.
fn fits(template: &str, path: &str) -> bool {
    let (t, p): (Vec<_>, Vec<_>) = (template.split('/').collect(), path.split('/').collect());
    t.len() == p.len()
        && t.iter()
            .zip(&p)
            .all(|(t, p)| *t == *p || (t.starts_with('{') && t.ends_with('}') && !p.is_empty()))
}

impl Contract {
    /// Panics when the answer disagrees with the document.
    fn check(
        &self,
        method: &str,
        path: &str,
        status: u16,
        media: Option<&str>,
        body: Option<&[u8]>,
    ) {
        if let Err(problem) = self.problem(method, path, status, media, body) {
            let text = body.map(String::from_utf8_lossy).unwrap_or_default();
            let shown: String = text.chars().take(2_000).collect();
            panic!(
                "the answer to {} {path} breaks docs/openapi.json: {problem}\n\
                 status {status}, content-type {media:?}, body: {shown}",
                method.to_uppercase()
            );
        }
    }

    fn problem(
        &self,
        method: &str,
        path: &str,
        status: u16,
        media: Option<&str>,
        body: Option<&[u8]>,
    ) -> Result<(), String> {
        if undocumented(path) {
            return Ok(());
        }
        let Some((template, operation)) = self.operation(method, path) else {
            return self.not_routed(status, media, body);
        };
        let (pointer, response) = self.response(template, method, operation, status)?;
        note_coverage(method, template, status, body.is_some());
        let Some(content) = response.get("content").and_then(Value::as_object) else {
            return match body {
                Some(bytes) if !bytes.is_empty() => Err(format!(
                    "the document describes no body for status {status}"
                )),
                _ => Ok(()),
            };
        };
        let Some(media) = media else {
            return match body {
                Some(bytes) if !bytes.is_empty() => Err("a body without a content-type".into()),
                None => Ok(()),
                Some(_) => Err(format!(
                    "no body, but the document describes one ({:?})",
                    content.keys().collect::<Vec<_>>()
                )),
            };
        };
        let Some(key) = content.keys().find(|key| covers(key, media)) else {
            return Err(format!(
                "content-type {media}, the document lists {:?}",
                content.keys().collect::<Vec<_>>()
            ));
        };
        match body {
            Some(bytes) if is_json(media) => {
                let pointer = format!("{pointer}/content/{}/schema", escape(key));
                self.validate(&pointer, bytes)
            }
            _ => Ok(()),
        }
    }

    /// A path or method the document leaves out may only be refused, with the error envelope:
    /// as no route (104) or a wrong method (105), or before routing by the API's gate (no or a
    /// bad token, 100; a bad version, 101).
    fn not_routed(
        &self,
        status: u16,
        media: Option<&str>,
        body: Option<&[u8]>,
    ) -> Result<(), String> {
        if ![400, 401, 404, 405].contains(&status) {
            return Err(format!(
                "the document has no such operation, and the server answered {status}"
            ));
        }
        match (media, body) {
            (Some(media), Some(bytes)) if is_json(media) => {
                self.validate("/components/schemas/ErrorEnvelope", bytes)
            }
            (_, None) => Ok(()),
            _ => Err("an undocumented route's refusal is not the JSON error envelope".into()),
        }
    }

    /// The operation for a concrete path: a literal path first, then a template.
    fn operation(&self, method: &str, path: &str) -> Option<(&str, &Value)> {
        let paths = self.document["paths"].as_object()?;
        if let Some(op) = paths.get(path).and_then(|item| item.get(method)) {
            return Some((paths.get_key_value(path)?.0.as_str(), op));
        }
        paths
            .iter()
            .filter(|(template, _)| template.contains('{') && fits(template, path))
            .find_map(|(template, item)| Some((template.as_str(), item.get(method)?)))
    }

    /// The response for a status (then `4XX`, then `default`) and the JSON pointer to it,
    /// through a `$ref` into `components.responses`.
    fn response<'a>(
        &'a self,
        template: &str,
        method: &str,
        operation: &'a Value,
        status: u16,
    ) -> Result<(String, &'a Value), String> {
        let responses = operation["responses"].as_object().ok_or("no responses")?;
        let code = status.to_string();
        let range = format!("{}XX", status / 100);
        let (key, response) = [code.as_str(), range.as_str(), "default"]
            .into_iter()
            .find_map(|key| Some((key, responses.get(key)?)))
            .ok_or_else(|| {
                format!(
                    "status {status} is not documented (only {:?})",
                    responses.keys().collect::<Vec<_>>()
                )
            })?;
        match response.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let pointer = reference.trim_start_matches('#').to_owned();
                let target = self
                    .document
                    .pointer(&pointer)
                    .ok_or_else(|| format!("a dangling $ref {reference}"))?;
                Ok((pointer, target))
            }
            None => Ok((
                format!(
                    "/paths/{}/{method}/responses/{}",
                    escape(template),
                    escape(key)
                ),
                response,
            )),
        }
    }

    fn validate(&self, pointer: &str, bytes: &[u8]) -> Result<(), String> {
        let instance: Value =
            serde_json::from_slice(bytes).map_err(|e| format!("the body is not JSON: {e}"))?;
        let validator = self.validator(pointer)?;
        let errors: Vec<String> = validator
            .iter_errors(&instance)
            .take(10)
            .map(|e| format!("at {}: {e}", e.instance_path()))
            .collect();
        match errors.is_empty() {
            true => Ok(()),
            false => Err(format!(
                "the body does not match #{pointer}:\n  {}",
                errors.join("\n  ")
            )),
        }
    }

    /// A validator whose root is the whole document (so `$ref`s into `#/components/...`
    /// resolve) and whose own schema is a `$ref` to the response's.
    fn validator(&self, pointer: &str) -> Result<Arc<jsonschema::Validator>, String> {
        let mut cache = self.validators.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(validator) = cache.get(pointer) {
            return Ok(validator.clone());
        }
        let mut root = self.document.clone();
        root["$ref"] = Value::String(format!("#{pointer}"));
        let validator = jsonschema::draft202012::options()
            .should_validate_formats(true)
            .build(&root)
            .map_err(|e| format!("the document's schema at {pointer} does not compile: {e}"))?;
        let validator = Arc::new(validator);
        cache.insert(pointer.to_owned(), validator.clone());
        Ok(validator)
    }
}

#[test]
fn paths_fit_templates_by_segment() {
    assert!(fits("/files/{fileName}", "/files/abc.png"));
    assert!(!fits("/files/{fileName}", "/files/"));
    assert!(!fits("/files/{fileName}", "/files/a/b"));
    assert!(covers("image/*", "image/png"));
    assert!(!covers("image/*", "text/html"));
    assert!(covers("application/json", "application/json"));
}
