//! Reading the fields of one written object, collecting every problem with its field name.
//! Updates are partial: [`Patch`] says whether a field was left out, set, or cleared with null.

use serde_json::{Map, Value};

use super::dates;
use super::record::{Limits, RecordDecl};

/// What a text field without a declared `max_len` takes at most; a test of the registry
/// holds every declared text to a limit of its own, so no write reaches it.
const UNDECLARED_TEXT: usize = 2_000;

/// A field of an update: left out, cleared (`null`) or set.
#[derive(Clone, Debug, PartialEq)]
pub enum Patch<T> {
    Keep,
    Clear,
    Set(T),
}

impl<T> Patch<T> {
    /// The patch of another type of value.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Patch<U> {
        match self {
            Patch::Keep => Patch::Keep,
            Patch::Clear => Patch::Clear,
            Patch::Set(v) => Patch::Set(f(v)),
        }
    }
}

impl<T: Clone> Patch<T> {
    /// The new value of a nullable field.
    pub fn apply(self, current: Option<T>) -> Option<T> {
        match self {
            Patch::Keep => current,
            Patch::Clear => None,
            Patch::Set(v) => Some(v),
        }
    }
}

/// A write ran out of the identifiers reserved for it; a problem of that write (or of the
/// object that needed one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoIdentifier;

impl From<NoIdentifier> for String {
    fn from(_: NoIdentifier) -> Self {
        "no identifier was available.".to_owned()
    }
}

impl From<NoIdentifier> for Vec<String> {
    fn from(missing: NoIdentifier) -> Self {
        vec![missing.into()]
    }
}

/// How many entries of the child object `key` (lines, instances, items keyed by client keys)
/// have no `id`: each is new and takes an identifier.
pub fn new_children(fields: &Map<String, Value>, key: &str) -> usize {
    match fields.get(key) {
        Some(Value::Object(entries)) => entries
            .values()
            .filter(|e| e.get("id").is_none_or(Value::is_null))
            .count(),
        _ => 0,
    }
}

/// The next identifier reserved for a write.
pub fn next_id(ids: &mut dyn Iterator<Item = i64>) -> Result<i64, NoIdentifier> {
    ids.next().ok_or(NoIdentifier)
}

/// What a record's writes accept: the names its validator knows, the read-only names it drops
/// silently, and its nested collections (keyed by client key in a write, by id in a read). The
/// API description is generated from these, so it cannot name a field the validator refuses.
pub struct Shape {
    pub writable: &'static [&'static str],
    pub read_only: &'static [&'static str],
    pub nested: &'static [(&'static str, Shape)],
}

impl Shape {
    /// The shape of a declared record without nested collections.
    pub const fn of<R: super::record::Declared>() -> Self {
        Self::flat(R::WRITABLE, R::READ_ONLY)
    }

    /// The shape of a declared record whose writes nest collections of children.
    pub const fn nested<R: super::record::Declared>(
        nested: &'static [(&'static str, Shape)],
    ) -> Self {
        Self {
            writable: R::WRITABLE,
            read_only: R::READ_ONLY,
            nested,
        }
    }

    pub const fn flat(
        writable: &'static [&'static str],
        read_only: &'static [&'static str],
    ) -> Self {
        Self {
            writable,
            read_only,
            nested: &[],
        }
    }
}

/// The fields of one object and the problems found so far.
pub struct Fields {
    map: Map<String, Value>,
    pub problems: Vec<String>,
    /// The record's declaration, whose limits the checks read.
    decl: Option<&'static RecordDecl>,
}

impl Fields {
    /// Rejects fields outside `known` (read-only fields in `ignored` are dropped silently).
    pub fn new(mut map: Map<String, Value>, known: &[&str], ignored: &[&str]) -> Self {
        let mut problems = Vec::new();
        for key in map.keys() {
            if !known.contains(&key.as_str()) && !ignored.contains(&key.as_str()) {
                problems.push(format!("{key}: unknown field."));
            }
        }
        map.retain(|k, _| known.contains(&k.as_str()));
        Self {
            map,
            problems,
            decl: None,
        }
    }

    /// The fields a declared record's writes accept.
    pub fn declared<R: super::record::Declared>(map: Map<String, Value>) -> Self {
        Self {
            decl: Some(R::DECL),
            ..Self::new(map, R::WRITABLE, R::READ_ONLY)
        }
    }

    /// The declared limits of field `key` (none for an object without a declaration).
    fn limits(&self, key: &str) -> Limits {
        self.decl
            .and_then(|d| d.fields.iter().find(|f| f.name == key))
            .map(|f| f.limits)
            .unwrap_or_default()
    }

    /// The value the write gives `key`, as sent.
    pub fn value(&self, key: &str) -> Option<&Value> {
        self.map.get(key)
    }

