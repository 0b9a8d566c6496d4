//! Secrets the server makes for a write (an application's client secret, a webhook's signing
//! secret): drawn before the write, shown once in the write's answer, which is then never
//! cached. Nothing reads a secret back afterwards.

use std::collections::HashMap;

use actix_web::http::header::{self, HeaderValue};
use serde_json::{Map, Value};

use crate::http::envelope::Reply;
use crate::http::resources::batch_reply;
use domain::batch::{BatchObject, WriteMode};
use engine::merchant::job::ObjectOutcome;

/// Where a resource shows its secret: the field, the field it follows, and what to call it.
pub struct Shown {
    pub field: &'static str,
    pub after: &'static str,
    pub what: &'static str,
}

/// Client key → the clear secret made for that object's write.
pub struct Secrets(HashMap<String, String>);

impl Secrets {
    /// A fresh secret for each object that `wants` one (given its fields and whether the write
    /// may create). `make` gives the clear secret and what the object carries to the actor
    /// (its hash, or the secret itself when the server must sign with it).
    pub fn draw(
        objects: &mut [BatchObject],
        mode: WriteMode,
        wants: fn(&Map<String, Value>, bool) -> bool,
        make: impl Fn() -> (String, String),
    ) -> Self {
        let mut secrets = HashMap::new();
        for object in objects {
            let Ok(fields) = &object.fields else { continue };
            if wants(fields, mode == WriteMode::Upsert) {
                let (clear, carried) = make();
                object.secret = Some(carried);
                secrets.insert(object.key.clone(), clear);
            }
        }
        Secrets(secrets)
    }

    /// The batch answer with each saved object's secret shown once, sent `no-store` when any
    /// is. `replaced` hears of every existing record whose secret was replaced (by id), and
    /// may reword its message.
    pub fn reveal(
        mut self,
        plural: &str,
        shown: Shown,
        mut outcomes: Vec<ObjectOutcome>,
        mut replaced: impl FnMut(&mut ObjectOutcome, i64),
    ) -> Reply {
        let mut any = false;
        for outcome in &mut outcomes {
            let Some(secret) = self.0.remove(&outcome.key) else {
                continue;
            };
            let Some((id, created)) = show_secret(outcome, &shown, secret) else {
                continue;
            };
            any = true;
            if !created {
                replaced(outcome, id);
            }
        }
        let reply = batch_reply(plural, outcomes);
        if any {
            reply.header(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))
        } else {
            reply
        }
    }
}

/// Adds a secret to a saved object's answer, as `shown.field` right after `shown.after`, and on
/// a create tells the client to keep it. Gives the record's id and whether it was created;
/// `None` when the object failed (its secret was never stored and is dropped).
fn show_secret(outcome: &mut ObjectOutcome, shown: &Shown, secret: String) -> Option<(i64, bool)> {
    let Shown { field, after, what } = *shown;
    let Ok(saved) = &mut outcome.result else {
        return None;
    };
    let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(&saved.json) else {
        return None;
    };
    let id = fields.get("id").and_then(Value::as_i64).unwrap_or_default();
    let mut with_secret = Map::with_capacity(fields.len() + 1);
    for (name, value) in fields {
        let here = name == after;
        with_secret.insert(name, value);
        if here {
            with_secret.insert(field.into(), Value::String(secret.clone()));
        }
    }
    with_secret
        .entry(field)
        .or_insert_with(|| Value::String(secret));
    saved.json = Value::Object(with_secret).to_string();
    if saved.created {
        saved.detail = format!(
            "{} Keep the {what} now: it is never shown again.",
            saved.detail
        );
    }
    Some((id, saved.created))
}
