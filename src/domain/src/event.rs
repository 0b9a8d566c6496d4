//! Change events: what a committed write appends to its merchant's log (`product.created`,
//! `basket.completed`, …), and the type filters clients subscribe with.

/// An event a write appends, before the log numbers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEvent {
    /// `<object>.<action>`: `product.created`.
    pub kind: EventKind,
    pub object_id: i64,
    /// The object as a read renders it, at the write's commit (JSON text).
    pub data: String,
}

/// An event type, `<object>.<action>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventKind(String);

impl EventKind {
    pub fn new(object: &str, action: &str) -> Self {
        Self(format!("{object}.{action}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An event as the log holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The merchant's sequence number: only increases, no gaps at commit.
    pub seq: i64,
    pub kind: String,
    pub object_id: i64,
    /// Milliseconds since the epoch.
    pub occurred_at: i64,
    pub data: String,
}

/// Which events a subscriber wants: exact types (`basket.completed`) or objects (`product`,
/// meaning every `product.*`). Empty: every event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TypeFilter(Vec<String>);

/// The longest filter entry accepted.
pub const MAX_ENTRY: usize = 64;
/// The most entries a filter may list.
pub const MAX_TYPES: usize = 50;

impl TypeFilter {
    /// Parses a comma-separated list; an entry is letters, digits, `_` and at most one `.`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let entries: Vec<String> = text.split(',').map(|e| e.trim().to_owned()).collect();
        Self::from_entries(&entries)
    }

    /// The same rules for a list (a webhook's `events`).
    pub fn from_entries(entries: &[String]) -> Result<Self, String> {
        if entries.len() > MAX_TYPES {
            return Err(format!("at most {MAX_TYPES} types."));
        }
        let mut kept = Vec::with_capacity(entries.len());
        for (i, raw) in entries.iter().enumerate() {
            let entry = raw.trim();
            let valid = !entry.is_empty()
                && entry.len() <= MAX_ENTRY
                && entry.matches('.').count() <= 1
                && entry
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
            if !valid {
                return Err(format!(
                    "item {} is not an event type or object (for example `product` or `basket.completed`).",
                    i + 1
                ));
            }
            kept.push(entry.trim_end_matches('.').to_owned());
        }
        Ok(Self(kept))
    }

    pub fn matches(&self, kind: &str) -> bool {
        self.0.is_empty()
            || self.0.iter().any(|entry| {
                kind == entry
                    || (kind.len() > entry.len()
                        && kind.starts_with(entry.as_str())
                        && kind.as_bytes()[entry.len()] == b'.')
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_takes_types_and_objects() {
        let filter = TypeFilter::parse("product, basket.completed").unwrap();
        assert!(filter.matches("product.created"));
        assert!(filter.matches("basket.completed"));
        assert!(!filter.matches("basket.created"));
        assert!(!filter.matches("products.created"));
        assert!(TypeFilter::default().matches("anything.at_all"));
        assert!(TypeFilter::parse("product,,x").is_err());
        assert!(TypeFilter::parse("a.b.c").is_err());
        assert!(TypeFilter::parse("<script>").is_err());
    }
}

/// The records of one type (`product`) that events in `(after, upto]` of a merchant's log name.
#[derive(Clone, Copy, Debug)]
pub struct ChangeWindow<'a> {
    pub merchant_id: i64,
    pub object: &'a str,
    pub after: i64,
    pub upto: i64,
}

/// Where a merchant's log stands: its last sequence number and the last one pruned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogPosition {
    pub last: i64,
    pub pruned_through: i64,
}