    pub fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    fn problem(&mut self, key: &str, message: impl AsRef<str>) {
        self.problems.push(format!("{key}: {}", message.as_ref()));
    }

    /// A required text the record holds as `""` until first written (a name, a title): the
    /// text written, else `current`; `None` while it is still empty, for [`Self::require`].
    pub fn required_text(&mut self, key: &str, current: &str) -> Option<String> {
        self.text(key)
            .apply(Some(current.to_owned()).filter(|t| !t.is_empty()))
    }

    /// A text field of the record, as long as its declaration allows (`max_len`); empty text
    /// counts as missing.
    pub fn text(&mut self, key: &str) -> Patch<String> {
        let max = self.limits(key).max_len.unwrap_or(UNDECLARED_TEXT);
        self.text_within(key, max)
    }

    /// A text field of `max` characters at most (an object without a declaration).
    pub fn text_within(&mut self, key: &str, max: usize) -> Patch<String> {
        match self.map.get(key) {
            None => Patch::Keep,
            Some(Value::Null) => Patch::Clear,
            Some(Value::String(s)) if s.trim().is_empty() => Patch::Clear,
            Some(Value::String(s)) if s.chars().count() > max => {
                self.problem(key, format!("at most {max} characters."));
                Patch::Keep
            }
            Some(Value::String(s)) => Patch::Set(s.trim().to_owned()),
            Some(_) => {
                self.problem(key, "must be a string.");
                Patch::Keep
            }
        }
    }

    /// A number field of the record, given as a JSON number or a decimal string, within its
    /// declared range (`min`, `max`).
    pub fn number(&mut self, key: &str) -> Patch<f64> {
        let limits = self.limits(key);
        let min = limits.min.unwrap_or(f64::MIN);
        let max = limits.max.unwrap_or(f64::MAX);
        self.number_within(key, min, max)
    }

    /// A number given as a JSON number or a decimal string, within `min..=max`.
    pub fn number_within(&mut self, key: &str, min: f64, max: f64) -> Patch<f64> {
        let value = match self.map.get(key) {
            None => return Patch::Keep,
            Some(Value::Null) => return Patch::Clear,
            Some(Value::Number(n)) => n.as_f64(),
            Some(Value::String(s)) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
            Some(_) => None,
        };
        match value {
            Some(v) if (min..=max).contains(&v) => Patch::Set(v),
            Some(_) => {
                self.problem(key, format!("must be between {min} and {max}."));
                Patch::Keep
            }
            None => {
                self.problem(key, "must be a number.");
                Patch::Keep
            }
        }
    }

    /// A non-negative integer (an id).
    pub fn integer(&mut self, key: &str) -> Patch<i64> {
        match self.map.get(key) {
            None => Patch::Keep,
            Some(Value::Null) => Patch::Clear,
            Some(Value::Number(n)) if n.as_i64().is_some_and(|v| v >= 0) => {
                Patch::Set(n.as_i64().unwrap_or_default())
            }
            Some(_) => {
                self.problem(key, "must be a non-negative integer.");
                Patch::Keep
            }
        }
    }

