//! A third-party application registered by a merchant (api-reference.md, Application).
//!
//! The client secret never lives here in clear: the HTTP layer generates it, keeps it only to
//! show it once in the answer, and passes its SHA-256 as a typed fact of the write.

use serde_json::{Map, Value};

use crate::fields::{Fields, Shape};
use crate::oauth::redirect_uri;
use merchantd_macros::Record;

#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(
    table = "applications",
    event = "application",
    once(name = "clientSecret", after = "clientId"),
    write_only(name = "regenerateSecret", kind = "bool")
)]
pub struct ApplicationRecord {
    pub id: i64,
    #[field(max_len = 200, required)]
    pub name: String,
    #[field(max_len = 2000)]
    pub description: Option<String>,
    #[field(required)]
    pub redirect_uris: Vec<String>,
    #[field(read_only)]
    pub client_id: String,
    #[field(max_len = 300)]
    pub logo: Option<String>,
    pub active_date: Option<i64>,
    pub delete_date: Option<i64>,
    /// The hash of a secret this write sets (create or regeneration); `None` on every record
    /// that was loaded or carried over, so a later write never rewrites the stored hash.
    #[field(skip)]
    pub new_secret_hash: Option<String>,
}

/// `{"id": N, "regenerateSecret": true}` replaces the secret.
pub const REGENERATE: &str = "regenerateSecret";

/// The fields writes accept (see [`Shape`]).
pub const SHAPE: Shape = Shape::of::<ApplicationRecord>();
const MAX_REDIRECT_URIS: usize = 20;

/// Whether a written object gets a new secret: a create (no `id`, when creating is allowed)
/// or a regeneration.
pub fn wants_secret(fields: &Map<String, Value>, may_create: bool) -> bool {
    let creates = matches!(fields.get("id"), None | Some(Value::Null));
    (creates && may_create) || fields.get(REGENERATE) == Some(&Value::Bool(true))
}

impl ApplicationRecord {
    crate::blank!(|id, now|);

    /// Applies written fields. A create and a regeneration need the hash of the new secret.
    /// `secret_hash` is the SHA-256 (hex) of a secret the server generated for this write; it
    /// never comes from the client's JSON.
    pub fn apply(
        mut self,
        fields: Map<String, Value>,
        creating: bool,
        secret_hash: Option<&str>,
    ) -> Result<Self, Vec<String>> {
        let mut fields = fields;
        let uris = fields.remove("redirectUris");
        let mut f = Fields::declared::<Self>(fields);
        self.new_secret_hash = None;
        let name = f.required_text("name", &self.name);
        self.description = f.text("description").apply(self.description);
        self.logo = f.text("logo").apply(self.logo);
        self.active_date = f.date("activeDate").apply(self.active_date);
        match uris.map(parse_redirect_uris) {
            Some(Ok(uris)) => self.redirect_uris = uris,
            Some(Err(why)) => f.reject("redirectUris", why),
            None if self.redirect_uris.is_empty() => {
                f.reject("redirectUris", "required field is missing.")
            }
            None => {}
        }
        if creating || f.boolean(REGENERATE) == Some(true) {
            match secret_hash {
                Some(hash) if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    self.new_secret_hash = Some(hash.to_owned());
                }
                _ => f.reject("clientSecret", "no secret could be generated."),
            }
        }
        f.require("name", &name);
        f.finish()?;
        self.name = name.unwrap_or_default();
        Ok(self)
    }
}

