use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::path::Path;

use serde::Deserialize;

use crate::crypto;
use crate::fleet::tenant::{AppSpec, Manifest, PasswordSpec, StoreSpec, UserSpec};
use crate::oauth::redirect_uri;
use crate::sales::pricing::SaleSettings;
use crate::Role;

/// A mistake in a manifest: which file, which entry, which field, and what is wrong. The message
/// never repeats a password or secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    pub file: String,
    pub entry: Option<String>,
    pub field: Option<String>,
    pub message: String,
}

impl ManifestError {
    pub fn file(path: &Path, message: impl Into<String>) -> Self {
        Self {
            file: path.display().to_string(),
            entry: None,
            field: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(entry) = &self.entry {
            write!(f, ": {entry}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ManifestError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMerchant {
    key: String,
    name: String,
    /// The applications this merchant registered may use the old Shopwave client libraries'
    /// conventions (docs/decisions/0035-legacy-shopwave-clients.md).
    #[serde(default)]
    legacy_clients: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStore {
    key: String,
    name: String,
}

// Secret fields are read as raw values so that a type error never echoes their content.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUser {
    email: String,
    password: Option<toml::Value>,
    password_hash: Option<toml::Value>,
    role: String,
    first_name: Option<String>,
    last_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawApp {
    name: String,
    client_id: String,
    client_secret: Option<toml::Value>,
    redirect_uris: Vec<String>,
    description: Option<String>,
}

const TOP_LEVEL: [&str; 5] = ["merchant", "sales", "stores", "users", "applications"];
const MIN_SECRET_LEN: usize = 12;
const MIN_PASSWORD_LEN: usize = 8;

/// Builds errors for one file with less noise at each call site.
struct Ctx<'a> {
    file: &'a str,
}

impl Ctx<'_> {
    fn err(
        &self,
        entry: Option<String>,
        field: Option<&str>,
        message: impl Into<String>,
    ) -> ManifestError {
        ManifestError {
            file: self.file.to_owned(),
            entry,
            field: field.map(str::to_owned),
            message: message.into(),
        }
    }
}

impl Manifest {
    pub fn parse(file: &str, text: &str) -> Result<Self, ManifestError> {
        let table = toml_table(&Ctx { file }, text)?;
        Self::from_table(file, &table)
    }

    /// A manifest sent as JSON (the operator API): the same sections and fields as the file.
    pub fn from_json(
        file: &str,
        value: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Self, ManifestError> {
        let ctx = Ctx { file };
        // TOML has no null: a null field is refused, as an unknown one is, before any is read.
        if let Some(path) = null_at(&value, "") {
            return Err(ctx.err(None, Some(&path), "must not be null; leave the field out"));
        }
        match toml::Value::try_from(serde_json::Value::Object(value)) {
            Ok(toml::Value::Table(table)) => Self::from_table(file, &table),
            Ok(_) => Err(ctx.err(None, None, "a manifest is an object of sections")),
            Err(e) => Err(ctx.err(
                None,
                None,
                format!("not a manifest: {}", e.to_string().trim()),
            )),
        }
    }

    fn from_table(file: &str, table: &toml::Table) -> Result<Self, ManifestError> {
        let ctx = Ctx { file };
        if let Some(unknown) = table.keys().find(|k| !TOP_LEVEL.contains(&k.as_str())) {
            return Err(ctx.err(
                None,
                Some(unknown),
                "unknown section; expected merchant, sales, stores, users or applications",
            ));
        }

        let merchant: RawMerchant = match table.get("merchant") {
            Some(v) => typed(&ctx, "merchant".into(), v)?,
            None => {
                return Err(ctx.err(
                    Some("merchant".into()),
                    None,
                    "the [merchant] table is missing",
                ))
            }
        };
        let merchant_key = merchant_key(&ctx, &merchant)?;
        let sales: SaleSettings = match table.get("sales") {
            Some(v) => typed(&ctx, "sales".into(), v)?,
            None => SaleSettings::default(),
        };
        sales
            .check()
            .map_err(|why| ctx.err(Some("sales".into()), None, why))?;
        let merchant_name = non_empty(&ctx, "merchant".into(), "name", &merchant.name)?;

        let stores = entries(&ctx, table, "stores")?
            .into_iter()
            .map(|(entry, value)| parse_store(&ctx, entry, value))
            .collect::<Result<Vec<_>, _>>()?;
        unique(&ctx, "stores", "key", stores.iter().map(|s| s.key.clone()))?;

        let users = entries(&ctx, table, "users")?
            .into_iter()
            .map(|(entry, value)| parse_user(&ctx, entry, value))
            .collect::<Result<Vec<_>, _>>()?;
        unique(
            &ctx,
            "users",
            "email",
            users.iter().map(|u| u.email.clone()),
        )?;

        let applications = entries(&ctx, table, "applications")?
            .into_iter()
            .map(|(entry, value)| parse_app(&ctx, entry, value))
            .collect::<Result<Vec<_>, _>>()?;
        unique(
            &ctx,
            "applications",
            "client_id",
            applications.iter().map(|a| a.client_id.clone()),
        )?;

        Ok(Self {
            file: file.to_owned(),
            merchant_key,
            merchant_name,
            legacy_clients: merchant.legacy_clients,
            sales,
            stores,
            users,
            applications,
        })
    }
}

/// The path of the first null in a JSON value (`users[0].last_name`), if any.
fn null_at(value: &serde_json::Map<String, serde_json::Value>, prefix: &str) -> Option<String> {
    fn walk(value: &serde_json::Value, path: String) -> Option<String> {
        match value {
            serde_json::Value::Null => Some(path),
            serde_json::Value::Object(map) => null_at(map, &path),
            serde_json::Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, item)| walk(item, format!("{path}[{i}]"))),
            _ => None,
        }
    }
    value.iter().find_map(|(key, item)| {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        walk(item, path)
    })
}

/// The file as a TOML table. A syntax error names only the message and the position: toml's
/// Display quotes the source line, which may hold a password.
fn toml_table(ctx: &Ctx<'_>, text: &str) -> Result<toml::Table, ManifestError> {
    text.parse().map_err(|e: toml::de::Error| {
        let position = e
            .span()
            .map(|span| {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                format!(" at line {line}, column {column}")
            })
            .unwrap_or_default();
        ctx.err(
            None,
            None,
            format!("TOML syntax error{position}: {}", e.message()),
        )
    })
}

/// The merchant's key: non-empty, letters, digits, '-' and '_' only.
fn merchant_key(ctx: &Ctx<'_>, merchant: &RawMerchant) -> Result<String, ManifestError> {
    let key = merchant.key.trim().to_owned();
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(ctx.err(
            Some("merchant".into()),
            Some("key"),
            "must be non-empty and use only letters, digits, '-' and '_'",
        ));
    }
    Ok(key)
}

/// Rules that span files: merchant keys and client ids are unique across one apply.
pub fn check_across(manifests: &[Manifest]) -> Result<(), ManifestError> {
    let mut merchants: HashMap<&str, &str> = HashMap::new();
    let mut clients: HashMap<&str, &str> = HashMap::new();
    for m in manifests {
        let ctx = Ctx { file: &m.file };
        if let Some(other) = merchants.insert(&m.merchant_key, &m.file) {
            return Err(ctx.err(
                Some("merchant".into()),
                Some("key"),
                format!("\"{}\" is also the key of {other}", m.merchant_key),
            ));
        }
        for (i, app) in m.applications.iter().enumerate() {
            if let Some(other) = clients.insert(&app.client_id, &m.file) {
                return Err(ctx.err(
                    Some(format!("applications[{i}]")),
                    Some("client_id"),
                    format!("\"{}\" is also registered in {other}", app.client_id),
                ));
            }
        }
    }
    Ok(())
}

fn entries<'t>(
    ctx: &Ctx<'_>,
    table: &'t toml::Table,
    section: &str,
) -> Result<Vec<(String, &'t toml::Value)>, ManifestError> {
    match table.get(section) {
        None => Ok(Vec::new()),
        Some(toml::Value::Array(items)) => Ok(items
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("{section}[{i}]"), v))
            .collect()),
        Some(_) => Err(ctx.err(
            Some(section.into()),
            None,
            format!("must be an array of tables ([[{section}]])"),
        )),
    }
}