    pub fn boolean(&mut self, key: &str) -> Option<bool> {
        match self.map.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => {
                self.problem(key, "must be true or false.");
                None
            }
        }
    }

    pub fn date(&mut self, key: &str) -> Patch<i64> {
        match self.map.get(key) {
            None => Patch::Keep,
            Some(Value::Null) => Patch::Clear,
            Some(Value::String(s)) => match dates::parse(s) {
                Ok(ms) => Patch::Set(ms),
                Err(e) => {
                    let e = e.clone();
                    self.problem(key, e);
                    Patch::Keep
                }
            },
            Some(_) => {
                self.problem(key, "must be a date string.");
                Patch::Keep
            }
        }
    }

    /// An id naming a live record of the merchant (`what`: "a customer"), or `current`, the
    /// one the record names already, kept even if deleted since. `None`: the id is neither,
    /// a problem of the field.
    pub fn reference(
        &mut self,
        key: &str,
        current: Option<i64>,
        live: &dyn Fn(i64) -> bool,
        what: &str,
    ) -> Option<Patch<i64>> {
        let patch = self.integer(key);
        self.live(key, patch, current, live, what)
    }

    /// A reference the create sets and the record keeps (a basket's store): once created,
    /// another id is refused with `moved`; a new one must name a live record. `None`: refused,
    /// a problem of the field.
    pub fn fixed_reference(
        &mut self,
        key: &str,
        current: i64,
        creating: bool,
        live: &dyn Fn(i64) -> bool,
        what: &str,
        moved: &str,
    ) -> Option<Patch<i64>> {
        match self.integer(key) {
            Patch::Set(id) if !creating && id != current => {
                self.problem(key, moved);
                None
            }
            patch => self.live(key, patch, None, live, what),
        }
    }

    /// A [`Self::fixed_reference`] written into `id` (a basket's or a count's store): set by a
    /// create, kept after; clearing it once created is refused.
    pub fn set_fixed_reference(
        &mut self,
        key: &str,
        id: &mut i64,
        creating: bool,
        live: &dyn Fn(i64) -> bool,
        what: &str,
        moved: &str,
    ) {
        match self.fixed_reference(key, *id, creating, live, what, moved) {
            Some(Patch::Set(set)) => *id = set,
            Some(Patch::Clear) if !creating => self.problem(key, "cannot be cleared."),
            _ => {}
        }
    }

    fn live(
        &mut self,
        key: &str,
        patch: Patch<i64>,
        current: Option<i64>,
        live: &dyn Fn(i64) -> bool,
        what: &str,
    ) -> Option<Patch<i64>> {
        match patch {
            Patch::Set(id) if current != Some(id) && !live(id) => {
                self.problem(key, format!("{id} is not {what} of this merchant."));
                None
            }
            patch => Some(patch),
        }
    }

    /// Whether a problem of field `key` was found already.
    pub fn has_problem(&self, key: &str) -> bool {
        let prefix = format!("{key}:");
        self.problems.iter().any(|p| p.starts_with(&prefix))
    }

    /// Records a missing required field (unless the field has a problem already).
    pub fn require<T>(&mut self, key: &str, value: &Option<T>) {
        if value.is_none() && !self.has_problem(key) {
            self.problem(key, "required field is missing.");
        }
    }

    /// Records a problem found by a rule that spans fields or needs state.
    pub fn reject(&mut self, key: &str, message: impl AsRef<str>) {
        self.problem(key, message);
    }

    pub fn finish(self) -> Result<(), Vec<String>> {
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(self.problems)
        }
    }
}

/// The path (`instances: k: name`) of the first field name or string holding a NUL
/// character, which no text column can store on PostgreSQL.
pub fn nul_at(fields: &Map<String, Value>) -> Option<String> {
    fields.iter().find_map(|(key, value)| {
        if key.contains('\0') {
            return Some(key.replace('\0', "\\0"));
        }
        nul_in(value).map(|inner| match inner {
            None => key.clone(),
            Some(path) => format!("{key}: {path}"),
        })
    })
}

/// `Some(None)` when the value is a string with a NUL, `Some(Some(path))` when a field inside
/// it holds one.
fn nul_in(value: &Value) -> Option<Option<String>> {
    match value {
        Value::String(text) => text.contains('\0').then_some(None),
        Value::Object(inner) => nul_at(inner).map(Some),
        Value::Array(items) => items.iter().find_map(nul_in),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(v: Value) -> Fields {
        Fields::new(
            v.as_object().unwrap().clone(),
            &["name", "lat", "when"],
            &["id"],
        )
    }

    #[test]
    fn unknown_fields_are_named_and_read_only_ones_ignored() {
        let f = fields(json!({"name": "x", "notAField": 1, "id": 3}));
        assert_eq!(f.problems, vec!["notAField: unknown field."]);
    }

    #[test]
    fn partial_updates_distinguish_keep_clear_and_set() {
        let mut f = fields(json!({"name": null, "lat": "51.5"}));
        assert_eq!(f.text_within("name", 10), Patch::Clear);
        assert_eq!(f.number_within("lat", -90.0, 90.0), Patch::Set(51.5));
        assert_eq!(f.date("when"), Patch::Keep);
        assert!(f.finish().is_ok());
    }

    #[test]
    fn bad_values_are_collected() {
        let mut f = fields(json!({"name": 3, "lat": 91, "when": "yesterday"}));
        f.text_within("name", 10);
        f.number_within("lat", -90.0, 90.0);
        f.date("when");
        assert_eq!(f.finish().unwrap_err().len(), 3);
    }

    #[test]
    fn a_nul_anywhere_is_found_with_its_path() {
        let fields = |v: serde_json::Value| v.as_object().unwrap().clone();
        assert_eq!(
            nul_at(&fields(serde_json::json!({"name": "Tea", "n": 1}))),
            None
        );
        assert_eq!(
            nul_at(&fields(
                serde_json::json!({"instances": {"k": {"name": "a\u{0}"}}})
            )),
            Some("instances: k: name".into())
        );
        assert_eq!(
            nul_at(&fields(serde_json::json!({"tags": [["x\u{0}"]]}))),
            Some("tags".into())
        );
        assert_eq!(
            nul_at(&fields(serde_json::json!({"a\u{0}": 1}))),
            Some("a\\0".into())
        );
    }
}
