//! A merchant's archive (docs/operator.md, "Export and import"): every stored row of one
//! merchant as newline-delimited JSON, so an operator can keep it, hand it over, or load it into
//! another database. One header line, then per table a line naming its columns followed by one
//! JSON array per row, then an end line with the counts (a cut archive is refused, not half
//! loaded).
//!
//! ```text
//! {"format":"merchantd-archive","version":1,"schema":29,"merchantId":7,"key":"acme",...}
//! {"table":"products","columns":["id","merchant_id","name",...]}
//! [3,7,"Latte",...]
//! {"end":{"tables":36,"rows":1204}}
//! ```
//!
//! Cells: integers as JSON numbers, text as strings, binary data (uploaded files) as base64
//! strings, doubles as strings in Rust's shortest exact form (a JSON number may lose its last
//! bit in another parser), NULL as `null`.

use serde::{Deserialize, Serialize};

pub const FORMAT: &str = "merchantd-archive";
pub const VERSION: u32 = 1;

/// The archive's first line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Header {
    pub format: String,
    pub version: u32,
    /// The newest migration of the database it came from: only a database at the same schema
    /// takes it.
    pub schema: i64,
    pub merchant_id: i64,
    pub key: String,
    pub export_date: String,
}

/// What a stored column holds, as far as the archive is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int,
    Real,
    Text,
    Bytes,
}

impl Kind {
    /// The kind of a column by its declared type (SQLite's affinity rules, which PostgreSQL's
    /// type names also fit).
    pub fn of_declared(declared: &str) -> Kind {
        let t = declared.to_ascii_uppercase();
        if t.contains("INT") {
            Kind::Int
        } else if t.contains("CHAR") || t.contains("TEXT") || t.contains("CLOB") {
            Kind::Text
        } else if t.contains("BLOB") || t.contains("BYTEA") {
            Kind::Bytes
        } else {
            Kind::Real
        }
    }
}

/// One cell, read from or written to a database.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Bytes(Vec<u8>),
}

/// The counts the end line carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Totals {
    pub tables: u64,
    pub rows: u64,
}

/// One line after the header.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Table { table: String, columns: Vec<String> },
    Row(Vec<serde_json::Value>),
    End(Totals),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TableLine {
    table: String,
    columns: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EndLine {
    end: Totals,
}

impl Line {
    pub fn parse(text: &str) -> Result<Line, String> {
        if text.starts_with('[') {
            return serde_json::from_str(text)
                .map(Line::Row)
                .map_err(|e| format!("a row is not a JSON array: {e}"));
        }
        if let Ok(t) = serde_json::from_str::<TableLine>(text) {
            return Ok(Line::Table {
                table: t.table,
                columns: t.columns,
            });
        }
        serde_json::from_str::<EndLine>(text)
            .map(|e| Line::End(e.end))
            .map_err(|_| "expected a table line, a row or the end line".into())
    }
}

impl Header {
    /// The header of an archive, checked: its format and version are this build's.
    pub fn parse(text: &str) -> Result<Header, String> {
        let header: Header = serde_json::from_str(text)
            .map_err(|e| format!("the first line is not an archive's header: {e}"))?;
        if header.format != FORMAT {
            return Err(format!("the format is {:?}, not {FORMAT}", header.format));
        }
        if header.version != VERSION {
            return Err(format!(
                "archive version {} (this server reads version {VERSION})",
                header.version
            ));
        }
        Ok(header)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_told_apart() {
        assert_eq!(
            Line::parse(r#"{"table":"products","columns":["id","name"]}"#),
            Ok(Line::Table {
                table: "products".into(),
                columns: vec!["id".into(), "name".into()]
            })
        );
        assert_eq!(
            Line::parse("[1,null]"),
            Ok(Line::Row(vec![1.into(), serde_json::Value::Null]))
        );
        assert_eq!(
            Line::parse(r#"{"end":{"tables":2,"rows":5}}"#),
            Ok(Line::End(Totals { tables: 2, rows: 5 }))
        );
        assert!(Line::parse("{\"table\":1}").is_err());
        assert!(Line::parse("[1,").is_err());
        assert!(Header::parse("{}").is_err());
        assert_eq!(Kind::of_declared("BIGINT"), Kind::Int);
        assert_eq!(Kind::of_declared("double precision"), Kind::Real);
        assert_eq!(Kind::of_declared("bytea"), Kind::Bytes);
        assert_eq!(Kind::of_declared("BLOB"), Kind::Bytes);
        assert_eq!(Kind::of_declared("text"), Kind::Text);
    }
}
