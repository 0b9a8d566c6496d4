//! The catalogue file: a merchant's products, their price instances, categories and opening
//! stock per store, as CSV (docs/catalogue.md). An import is parsed here, at the edge, into
//! typed rows; an export is rendered from the same types, so a file exported from one merchant
//! and imported into an empty one exports the same bytes again.
//!
//! One row per price instance; a row whose `product` cell is empty adds another instance to the
//! product above it. Columns, in any order, names case-insensitive (`Tax Rate` is `tax_rate`):
//! `product` (required), `barcode`, `category` (paths `Drinks > Hot`, several split by `|`),
//! `instance`, `price` (minor units), `tax_rate` (a fraction), and `stock:<store name>` for the
//! opening stock at each store.
//!
//! Text cells that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, a tab
//! or a carriage return) are exported behind a `'`, and one leading `'` is removed on import.

use serde::{Deserialize, Serialize};

/// The fixed columns, in the order an export writes them; `stock:<store>` columns follow.
pub const COLUMNS: [&str; 6] = [
    "product", "barcode", "category", "instance", "price", "tax_rate",
];
/// The prefix of a store's opening-stock column.
pub const STOCK_PREFIX: &str = "stock:";
/// Between the titles of a category path, and between a product's categories.
const PATH_SEPARATOR: char = '>';
const LIST_SEPARATOR: char = '|';

/// A parsed catalogue file, or one about to be rendered.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CatalogueFile {
    /// The stores of the `stock:` columns, by name, in column order.
    pub stores: Vec<String>,
    pub products: Vec<FileProduct>,
}

/// One product: its first row and the rows that add instances to it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileProduct {
    /// The row number of its first row (the header is row 1).
    pub row: usize,
    pub name: String,
    pub barcode: Option<String>,
    /// Category paths, each from the top category down to the product's own.
    pub categories: Vec<Vec<String>>,
    pub instances: Vec<FileInstance>,
    /// Opening stock as (index into `stores`, units).
    pub stock: Vec<(usize, i64)>,
    /// What is wrong with its rows as written, before any rule of the merchant is applied.
    pub problems: Vec<RowProblem>,
}

/// One price instance, as written: price and rate are checked by the product's own rules.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileInstance {
    pub row: usize,
    pub name: Option<String>,
    pub price: Option<String>,
    pub tax_rate: Option<String>,
}

/// What is wrong with a cell of a row (`column` empty when it is the row as a whole).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowProblem {
    pub row: usize,
    pub column: String,
    pub message: String,
}

impl RowProblem {
    pub fn new(row: usize, column: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            row,
            column: column.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for RowProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.column.as_str() {
            "" => write!(f, "row {}: {}", self.row, self.message),
            column => write!(f, "row {}, {column}: {}", self.row, self.message),
        }
    }
}

/// A file that cannot be read as a catalogue at all: nothing in it is looked at further.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FileError {
    #[error("the file is empty: it needs a header row ({}, stock:<store>...).", COLUMNS.join(","))]
    Empty,
    #[error("header: {0}")]
    Header(String),
    #[error("row {row}: {message}")]
    Unreadable { row: usize, message: String },
}

/// Told how many of the file's products an import has checked so far (a progress bar).
pub type Progress = std::sync::Arc<dyn Fn(usize) + Send + Sync>;

/// How an import treats rows with problems, and who hears how far it got.
#[derive(Clone, Default)]
pub struct ImportOptions {
    /// Import the valid products and report the others, instead of importing nothing.
    pub skip_invalid: bool,
    pub progress: Option<Progress>,
}

impl std::fmt::Debug for ImportOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportOptions")
            .field("skip_invalid", &self.skip_invalid)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// What an import did, or why it did nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    /// Whether anything was written (false when a problem stopped the whole file).
    pub written: bool,
    pub products: usize,
    pub instances: usize,
    /// Categories the import created (those it found by path were used as they are).
    pub categories: usize,
    /// The completed stock counts that booked the opening stock, one a store.
    pub stock_counts: Vec<i64>,
    /// Rows of products left out (with `skip_invalid`).
    pub skipped_rows: Vec<usize>,
    pub problems: Vec<RowProblem>,
}

