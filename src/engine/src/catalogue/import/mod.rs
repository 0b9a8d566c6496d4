//! A catalogue import (`POST /product/import`, `merchantd catalogue import`): one write that
//! creates the categories the file's paths name, the products with their instances, and a
//! completed stock count a store for the opening stock. Every record passes its resource's own
//! rules against the working state, as an API write would, and all of it is written in one
//! transaction, or nothing is: a file with a refused row writes nothing unless the caller asked
//! to skip invalid products, and then the import runs again without them.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Instant;

use serde_json::{json, Map, Value};

use crate::merchant::job::{replay_methods, send_answer, Answer, Job, Replay};
use crate::merchant::ports::WriteStep;
use crate::merchant::render::Render;
use crate::merchant::resource::Input;
use crate::merchant::state::MerchantState;
use crate::merchant::write::{decide, Changes};
use domain::batch::StoredAnswer;
use domain::batch::{Idempotency, WriteMode};
use domain::catalogue::category::CategoryRecord;
use domain::catalogue::file::{
    CatalogueFile, FileProduct, ImportOptions, ImportReport, RowProblem, STOCK_PREFIX,
};
use domain::catalogue::product::ProductRecord;
use domain::catalogue::store::StoreRecord;
use domain::event::NewEvent;
use domain::stock::count::StockReconciliation;
use domain::stock::levels::StockMove;
use domain::Failure;

/// The note of the stock counts that book an import's opening stock.
pub const OPENING_STOCK_NOTE: &str = "Opening stock (catalogue import)";

/// Products checked between two reports of progress.
const PROGRESS_EVERY: usize = 256;

/// A problem found for one product of the file (by its index).
type Found = (usize, RowProblem);

pub(crate) struct ImportJob {
    file: CatalogueFile,
    options: ImportOptions,
    caller: i64,
    sent: Instant,
    reply: Option<Answer<ImportReport>>,
    report: ImportReport,
    categories: Changes<CategoryRecord>,
    products: Changes<ProductRecord>,
    counts: Changes<StockReconciliation>,
    failure: Option<Failure>,
    replay: Replay<ImportReport>,
}

impl ImportJob {
    pub(crate) fn new(
        file: CatalogueFile,
        options: ImportOptions,
        caller: i64,
        key: Option<Idempotency>,
        reply: Answer<ImportReport>,
    ) -> Self {
        Self {
            file,
            options,
            caller,
            sent: Instant::now(),
            reply: Some(reply),
            report: ImportReport::default(),
            categories: Changes::default(),
            products: Changes::default(),
            counts: Changes::default(),
            failure: None,
            replay: Replay::new(key),
        }
    }

    fn clear_changes(&mut self) {
        self.categories.clear();
        self.products.clear();
        self.counts.clear();
    }

    fn tell_progress(&self, checked: usize) {
        if let Some(progress) = &self.options.progress {
            progress(checked);
        }
    }

    fn input(&self, fields: Value) -> Input {
        Input {
            fields: match fields {
                Value::Object(map) => map,
                _ => Map::new(),
            },
            secret: None,
            disabled_because: None,
            caller: self.caller,
        }
    }

    /// Every product of the file but `excluded`, with its categories, into `state`; then the
    /// opening stock. Gives what was refused.
    fn attempt(
        &mut self,
        state: &mut MerchantState,
        stores: &[i64],
        excluded: &BTreeSet<usize>,
        ids: &mut dyn Iterator<Item = i64>,
        now: i64,
    ) -> Vec<Found> {
        self.clear_changes();
        let mut found = Vec::new();
        let mut paths = Paths::of(state);
        // Per store column: (product id, units, product index).
        let mut opening: BTreeMap<usize, Vec<(i64, i64, usize)>> = BTreeMap::new();
        let products = std::mem::take(&mut self.file.products);
        for (index, product) in products.iter().enumerate() {
            if index % PROGRESS_EVERY == 0 {
                self.tell_progress(index);
            }
            if excluded.contains(&index) {
                continue;
            }
            let mut category_ids = Vec::with_capacity(product.categories.len());
            for path in &product.categories {
                match self.category(state, path, &mut paths, ids, now) {
                    Ok(id) => category_ids.push(id),
                    Err(why) => found.push((index, RowProblem::new(product.row, "category", why))),
                }
            }
            if found.last().is_some_and(|(i, _)| *i == index) {
                continue;
            }
            let input = self.input(product_fields(product, &category_ids));
            match decide::<ProductRecord>(state, WriteMode::Upsert, input, ids, now) {
                Ok((is_new, record)) => {
                    for (store, units) in &product.stock {
                        if *units > 0 {
                            opening
                                .entry(*store)
                                .or_default()
                                .push((record.id, *units, index));
                        }
                    }
                    self.products.accept(state, is_new, record, false);
                }
                Err(refusal) => found.extend(
                    refusal
                        .details()
                        .iter()
                        .map(|detail| (index, product_problem(product, detail))),
                ),
            }
        }
        self.tell_progress(products.len());
        self.file.products = products;
        for (store, lines) in opening {
            self.count(state, (store, stores[store]), &lines, ids, now, &mut found);
        }
        found
    }

