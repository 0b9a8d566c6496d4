//! Records as reads show them, rendered once per version and kept in the record's memo; and
//! the [`Render`] port through which the actors have their answers and events shown.

use domain::catalogue::category::CategoryRecord;
use domain::catalogue::file::ImportReport;
use domain::record::{Kind, Visit};
use domain::stock::levels::StockLevel;
use engine::merchant::job::{DeleteOutcome, ObjectOutcome};
use engine::merchant::render::Render;
use engine::merchant::state::{Entry, Memo, MerchantState, Shown};

use crate::views::json::{self, Audience, Context};

/// A category's title, if it is a live category of the merchant.
fn category_title<'s>(state: &'s MerchantState) -> impl Fn(i64) -> Option<&'s str> + 's {
    |id| state.find::<CategoryRecord>(id).map(|c| c.title.as_str())
}

/// Writes a record as reads show it: its kept rendering, with its live part as `state` has it.
pub fn write(record: &dyn Visit, memo: &Memo, state: &MerchantState, out: &mut String) {
    let shown = memo.get_or_init(|| {
        let (text, live) = json::render(record, &Context::read(&state.files_base));
        Shown {
            text: text.into_boxed_str(),
            live: live.map(|(at, ids)| (at, ids.into_boxed_slice())),
        }
    });
    let live = shown.live.as_ref().map(|(at, ids)| (*at, &ids[..]));
    splice(&shown.text, live, state, out);
}

/// A rendering with its live part (a product's category titles) written as `state` has it.
fn splice(text: &str, live: Option<(usize, &[i64])>, state: &MerchantState, out: &mut String) {
    match live {
        None => out.push_str(text),
        Some((at, ids)) => {
            out.push_str(&text[..at]);
            json::write_categories(out, ids, &category_title(state));
            out.push_str(&text[at + "{}".len()..]);
        }
    }
}

/// Writes one entry of a collection.
pub fn write_entry<R: Visit>(entry: &Entry<R>, state: &MerchantState, out: &mut String) {
    write(entry.record(), entry.memo(), state, out);
}

/// `{"<id>": <record>, ...}` for `entries`, in the order given.
pub fn collection<'a, R: Visit + 'a>(
    state: &MerchantState,
    entries: impl IntoIterator<Item = &'a Entry<R>>,
    out: &mut String,
) {
    out.push('{');
    for (i, entry) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json::push_key(out, entry.record().key());
        write_entry(entry, state, out);
    }
    out.push('}');
}

/// The read side, as the actors see it.
pub struct Renderer;

impl Render for Renderer {
    fn record(&self, record: &dyn Visit, memo: &Memo, state: &MerchantState) -> String {
        let mut out = String::with_capacity(256);
        write(record, memo, state, &mut out);
        out
    }

    fn event(&self, record: &dyn Visit, memo: Option<&Memo>, state: &MerchantState) -> String {
        // Only a URL that may carry credentials is shown otherwise in events; every other
        // record's event is its read rendering, kept for the answer and the reads that follow.
        let differs = record
            .decl()
            .fields
            .iter()
            .any(|f| matches!(f.kind, Kind::Url));
        if let (Some(memo), false) = (memo, differs) {
            return self.record(record, memo, state);
        }
        let ctx = Context {
            audience: Audience::Event,
            ..Context::read(&state.files_base)
        };
        let (text, live) = json::render(record, &ctx);
        let mut out = String::with_capacity(text.len() + 64);
        let live = live.as_ref().map(|(at, ids)| (*at, &ids[..]));
        splice(&text, live, state, &mut out);
        out
    }

    fn stock(&self, store_id: i64, product_id: i64, level: StockLevel) -> String {
        let mut n = itoa::Buffer::new();
        let mut out = String::with_capacity(96);
        out.push_str("{\"storeId\":");
        out.push_str(n.format(store_id));
        out.push_str(",\"productId\":");
        out.push_str(n.format(product_id));
        push_level(&mut out, level);
        out.push('}');
        out
    }

    fn shortfall(&self, shortfall: &domain::offline::sync::Shortfall) -> String {
        serde_json::to_string(shortfall).unwrap_or_else(|_| "null".to_owned())
    }

    fn synced(&self, synced: &engine::offline::sync::Synced) -> String {
        serde_json::to_string(synced).unwrap_or_else(|_| "null".to_owned())
    }

    fn written(&self, outcomes: &[ObjectOutcome]) -> String {
        serde_json::to_string(outcomes).unwrap_or_else(|_| "null".to_owned())
    }

    fn deleted(&self, outcomes: &[(i64, DeleteOutcome)]) -> String {
        serde_json::to_string(outcomes).unwrap_or_else(|_| "null".to_owned())
    }

    fn imported(&self, report: &ImportReport) -> String {
        serde_json::to_string(report).unwrap_or_else(|_| "null".to_owned())
    }

    fn payload(&self, event: &domain::event::Event) -> String {
        crate::views::events::payload(event)
    }
}

/// `,"totalStock":…,"stockSold":…,"stockLeft":…`: the stock columns of a product at a store,
/// as a stock answer and a product list with a store's stock both end their objects.
pub(super) fn push_level(out: &mut String, level: StockLevel) {
    let mut n = itoa::Buffer::new();
    out.push_str(",\"totalStock\":");
    out.push_str(n.format(level.total));
    out.push_str(",\"stockSold\":");
    out.push_str(n.format(level.sold));
    out.push_str(",\"stockLeft\":");
    out.push_str(n.format(level.left()));
}
