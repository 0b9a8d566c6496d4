//! The digest a move compares its two copies of a merchant by (docs/operations.md, "From SQLite
//! to PostgreSQL"), read from the lines of the merchant's archive.

use domain::fleet::archive::Line;

/// What a merchant's archive holds, table by table, in a form two archives can be compared by
/// (a move's verification, docs/operations.md "From SQLite to PostgreSQL"): each table's row
/// count and the sum of its rows' SHA-256 digests. The sum does not depend on the rows' order
/// (SQLite and PostgreSQL sort text differently) and each row is read with its cells sorted by
/// column name (a column added by a later migration may stand elsewhere in the other
/// database).
#[derive(Debug, Clone, Default)]
pub struct Digest {
    tables: std::collections::BTreeMap<String, TableDigest>,
    current: Option<(String, Vec<usize>, Vec<String>)>,
}

/// One table's count and digest sum.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableDigest {
    pub rows: u64,
    sum: [u64; 4],
}

impl Digest {
    /// Takes the next line after the header.
    pub fn line(&mut self, line: &Line) -> Result<(), String> {
        match line {
            Line::Table { table, columns } => {
                let mut order: Vec<usize> = (0..columns.len()).collect();
                order.sort_by(|a, b| columns[*a].cmp(&columns[*b]));
                self.tables.entry(table.clone()).or_default();
                self.current = Some((table.clone(), order, columns.clone()));
            }
            Line::Row(cells) => {
                let Some((table, order, names)) = &self.current else {
                    return Err("a row before any table".into());
                };
                if cells.len() != names.len() {
                    return Err(format!("{table}: a row of {} cells", cells.len()));
                }
                let sorted: Vec<(&str, &serde_json::Value)> = order
                    .iter()
                    .map(|i| (names[*i].as_str(), &cells[*i]))
                    .collect();
                let text = serde_json::to_vec(&sorted).map_err(|e| e.to_string())?;
                let hash = domain::crypto::sha256(&text);
                // The table line made its entry.
                let Some(entry) = self.tables.get_mut(table) else {
                    return Err(format!("{table}: rows without their table"));
                };
                entry.rows += 1;
                for (part, word) in entry.sum.iter_mut().zip(hash.chunks_exact(8)) {
                    let mut bytes = [0u8; 8];
                    bytes.copy_from_slice(word);
                    *part = part.wrapping_add(u64::from_be_bytes(bytes));
                }
            }
            Line::End(_) => self.current = None,
        }
        Ok(())
    }

    /// Tables read.
    pub fn tables(&self) -> u64 {
        self.tables.len() as u64
    }

    /// Rows over every table.
    pub fn rows(&self) -> u64 {
        self.tables.values().map(|t| t.rows).sum()
    }

    /// The tables whose rows differ between `self` and `other`, with their two row counts.
    pub fn differences(&self, other: &Digest) -> Vec<(String, u64, u64)> {
        let names: std::collections::BTreeSet<&String> =
            self.tables.keys().chain(other.tables.keys()).collect();
        names
            .into_iter()
            .filter_map(|name| {
                let a = self.tables.get(name).copied().unwrap_or_default();
                let b = other.tables.get(name).copied().unwrap_or_default();
                (a != b).then(|| (name.clone(), a.rows, b.rows))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_reads_rows_whatever_their_order_or_their_columns_order() {
        let lines = |text: &str| -> Digest {
            let mut digest = Digest::default();
            for line in text.lines() {
                digest.line(&Line::parse(line).unwrap()).unwrap();
            }
            digest
        };
        let a = lines("{\"table\":\"t\",\"columns\":[\"id\",\"name\"]}\n[1,\"a\"]\n[2,\"b\"]");
        let b = lines("{\"table\":\"t\",\"columns\":[\"name\",\"id\"]}\n[\"b\",2]\n[\"a\",1]");
        assert!(a.differences(&b).is_empty());
        let changed =
            lines("{\"table\":\"t\",\"columns\":[\"id\",\"name\"]}\n[1,\"a\"]\n[2,\"c\"]");
        assert_eq!(a.differences(&changed), vec![("t".to_owned(), 2, 2)]);
        let fewer = lines("{\"table\":\"t\",\"columns\":[\"id\",\"name\"]}\n[1,\"a\"]");
        assert_eq!(a.differences(&fewer), vec![("t".to_owned(), 2, 1)]);
    }
}