    /// The id of the category at `path`, found among the live ones (the lowest id when titles
    /// repeat) or created, with the parents it lacks.
    fn category(
        &mut self,
        state: &mut MerchantState,
        path: &[String],
        known: &mut Paths,
        ids: &mut dyn Iterator<Item = i64>,
        now: i64,
    ) -> Result<i64, String> {
        let mut parent: Option<i64> = None;
        for depth in 1..=path.len() {
            let prefix = &path[..depth];
            if let Some(done) = known.resolved.get(prefix) {
                parent = Some(done.clone()?);
                continue;
            }
            let title = &prefix[depth - 1];
            let resolved = match known.by_title.get(&(parent, title.clone())) {
                Some(id) => Ok(*id),
                None => {
                    let input = self.input(json!({"title": title, "parentId": parent}));
                    match decide::<CategoryRecord>(state, WriteMode::Upsert, input, ids, now) {
                        Ok((is_new, record)) => {
                            let id = record.id;
                            known.by_title.insert((parent, title.clone()), id);
                            self.categories.accept(state, is_new, record, false);
                            Ok(id)
                        }
                        Err(refusal) => Err(format!(
                            "\"{}\": {}",
                            prefix.join(" > "),
                            refusal.details().join(" ")
                        )),
                    }
                }
            };
            known.resolved.insert(prefix.to_vec(), resolved.clone());
            parent = Some(resolved?);
        }
        parent.ok_or_else(|| "an empty category path.".to_owned())
    }

    /// A completed count at one store booking the opening stock of `lines`.
    fn count(
        &mut self,
        state: &mut MerchantState,
        (column, store_id): (usize, i64),
        lines: &[(i64, i64, usize)],
        ids: &mut dyn Iterator<Item = i64>,
        now: i64,
        found: &mut Vec<Found>,
    ) {
        let products: Map<String, Value> = lines
            .iter()
            .map(|(product, units, _)| {
                (
                    product.to_string(),
                    json!({"productId": product, "quantity": units}),
                )
            })
            .collect();
        let input = self.input(json!({
            "storeId": store_id,
            "note": OPENING_STOCK_NOTE,
            "completed": true,
            "products": products,
        }));
        match decide::<StockReconciliation>(state, WriteMode::Upsert, input, ids, now) {
            Ok((is_new, record)) => {
                self.counts.accept(state, is_new, record, false);
            }
            Err(refusal) => {
                // A problem of one counted product (`products: <id>: …`) is that product's;
                // any other is the count's, and every product with stock there shares it.
                let column = format!("{STOCK_PREFIX}{}", self.file.stores[column]);
                for detail in refusal.details() {
                    let named = lines.iter().find(|(product, _, _)| {
                        detail.starts_with(&format!("products: {product}:"))
                    });
                    let owners: Vec<usize> = match named {
                        Some((_, _, index)) => vec![*index],
                        None => lines.iter().map(|(_, _, index)| *index).collect(),
                    };
                    for index in owners {
                        let row = self.file.products[index].row;
                        found.push((index, RowProblem::new(row, column.clone(), detail.clone())));
                    }
                }
            }
        }
    }