/// A non-empty array of distinct redirect URIs, each valid for a redirect (duplicates dropped).
fn parse_redirect_uris(value: Value) -> Result<Vec<String>, String> {
    let Value::Array(items) = value else {
        return Err("must be an array of absolute URLs.".into());
    };
    if items.is_empty() {
        return Err("at least one redirect URI is needed.".into());
    }
    if items.len() > MAX_REDIRECT_URIS {
        return Err(format!("at most {MAX_REDIRECT_URIS} redirect URIs."));
    }
    let mut uris: Vec<String> = Vec::with_capacity(items.len());
    let mut problems = Vec::new();
    for item in items {
        match item {
            Value::String(uri) if uri.len() > 2000 => {
                problems.push("a redirect URI has more than 2000 characters".to_owned())
            }
            Value::String(uri) => match redirect_uri::validate(&uri) {
                Ok(()) if uris.contains(&uri) => {}
                Ok(()) => uris.push(uri),
                Err(why) => problems.push(why),
            },
            other => problems.push(format!("{other} is not a string")),
        }
    }
    if problems.is_empty() {
        Ok(uris)
    } else {
        Err(format!("{}.", problems.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const HASH: &str = "5f3a9c2e71d04b8a5f3a9c2e71d04b8a5f3a9c2e71d04b8a5f3a9c2e71d04b8a";

    use crate::testing::obj;

    fn till() -> ApplicationRecord {
        ApplicationRecord {
            client_id: "app-5f3a9c2e71d04b8a".into(),
            ..ApplicationRecord::new(1049, 0)
        }
        .apply(
            obj(json!({"name": "Till Sync",
                           "redirectUris": ["https://till.example.com/oauth/callback"]})),
            true,
            Some(HASH),
        )
        .unwrap()
    }

    #[test]
    fn a_create_keeps_the_hash_for_storing_and_never_shows_it() {
        use crate::record::{Access, Declared};
        let app = till();
        assert_eq!(app.new_secret_hash.as_deref(), Some(HASH));
        assert_eq!(app.client_id, "app-5f3a9c2e71d04b8a");
        // The hash is not a field of the declaration; the clear secret is shown once only.
        let fields = ApplicationRecord::DECL.fields;
        assert!(fields.iter().all(|f| f.column != Some("secret_hash")));
        let secret = fields.iter().find(|f| f.name == "clientSecret").unwrap();
        assert_eq!(secret.access, Access::Once);
    }

    #[test]
    fn an_update_carries_no_hash_unless_it_regenerates() {
        let app = till();
        let renamed = app
            .clone()
            .apply(obj(json!({"name": "Till", "clientId": "x"})), false, None)
            .unwrap();
        assert_eq!(renamed.new_secret_hash, None);
        assert_eq!(renamed.client_id, "app-5f3a9c2e71d04b8a");
        let regenerated = app
            .clone()
            .apply(obj(json!({"regenerateSecret": true})), false, Some(HASH))
            .unwrap();
        assert_eq!(regenerated.new_secret_hash.as_deref(), Some(HASH));
        assert!(app
            .apply(obj(json!({"regenerateSecret": true})), false, None)
            .is_err());
    }

    #[test]
    fn redirect_uris_are_required_and_validated() {
        let errs = ApplicationRecord {
            client_id: "app-0".into(),
            ..ApplicationRecord::new(1, 0)
        }
        .apply(obj(json!({"name": "x"})), true, Some(HASH))
        .unwrap_err();
        assert_eq!(errs, vec!["redirectUris: required field is missing."]);
        let errs = ApplicationRecord {
            client_id: "app-0".into(),
            ..ApplicationRecord::new(1, 0)
        }
        .apply(
            obj(json!({"name": "x",
                           "redirectUris": ["http://evil.example/cb", "/relative"]})),
            true,
            Some(HASH),
        )
        .unwrap_err();
        assert_eq!(errs.len(), 1);
        assert!(errs[0].starts_with("redirectUris: "), "{errs:?}");
    }

    #[test]
    fn only_creates_and_regenerations_want_a_secret() {
        assert!(wants_secret(&obj(json!({"name": "x"})), true));
        assert!(!wants_secret(&obj(json!({"name": "x"})), false));
        assert!(!wants_secret(&obj(json!({"id": 3, "name": "x"})), true));
        assert!(wants_secret(
            &obj(json!({"id": 3, "regenerateSecret": true})),
            false
        ));
    }
}
