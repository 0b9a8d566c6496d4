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

use crate::money::MAX_QUANTITY;

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

/// Where each column of the file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    Product,
    Barcode,
    Category,
    Instance,
    Price,
    TaxRate,
    Stock(usize),
}

struct Layout {
    columns: Vec<Column>,
    stores: Vec<String>,
    /// Where each fixed column is (by [`fixed_index`]) and each store's column: found once,
    /// not per cell.
    fixed_at: [Option<usize>; 6],
    stock_at: Vec<usize>,
}

impl Layout {
    fn parse(header: &csv::StringRecord) -> Result<Self, FileError> {
        let mut columns = Vec::with_capacity(header.len());
        let mut stores: Vec<String> = Vec::new();
        for cell in header {
            let cell = cell.trim();
            let column = if let Some(store) = strip_prefix_ignore_case(cell, STOCK_PREFIX) {
                let store = store.trim();
                if store.is_empty() {
                    return Err(FileError::Header(format!(
                        "\"{cell}\" names no store: write stock:<store name>."
                    )));
                }
                if stores.iter().any(|s| s.eq_ignore_ascii_case(store)) {
                    return Err(FileError::Header(format!(
                        "the store \"{store}\" has two stock columns."
                    )));
                }
                stores.push(store.to_owned());
                Column::Stock(stores.len() - 1)
            } else {
                fixed_column(cell)?
            };
            if !matches!(column, Column::Stock(_)) && columns.contains(&column) {
                return Err(FileError::Header(format!(
                    "the column \"{cell}\" appears twice."
                )));
            }
            columns.push(column);
        }
        if !columns.contains(&Column::Product) {
            return Err(FileError::Header(format!(
                "the column \"product\" is missing (the columns are {}, stock:<store>...).",
                COLUMNS.join(", ")
            )));
        }
        let mut fixed_at = [None; 6];
        let mut stock_at = vec![0; stores.len()];
        for (at, column) in columns.iter().enumerate() {
            match column {
                Column::Stock(store) => stock_at[*store] = at,
                fixed => fixed_at[fixed_index(*fixed)] = Some(at),
            }
        }
        Ok(Self {
            columns,
            stores,
            fixed_at,
            stock_at,
        })
    }

    fn position(&self, column: Column) -> Option<usize> {
        match column {
            Column::Stock(store) => self.stock_at.get(store).copied(),
            fixed => self.fixed_at.get(fixed_index(fixed)).copied().flatten(),
        }
    }

    fn name(&self, column: Column) -> String {
        match column {
            Column::Stock(i) => format!("{STOCK_PREFIX}{}", self.stores[i]),
            fixed => COLUMNS[fixed_index(fixed)].to_owned(),
        }
    }
}

fn fixed_index(column: Column) -> usize {
    match column {
        Column::Product => 0,
        Column::Barcode => 1,
        Column::Category => 2,
        Column::Instance => 3,
        Column::Price => 4,
        Column::TaxRate => 5,
        Column::Stock(_) => 6,
    }
}