    /// The live store each `stock:` column names, or why a column names none.
    fn stores(&self, state: &MerchantState) -> Result<Vec<i64>, Vec<RowProblem>> {
        let mut ids = Vec::new();
        let mut problems = Vec::new();
        for name in &self.file.stores {
            let named: Vec<i64> = state
                .live::<StoreRecord>()
                .filter(|s| s.name.trim().eq_ignore_ascii_case(name))
                .map(|s| s.id)
                .collect();
            let column = format!("{STOCK_PREFIX}{name}");
            match named.as_slice() {
                [id] => ids.push(*id),
                [] => problems.push(RowProblem::new(
                    1,
                    column,
                    format!("no store of this merchant is named \"{name}\"."),
                )),
                several => problems.push(RowProblem::new(
                    1,
                    column,
                    format!(
                        "{} stores are named \"{name}\": rename one so the column names one store.",
                        several.len()
                    ),
                )),
            }
        }
        if problems.is_empty() {
            Ok(ids)
        } else {
            Err(problems)
        }
    }

    fn finish(&mut self, problems: Vec<RowProblem>, skipped: &BTreeSet<usize>, written: bool) {
        let mut problems = problems;
        problems.sort_by(|a, b| (a.row, &a.column).cmp(&(b.row, &b.column)));
        let mut skipped_rows: Vec<usize> = skipped
            .iter()
            .flat_map(|i| rows_of(&self.file.products[*i]))
            .collect();
        skipped_rows.sort_unstable();
        if !written {
            self.clear_changes();
        }
        self.report = ImportReport {
            written: written && !self.products.is_empty(),
            products: self.products.len(),
            instances: self
                .products
                .records()
                .map(|p| p.live_instances().count())
                .sum(),
            categories: self.categories.len(),
            stock_counts: self.counts.records().map(|c| c.id).collect(),
            skipped_rows: if written { skipped_rows } else { Vec::new() },
            problems,
        };
    }
}

/// Category paths an attempt has resolved, and the merchant's live categories by parent and
/// title (the lowest id where titles repeat), built once an attempt so a path costs a look-up
/// whatever the size of the merchant's tree.
struct Paths {
    resolved: HashMap<Vec<String>, Result<i64, String>>,
    by_title: HashMap<(Option<i64>, String), i64>,
}

impl Paths {
    fn of(state: &MerchantState) -> Self {
        let mut by_title = HashMap::new();
        for category in state.live::<CategoryRecord>() {
            by_title
                .entry((category.parent_id, category.title.clone()))
                .or_insert(category.id);
        }
        Self {
            resolved: HashMap::new(),
            by_title,
        }
    }
}

/// The product's fields as an API write would send them; instances are keyed by their row, so
/// a refusal names the row.
fn product_fields(product: &FileProduct, categories: &[i64]) -> Value {
    let instances: Map<String, Value> = product
        .instances
        .iter()
        .map(|i| {
            (
                i.row.to_string(),
                json!({"name": i.name, "price": i.price, "taxPercentage": i.tax_rate}),
            )
        })
        .collect();
    let mut fields = json!({
        "name": product.name,
        "categories": categories,
        "instances": instances,
    });
    if let (Some(barcode), Value::Object(map)) = (&product.barcode, &mut fields) {
        map.insert("barcode".into(), Value::from(barcode.as_str()));
    }
    fields
}

/// A product rule's refusal (`instances: 12: price: must not be negative.`) as the row and
/// column of the file it is about.
fn product_problem(product: &FileProduct, detail: &str) -> RowProblem {
    let (field, rest) = detail.split_once(": ").unwrap_or(("", detail));
    let column = match field {
        "name" => "product",
        "barcode" => "barcode",
        "categories" => "category",
        "instances" => {
            let mut parts = rest.splitn(3, ": ");
            let row = parts.next().and_then(|r| r.parse::<usize>().ok());
            if let (Some(row), Some(field), Some(message)) = (row, parts.next(), parts.next()) {
                let column = match field {
                    "name" => "instance",
                    "price" => "price",
                    "taxPercentage" => "tax_rate",
                    other => other,
                };
                return RowProblem::new(row, column, message);
            }
            ""
        }
        _ => return RowProblem::new(product.row, "", detail),
    };
    RowProblem::new(product.row, column, rest)
}

fn rows_of(product: &FileProduct) -> impl Iterator<Item = usize> + '_ {
    std::iter::once(product.row).chain(
        product
            .instances
            .iter()
            .map(|i| i.row)
            .filter(move |r| *r != product.row),
    )
}

/// Identifiers handed out again from the first when the import runs again without the
/// products it skipped: the block reserved for it serves every attempt.
struct Recycled<'a> {
    source: &'a mut dyn Iterator<Item = i64>,
    taken: Vec<i64>,
    at: usize,
}