fn typed<T: for<'de> Deserialize<'de>>(
    ctx: &Ctx<'_>,
    entry: String,
    value: &toml::Value,
) -> Result<T, ManifestError> {
    value
        .clone()
        .try_into()
        .map_err(|e: toml::de::Error| ctx.err(Some(entry), None, e.message().trim().to_owned()))
}

fn non_empty(
    ctx: &Ctx<'_>,
    entry: String,
    field: &str,
    value: &str,
) -> Result<String, ManifestError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        Err(ctx.err(Some(entry), Some(field), "must not be empty"))
    } else {
        Ok(trimmed.to_owned())
    }
}

fn secret_string(
    ctx: &Ctx<'_>,
    entry: &str,
    field: &str,
    value: Option<toml::Value>,
) -> Result<Option<String>, ManifestError> {
    match value {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ctx.err(Some(entry.to_owned()), Some(field), "must be a string")),
    }
}

fn unique(
    ctx: &Ctx<'_>,
    section: &str,
    field: &str,
    values: impl Iterator<Item = String>,
) -> Result<(), ManifestError> {
    let mut seen = BTreeSet::new();
    for (i, value) in values.enumerate() {
        if !seen.insert(value.clone()) {
            return Err(ctx.err(
                Some(format!("{section}[{i}]")),
                Some(field),
                format!("duplicate {field} \"{value}\" (already used by an earlier entry)"),
            ));
        }
    }
    Ok(())
}

fn parse_store(
    ctx: &Ctx<'_>,
    entry: String,
    value: &toml::Value,
) -> Result<StoreSpec, ManifestError> {
    let raw: RawStore = typed(ctx, entry.clone(), value)?;
    Ok(StoreSpec {
        key: non_empty(ctx, entry.clone(), "key", &raw.key)?,
        name: non_empty(ctx, entry, "name", &raw.name)?,
    })
}

