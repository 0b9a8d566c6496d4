//! Logs (`/log`): small JSON documents an application files under an object key.

/// One stored log. `tags` is the comma-separated text; `data` the JSON text of the body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    pub log_id: String,
    pub n: i64,
    pub object: String,
    pub identifier: String,
    pub tags: String,
    pub data: String,
    pub added_date: i64,
    pub complete_date: Option<i64>,
}

/// A new log: the id is made by the store.
#[derive(Clone, Debug)]
pub struct NewLog<'a> {
    pub object: &'a str,
    pub identifier: &'a str,
    pub tags: &'a str,
    pub data: &'a str,
    pub completed: bool,
}

/// A change to a log: fields left `None` keep their value. `completed: Some(true)` sets
/// `complete_date` (keeping an earlier one), `Some(false)` clears it.
#[derive(Clone, Debug, Default)]
pub struct LogChange<'a> {
    pub tags: Option<&'a str>,
    pub data: Option<&'a str>,
    pub completed: Option<bool>,
}