impl ImportReport {
    /// Nothing was imported because rows were refused.
    pub fn refused_whole(&self) -> bool {
        !self.written && !self.problems.is_empty()
    }

    /// How many rows have a problem.
    pub fn refused_rows(&self) -> usize {
        let rows: std::collections::BTreeSet<usize> = self.problems.iter().map(|p| p.row).collect();
        rows.len()
    }
}

/// A text cell as exported: behind a `'` when a spreadsheet would run it as a formula (or when
/// it starts with `'` itself, so that the import's removal of one gives it back).
fn guard(text: &str) -> String {
    match text.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r' | '\'') => format!("'{text}"),
        _ => text.to_owned(),
    }
}

fn unguard(text: &str) -> &str {
    text.strip_prefix('\'').unwrap_or(text)
}

/// A product's categories as one cell, in a fixed order (so the cell does not depend on the
/// order the merchant created its categories in).
fn categories_cell(paths: &[Vec<String>]) -> String {
    let mut rendered: Vec<String> = paths
        .iter()
        .map(|path| {
            path.iter()
                .map(|t| escape(t))
                .collect::<Vec<_>>()
                .join(" > ")
        })
        .collect();
    rendered.sort();
    rendered.dedup();
    guard(&rendered.join(" | "))
}

/// Writes the file: the header, then a row per instance (a product without one gets a row of
/// its own), the product's cells on its first row only.
pub fn render(file: &CatalogueFile) -> std::io::Result<Vec<u8>> {
    let mut out = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    let mut header: Vec<String> = COLUMNS.iter().map(|c| (*c).to_owned()).collect();
    header.extend(file.stores.iter().map(|s| format!("{STOCK_PREFIX}{s}")));
    out.write_record(&header)?;
    for product in &file.products {
        let mut stock = vec![String::from("0"); file.stores.len()];
        for (store, units) in &product.stock {
            if let Some(cell) = stock.get_mut(*store) {
                *cell = units.to_string();
            }
        }
        let first = [
            guard(&product.name),
            guard(product.barcode.as_deref().unwrap_or_default()),
            categories_cell(&product.categories),
        ];
        let blank = || [String::new(), String::new(), String::new()];
        let none = [FileInstance::default()];
        let instances = match product.instances.as_slice() {
            [] => &none[..],
            all => all,
        };
        for (i, instance) in instances.iter().enumerate() {
            let mut record: Vec<String> = Vec::with_capacity(header.len());
            record.extend(if i == 0 { first.clone() } else { blank() });
            record.push(guard(instance.name.as_deref().unwrap_or_default()));
            record.push(instance.price.clone().unwrap_or_default());
            record.push(instance.tax_rate.clone().unwrap_or_default());
            if i == 0 {
                record.extend(stock.iter().cloned());
            } else {
                record.extend(std::iter::repeat_n(String::new(), stock.len()));
            }
            out.write_record(&record)?;
        }
    }
    out.into_inner().map_err(|e| e.into_error())
}

mod parse;

use parse::escape;
pub use parse::parse;
#[cfg(test)]
use parse::CONTINUATION;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod props {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn any_bytes_are_a_catalogue_or_a_reason(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn any_text_cells_survive_a_round_trip(
            name in "[^\u{0}]{1,20}",
            titles in proptest::collection::vec("[^\u{0}]{1,10}", 0..3),
        ) {
            let name = name.trim().to_owned();
            let titles: Vec<String> = titles.iter().map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()).collect();
            prop_assume!(!name.is_empty());
            let file = CatalogueFile {
                stores: vec!["S".into()],
                products: vec![FileProduct {
                    row: 2,
                    name,
                    categories: if titles.is_empty() { vec![] } else { vec![titles] },
                    stock: vec![(0, 1)],
                    ..Default::default()
                }],
            };
            let bytes = render(&file).unwrap();
            let back = parse(&bytes).unwrap();
            prop_assert_eq!(render(&back).unwrap(), bytes);
            prop_assert_eq!(back, file);
        }
    }
}