fn fixed_column(cell: &str) -> Result<Column, FileError> {
    let normal: String = cell
        .chars()
        .map(|c| match c {
            ' ' | '-' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    Ok(match normal.as_str() {
        "product" => Column::Product,
        "barcode" => Column::Barcode,
        "category" => Column::Category,
        "instance" | "instance_name" => Column::Instance,
        "price" => Column::Price,
        "tax_rate" => Column::TaxRate,
        _ => {
            return Err(FileError::Header(format!(
                "unknown column \"{cell}\" (the columns are {}, stock:<store>...).",
                COLUMNS.join(", ")
            )))
        }
    })
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// One data row's cells by column.
struct Cells<'a> {
    row: usize,
    layout: &'a Layout,
    record: &'a csv::StringRecord,
}

impl Cells<'_> {
    /// The trimmed cell, `None` when empty or the column is absent.
    fn get(&self, column: Column) -> Option<&str> {
        let at = self.layout.position(column)?;
        Some(self.record.get(at)?.trim()).filter(|c| !c.is_empty())
    }

    fn text(&self, column: Column) -> Option<String> {
        self.get(column)
            .map(unguard)
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
    }

    fn problem(&self, column: Column, message: impl Into<String>) -> RowProblem {
        RowProblem::new(self.row, self.layout.name(column), message)
    }

    fn instance(&self) -> Option<FileInstance> {
        let instance = FileInstance {
            row: self.row,
            name: self.text(Column::Instance),
            price: self.get(Column::Price).map(str::to_owned),
            tax_rate: self.get(Column::TaxRate).map(str::to_owned),
        };
        let any =
            instance.name.is_some() || instance.price.is_some() || instance.tax_rate.is_some();
        any.then_some(instance)
    }

    fn stock(&self, problems: &mut Vec<RowProblem>) -> Vec<(usize, i64)> {
        let mut stock = Vec::new();
        for store in 0..self.layout.stores.len() {
            let Some(cell) = self.get(Column::Stock(store)) else {
                continue;
            };
            match cell.parse::<i64>() {
                Ok(n) if (0..=MAX_QUANTITY).contains(&n) => stock.push((store, n)),
                _ => problems.push(self.problem(
                    Column::Stock(store),
                    format!("\"{cell}\" is not a whole number of units from 0 to {MAX_QUANTITY}."),
                )),
            }
        }
        stock
    }

    /// A row with a product: a new product.
    fn product(&self, name: String) -> FileProduct {
        let mut problems = Vec::new();
        let categories = match self.text(Column::Category) {
            None => Vec::new(),
            Some(cell) => parse_categories(&cell).unwrap_or_else(|why| {
                problems.push(self.problem(Column::Category, why));
                Vec::new()
            }),
        };
        let stock = self.stock(&mut problems);
        FileProduct {
            row: self.row,
            name,
            barcode: self.text(Column::Barcode),
            categories,
            instances: self.instance().into_iter().collect(),
            stock,
            problems,
        }
    }

    /// A row without a product adds an instance to `product`, and may carry nothing else.
    fn continue_product(&self, product: &mut FileProduct) {
        for column in [Column::Barcode, Column::Category] {
            if self.get(column).is_some() {
                product.problems.push(self.problem(column, CONTINUATION));
            }
        }
        for store in 0..self.layout.stores.len() {
            if self.get(Column::Stock(store)).is_some() {
                product
                    .problems
                    .push(self.problem(Column::Stock(store), CONTINUATION));
            }
        }
        product.instances.extend(self.instance());
    }
}

const CONTINUATION: &str = "only a product's first row carries it (this row's product cell is \
                            empty, so it adds an instance to the product above).";

/// Reads a catalogue file. Problems of single rows are kept with their product (so an import
/// can report every row at once); only a file that is not a catalogue at all is an error.
pub fn parse(bytes: &[u8]) -> Result<CatalogueFile, FileError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut rows = Rows {
        bytes,
        reader: csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(bytes),
        row: 0,
    };
    let mut header = csv::StringRecord::new();
    if rows.next(&mut header)?.is_none() {
        return Err(FileError::Empty);
    }
    let layout = Layout::parse(&header)?;
    let mut products: Vec<FileProduct> = Vec::new();
    let mut record = csv::StringRecord::new();
    while let Some(row) = rows.next(&mut record)? {
        let record = &record;
        if record.iter().all(|cell| cell.trim().is_empty()) {
            continue;
        }
        let cells = Cells {
            row,
            layout: &layout,
            record,
        };
        let width = record.len() != layout.columns.len();
        let nul = record.iter().any(|cell| cell.contains('\0'));
        match (cells.text(Column::Product), products.last_mut()) {
            (Some(name), _) => products.push(cells.product(name)),
            (None, Some(product)) => cells.continue_product(product),
            (None, None) => {
                let mut orphan = cells.product(String::new());
                orphan.problems.push(cells.problem(
                    Column::Product,
                    "required: a row without a product adds an instance to the product above, \
                     and there is none.",
                ));
                products.push(orphan);
            }
        }
        if nul {
            if let Some(product) = products.last_mut() {
                product.problems.push(RowProblem::new(
                    row,
                    "",
                    "holds the NUL character (U+0000), which no text field may hold.",
                ));
            }
        }
        if width {
            if let Some(product) = products.last_mut() {
                product.problems.push(RowProblem::new(
                    row,
                    "",
                    format!(
                        "has {} cells; the header has {}.",
                        record.len(),
                        layout.columns.len()
                    ),
                ));
            }
        }
    }
    refuse_repeated_barcodes(&mut products);
    Ok(CatalogueFile {
        stores: layout.stores,
        products,
    })
}

/// A barcode names one product: a second product with it is refused here, whatever becomes of
/// the first, so that skipping an invalid first one never lets its twin in unnoticed.
fn refuse_repeated_barcodes(products: &mut [FileProduct]) {
    let mut first: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for product in products {
        let Some(code) = &product.barcode else {
            continue;
        };
        match first.get(code) {
            Some(row) => {
                let message =
                    format!("\"{code}\" is also the barcode of the product on row {row}.");
                product
                    .problems
                    .push(RowProblem::new(product.row, "barcode", message));
            }
            None => {
                first.insert(code.clone(), product.row);
            }
        }
    }
}