impl Recycled<'_> {
    fn rewind(&mut self) {
        self.at = 0;
    }
}

impl Iterator for Recycled<'_> {
    type Item = i64;

    fn next(&mut self) -> Option<i64> {
        let id = match self.taken.get(self.at) {
            Some(id) => *id,
            None => {
                let id = self.source.next()?;
                self.taken.push(id);
                id
            }
        };
        self.at += 1;
        Some(id)
    }
}

impl Job for ImportJob {
    fn sent(&self) -> Instant {
        self.sent
    }

    fn objects(&self) -> usize {
        self.file.products.len()
    }

    fn reads_stock(&self) -> bool {
        self.file.products.iter().any(|p| !p.stock.is_empty())
    }

    /// At most: a product and its instances each, every category path's titles, and a count
    /// a store with a line (and a surplus entry) a product (see the stock count's own).
    fn ids_needed(&self, _: &MerchantState) -> usize {
        let products: usize = self
            .file
            .products
            .iter()
            .map(|p| 1 + p.instances.len())
            .sum();
        let titles: BTreeSet<&[String]> = self
            .file
            .products
            .iter()
            .flat_map(|p| &p.categories)
            .flat_map(|path| (1..=path.len()).map(move |d| &path[..d]))
            .collect();
        let mut per_store = vec![0usize; self.file.stores.len()];
        for (store, _) in self.file.products.iter().flat_map(|p| &p.stock) {
            per_store[*store] += 1;
        }
        let counts: usize = per_store.iter().filter(|n| **n > 0).map(|n| 2 + n).sum();
        products + titles.len() + counts
    }

    fn apply(&mut self, state: &mut MerchantState, ids: &mut dyn Iterator<Item = i64>, now: i64) {
        self.clear_changes();
        if self.settled() {
            return;
        }
        let mut problems: Vec<RowProblem> = Vec::new();
        let mut unreadable = BTreeSet::new();
        for (index, product) in self.file.products.iter().enumerate() {
            if !product.problems.is_empty() {
                unreadable.insert(index);
                problems.extend(product.problems.iter().cloned());
            }
        }
        let stores = match self.stores(state) {
            Ok(stores) => stores,
            Err(header) => {
                problems.extend(header);
                return self.finish(problems, &unreadable, false);
            }
        };
        let mut ids = Recycled {
            source: ids,
            taken: Vec::new(),
            at: 0,
        };
        // The first round checks every product with a name, so a file's report names all
        // that is wrong with a row at once; each later round leaves out what the one before
        // refused, so it ends.
        let mut excluded: BTreeSet<usize> = unreadable
            .iter()
            .copied()
            .filter(|i| self.file.products[*i].name.is_empty())
            .collect();
        loop {
            ids.rewind();
            let mut trial = state.clone();
            let found = self.attempt(&mut trial, &stores, &excluded, &mut ids, now);
            let clean = found.is_empty() && unreadable.is_subset(&excluded);
            if clean && (problems.is_empty() || self.options.skip_invalid) {
                *state = trial;
                return self.finish(problems, &excluded, true);
            }
            excluded.extend(unreadable.iter().copied());
            for (index, problem) in found {
                excluded.insert(index);
                // A cell already refused as written is not reported twice.
                let known = problems
                    .iter()
                    .any(|p| p.row == problem.row && p.column == problem.column);
                if !known {
                    problems.push(problem);
                }
            }
            if !self.options.skip_invalid {
                return self.finish(problems, &excluded, false);
            }
        }
    }

    fn changed(&self) -> bool {
        !self.products.is_empty() || !self.categories.is_empty()
    }

    /// Only the opening-stock counts move stock.
    fn moves(&self) -> &[StockMove] {
        self.counts.moves()
    }

    fn steps<'a>(&'a self, out: &mut Vec<WriteStep<'a>>) {
        self.categories.steps(out);
        self.products.steps(out);
        self.counts.steps(out);
    }

    replay_methods!(answer: report, rendered: imported);

    fn events(&self, state: &MerchantState, render: &dyn Render, out: &mut Vec<NewEvent>) {
        self.categories.events(state, render, out);
        self.products.events(state, render, out);
        self.counts.events(state, render, out);
    }
}

#[cfg(test)]
mod tests;
