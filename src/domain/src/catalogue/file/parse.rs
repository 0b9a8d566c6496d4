//! Reading a catalogue file: its header's columns, each data row's cells, products with the
//! rows that add instances to them, and every problem of a single row kept with its product.

use super::{
    unguard, CatalogueFile, FileError, FileInstance, FileProduct, RowProblem, COLUMNS,
    LIST_SEPARATOR, PATH_SEPARATOR, STOCK_PREFIX,
};
use crate::money::MAX_QUANTITY;

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

pub(super) const CONTINUATION: &str =
    "only a product's first row carries it (this row's product cell is \
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

pub(super) fn escape(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    for c in title.chars() {
        if matches!(c, '\\' | PATH_SEPARATOR | LIST_SEPARATOR) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