fn parse_user(
    ctx: &Ctx<'_>,
    entry: String,
    value: &toml::Value,
) -> Result<UserSpec, ManifestError> {
    let raw: RawUser = typed(ctx, entry.clone(), value)?;
    let email = raw.email.trim().to_lowercase();
    let entry = format!("{entry} ({email})");
    if !is_plausible_email(&email) {
        return Err(ctx.err(Some(entry), Some("email"), "is not an email address"));
    }
    let role = Role::from_manifest_name(raw.role.trim()).ok_or_else(|| {
        ctx.err(
            Some(entry.clone()),
            Some("role"),
            format!(
                "unknown role \"{}\"; expected one of {}",
                raw.role,
                Role::MANIFEST_NAMES
            ),
        )
    })?;
    let password = secret_string(ctx, &entry, "password", raw.password)?;
    let password_hash = secret_string(ctx, &entry, "password_hash", raw.password_hash)?;
    let password = match (password, password_hash) {
        (Some(_), Some(_)) => {
            return Err(ctx.err(
                Some(entry),
                Some("password"),
                "give password or password_hash, not both",
            ))
        }
        (None, None) => {
            return Err(ctx.err(Some(entry), Some("password"), "required (or password_hash)"))
        }
        (Some(p), None) if p.chars().count() < MIN_PASSWORD_LEN => {
            return Err(ctx.err(
                Some(entry),
                Some("password"),
                format!("must be at least {MIN_PASSWORD_LEN} characters"),
            ))
        }
        (Some(p), None) => PasswordSpec::Plain(p),
        (None, Some(h)) if crypto::is_password_hash(&h) => PasswordSpec::Hash(h),
        (None, Some(_)) => {
            return Err(ctx.err(
                Some(entry),
                Some("password_hash"),
                "is not a pbkdf2-sha256$<iterations>$<salt>$<hash> value",
            ))
        }
    };
    Ok(UserSpec {
        email,
        password,
        role,
        first_name: raw.first_name.filter(|s| !s.trim().is_empty()),
        last_name: raw.last_name.filter(|s| !s.trim().is_empty()),
    })
}

fn parse_app(ctx: &Ctx<'_>, entry: String, value: &toml::Value) -> Result<AppSpec, ManifestError> {
    let raw: RawApp = typed(ctx, entry.clone(), value)?;
    let client_id = raw.client_id.trim().to_owned();
    let entry = format!("{entry} ({client_id})");
    if client_id.is_empty()
        || !client_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(ctx.err(
            Some(entry),
            Some("client_id"),
            "must be non-empty and use only letters, digits, '-', '_' and '.'",
        ));
    }
    let name = non_empty(ctx, entry.clone(), "name", &raw.name)?;
    let secret = secret_string(ctx, &entry, "client_secret", raw.client_secret)?
        .ok_or_else(|| ctx.err(Some(entry.clone()), Some("client_secret"), "required"))?;
    if secret.len() < MIN_SECRET_LEN {
        return Err(ctx.err(
            Some(entry),
            Some("client_secret"),
            format!("must be at least {MIN_SECRET_LEN} characters"),
        ));
    }
    if raw.redirect_uris.is_empty() {
        return Err(ctx.err(Some(entry), Some("redirect_uris"), "needs at least one URI"));
    }
    for (i, uri) in raw.redirect_uris.iter().enumerate() {
        redirect_uri::validate(uri)
            .map_err(|m| ctx.err(Some(entry.clone()), Some(&format!("redirect_uris[{i}]")), m))?;
    }
    Ok(AppSpec {
        name,
        client_id,
        secret_hash: crypto::sha256_hex(&secret),
        redirect_uris: raw.redirect_uris,
        description: raw.description,
    })
}

fn is_plausible_email(email: &str) -> bool {
    let mut parts = email.split('@');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(local), Some(domain), None) => {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !email.chars().any(|c| c.is_whitespace() || c.is_control())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod props {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn any_text_is_a_manifest_or_an_error_naming_the_file(text in "(.|\n){0,400}") {
            if let Err(e) = Manifest::parse("fuzz.toml", &text) {
                prop_assert!(e.to_string().starts_with("fuzz.toml"), "{e}");
            }
        }

        #[test]
        fn a_secret_is_never_echoed_by_an_error(secret in "[a-z0-9]{12,24}", role in "[a-z]{3,10}") {
            let text = format!(
                "[merchant]\nkey = \"m\"\nname = \"M\"\n[[users]]\nemail = \"o@m.test\"\n\
                 password = \"{secret}\"\nrole = \"{role}\"\n[[applications]]\nname = \"A\"\n\
                 client_id = \"a\"\nclient_secret = \"{secret}x\"\nredirect_uris = [\"http://127.0.0.1:1/cb\"]\n"
            );
            if let Err(e) = Manifest::parse("m.toml", &text) {
                prop_assert!(!e.to_string().contains(&secret), "{e}");
            }
        }
    }
}