/// The file's records with the row a spreadsheet shows each on. The csv reader skips empty
/// lines without counting them (and a record's position is where the reader stood, before
/// them); a spreadsheet counts them, and a quoted cell that spans lines is one row. So each
/// record's row follows the empty lines between the previous record and it.
struct Rows<'a> {
    bytes: &'a [u8],
    reader: csv::Reader<&'a [u8]>,
    row: usize,
}

impl Rows<'_> {
    fn next(&mut self, record: &mut csv::StringRecord) -> Result<Option<usize>, FileError> {
        let mut from = usize::try_from(self.reader.position().byte()).unwrap_or(usize::MAX);
        // The reader stops between the CR and the LF of a CR LF: that LF ends the last record.
        if from > 0
            && self.bytes.get(from - 1) == Some(&b'\r')
            && self.bytes.get(from) == Some(&b'\n')
        {
            from += 1;
        }
        match self.reader.read_record(record) {
            Ok(false) => Ok(None),
            Ok(true) => {
                let skipped = empty_lines(self.bytes.get(from..).unwrap_or_default());
                self.row += 1 + skipped;
                Ok(Some(self.row))
            }
            Err(e) => Err(unreadable(self.row + 1, &e)),
        }
    }
}

/// The empty lines `text` starts with (CR LF, LF or CR each end one).
fn empty_lines(text: &[u8]) -> usize {
    let (mut lines, mut at) = (0, 0);
    while let Some(byte) = text.get(at) {
        at += match (byte, text.get(at + 1)) {
            (b'\r', Some(b'\n')) => 2,
            (b'\r' | b'\n', _) => 1,
            _ => break,
        };
        lines += 1;
    }
    lines
}

fn unreadable(row: usize, error: &csv::Error) -> FileError {
    let message = match error.kind() {
        csv::ErrorKind::Utf8 { .. } => "is not UTF-8 text: save the file as CSV UTF-8.".to_owned(),
        _ => format!("cannot be read as CSV ({error})."),
    };
    FileError::Unreadable { row, message }
}

/// `Drinks > Hot | Food` into `[["Drinks", "Hot"], ["Food"]]`; `\` escapes a separator.
fn parse_categories(cell: &str) -> Result<Vec<Vec<String>>, String> {
    let mut paths = Vec::new();
    for path in split_unescaped(cell, LIST_SEPARATOR) {
        let titles: Vec<String> = split_unescaped(&path, PATH_SEPARATOR)
            .iter()
            .map(|t| unescape(t.trim()))
            .collect();
        if titles.iter().any(String::is_empty) {
            return Err(format!(
                "\"{}\" has an empty category title (paths are written Parent > Child, several split by |).",
                path.trim()
            ));
        }
        if !paths.contains(&titles) {
            paths.push(titles);
        }
    }
    Ok(paths)
}

/// Splits at `separator` where no `\` escapes it, keeping the escapes for the next step.
fn split_unescaped(text: &str, separator: char) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                current.push('\\');
                current.extend(chars.next());
            }
            c if c == separator => parts.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    parts.push(current);
    parts
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

fn escape(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    for c in title.chars() {
        if matches!(c, '\\' | PATH_SEPARATOR | LIST_SEPARATOR) {
            out.push('\\');
        }
        out.push(c);
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> CatalogueFile {
        parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn rows_without_a_product_add_instances_to_the_one_above() {
        let file = parsed(
            "product,barcode,category,instance,price,tax_rate,stock:High Street\n\
             Latte,501,Drinks > Hot | Coffee,Eat in,300,0.200,12\n\
             ,,,Take away,280,0.200,\n\
             Scone,,,,150,0,\n",
        );
        assert_eq!(file.stores, ["High Street"]);
        let latte = &file.products[0];
        assert_eq!(latte.row, 2);
        assert_eq!(latte.barcode.as_deref(), Some("501"));
        assert_eq!(latte.categories, [vec!["Drinks", "Hot"], vec!["Coffee"]]);
        assert_eq!(latte.instances.len(), 2);
        assert_eq!(latte.instances[1].row, 3);
        assert_eq!(latte.instances[1].price.as_deref(), Some("280"));
        assert_eq!(latte.stock, [(0, 12)]);
        assert!(latte.problems.is_empty(), "{:?}", latte.problems);
        assert_eq!(file.products[1].instances[0].name, None);
    }

    #[test]
    fn a_rendered_file_parses_back_to_itself() {
        let file = CatalogueFile {
            stores: vec!["High Street".into(), "Station, East".into()],
            products: vec![
                FileProduct {
                    row: 2,
                    name: "=HYPERLINK(\"x\")".into(),
                    barcode: Some("501".into()),
                    categories: vec![vec!["A|B".into(), "C>D".into()], vec!["Back\\slash".into()]],
                    instances: vec![
                        FileInstance {
                            row: 2,
                            name: Some("Eat \"in\"".into()),
                            price: Some("300".into()),
                            tax_rate: Some("0.200".into()),
                        },
                        FileInstance {
                            row: 3,
                            name: None,
                            price: Some("41.7".into()),
                            tax_rate: Some("0".into()),
                        },
                    ],
                    stock: vec![(0, 3), (1, 0)],
                    problems: vec![],
                },
                FileProduct {
                    row: 4,
                    name: "'Tis\nthe season".into(),
                    stock: vec![(0, 0), (1, 7)],
                    ..Default::default()
                },
            ],
        };
        let bytes = render(&file).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.contains("\"'=HYPERLINK(\"\"x\"\")\""), "{text}");
        let mut back = parse(&bytes).unwrap();
        // Categories come back in the rendered (sorted) order.
        back.products[0].categories.sort();
        let mut expected = file.clone();
        expected.products[0].categories.sort();
        assert_eq!(back, expected);
        assert_eq!(render(&back).unwrap(), bytes);
    }

    #[test]
    fn problems_name_their_row_and_column() {
        let file = parsed(
            "Product,Price,Tax Rate,Stock: Main\n\
             ,100,0.2,\n\
             Tea,100,0.2,lots\n\
             ,90,0.2,4\n\
             Cake,1\n",
        );
        let all: Vec<String> = file
            .products
            .iter()
            .flat_map(|p| p.problems.iter().map(ToString::to_string))
            .collect();
        assert_eq!(
            all,
            [
                "row 2, product: required: a row without a product adds an instance to the \
                 product above, and there is none.",
                "row 3, stock:Main: \"lots\" is not a whole number of units from 0 to 1000000.",
                format!("row 4, stock:Main: {CONTINUATION}").as_str(),
                "row 5: has 2 cells; the header has 4.",
            ]
        );
    }

    #[test]
    fn a_file_that_is_not_a_catalogue_is_refused_whole() {
        assert_eq!(parse(b""), Err(FileError::Empty));
        assert!(
            matches!(parse(b"name,price\n"), Err(FileError::Header(m)) if m.contains("unknown column \"name\""))
        );
        assert!(
            matches!(parse(b"price\n"), Err(FileError::Header(m)) if m.contains("\"product\" is missing"))
        );
        assert!(
            matches!(parse(b"product,stock:A,stock:a\n"), Err(FileError::Header(m)) if m.contains("two stock columns"))
        );
        assert!(matches!(
            parse(b"product\nT\xffa\n"),
            Err(FileError::Unreadable { row: 2, .. })
        ));
        // A byte-order mark (Excel's "CSV UTF-8") is not part of the first column's name.
        assert_eq!(parsed("\u{feff}product\nTea\n").products[0].name, "Tea");
    }

    #[test]
    fn a_barcode_repeated_in_the_file_is_refused_on_the_later_row() {
        let file = parsed("product,barcode\nA,111\nB,222\nC,111\n");
        assert!(file.products[0].problems.is_empty());
        assert_eq!(
            file.products[2].problems[0].to_string(),
            "row 4, barcode: \"111\" is also the barcode of the product on row 2."
        );
    }

    #[test]
    fn rows_are_numbered_as_a_spreadsheet_shows_them() {
        // An empty line is a row; a quoted cell over two lines is one.
        let file = parsed("product,price\n\nTea,abc\n\"Two\nlines\",1\nCake,2\n");
        let rows: Vec<usize> = file.products.iter().map(|p| p.row).collect();
        assert_eq!(rows, [3, 4, 5]);
        let file = parsed("\n\nproduct\nTea\n");
        assert_eq!(file.products[0].row, 4);
        let file = parsed("product\r\n\r\nTea\r\nCake\r\n");
        let rows: Vec<usize> = file.products.iter().map(|p| p.row).collect();
        assert_eq!(rows, [3, 4]);
    }

    #[test]
    fn empty_category_titles_are_refused() {
        let file = parsed("product,category\nTea,Drinks >  > Hot\n");
        assert_eq!(file.products[0].problems[0].column, "category");
    }
}

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
