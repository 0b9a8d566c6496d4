//! `GET /register/session/report`: a till session's X-report while it is open (its running
//! figures, from the snapshot) and its Z-report once closed (the figures frozen at the close),
//! as JSON and as a plain-text layout a receipt printer prints (docs/tills.md).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;

use crate::views::lists::SalesQuery;
use crate::views::Snapshot;
use domain::dates::to_iso;
use domain::record::filter;
use domain::sales::basket::BasketRecord;
use domain::sales::payment::TransactionRecord;
use domain::till::register::RegisterRecord;
use domain::till::session::{SessionRecord, Tally, TillFigures};
use domain::Failure;
use engine::merchant::registry::Merchants;

/// The cash a drawer should hold, and what was counted.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Drawer {
    opening_float: i64,
    cash_sales: i64,
    cash_refunds: i64,
    paid_in: i64,
    paid_out: i64,
    expected: i64,
    counted: Option<i64>,
    difference: Option<i64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report<'a> {
    session_id: i64,
    /// "X" while the session is open, "Z" once it is closed.
    kind: &'static str,
    register_id: i64,
    store_id: i64,
    open_date: Option<String>,
    close_date: Option<String>,
    opened_by: Option<i64>,
    closed_by: Option<i64>,
    first_receipt_number: Option<i64>,
    last_receipt_number: Option<i64>,
    figures: &'a TillFigures,
    cash: Drawer,
    text: String,
}

/// Sales synced into a session after it closed (docs/offline.md): its Z-report stays as it
/// was, and these are summed beside it.
#[derive(Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct Supplementary {
    basket_ids: Vec<i64>,
    figures: TillFigures,
}

/// The supplementary figures of each closed session of `ids` that took sales after its close:
/// its baskets synced after `closeDate` and their payments, read like any sales list (the
/// cache, then history by the index on `session_id`): a session's day of sales.
async fn supplementary(
    merchants: &Merchants,
    merchant_id: i64,
    snapshot: &Snapshot,
    ids: &BTreeSet<i64>,
) -> Result<BTreeMap<i64, Supplementary>, Failure> {
    let state = snapshot.state();
    let closed: BTreeMap<i64, i64> = ids
        .iter()
        .filter_map(|id| state.entry::<SessionRecord>(*id))
        .filter_map(|s| s.close_date.filter(|_| s.closed).map(|at| (s.id, at)))
        .collect();
    let mut out: BTreeMap<i64, Supplementary> = BTreeMap::new();
    if closed.is_empty() {
        return Ok(out);
    }
    let query = SalesQuery {
        completed: Some(true),
        ..SalesQuery::default()
    }
    .with(filter::SESSION_IDS, closed.keys().copied().collect());
    let baskets = merchants.sales::<BasketRecord>(merchant_id, &query).await?;
    let categories = |p| engine::till::session::categories(state, p);
    let mut late = BTreeSet::new();
    for b in baskets.entries.iter().map(|e| e.record()) {
        let (Some(session), Some(arrived)) = (b.session_id, b.sync_date) else {
            continue;
        };
        if closed.get(&session).is_some_and(|at| arrived > *at) {
            let s = out.entry(session).or_default();
            s.basket_ids.push(b.id);
            s.figures.add_sale(b, &categories);
            late.insert(b.id);
        }
    }
    if late.is_empty() {
        return Ok(out);
    }
    let query = SalesQuery::default().with(filter::BASKET_IDS, late);
    let paid = merchants
        .sales::<TransactionRecord>(merchant_id, &query)
        .await?;
    for t in paid
        .entries
        .iter()
        .map(|e| e.record())
        .filter(|t| t.completed)
    {
        if let Some(s) = t.session_id.and_then(|s| out.get_mut(&s)) {
            s.figures.add_payment(t, 1);
        }
    }
    Ok(out)
}

/// [`session_reports`] with each closed session's `supplementary` figures, when it took sales
/// after its close.
pub async fn session_reports_with_late(
    merchants: &Merchants,
    merchant_id: i64,
    snapshot: &Snapshot,
    ids: &BTreeSet<i64>,
) -> Result<String, Failure> {
    let late = supplementary(merchants, merchant_id, snapshot, ids).await?;
    if late.is_empty() {
        return Ok(session_reports(snapshot, ids));
    }
    let mut reports = reports_by_id(snapshot, ids);
    for (id, s) in late {
        if let Some(serde_json::Value::Object(report)) = reports.get_mut(&id.to_string()) {
            report.insert(
                "supplementary".into(),
                serde_json::to_value(&s).unwrap_or_default(),
            );
        }
    }
    Ok(serde_json::to_string(&reports).unwrap_or_else(|_| "{}".into()))
}

/// `{"<id>": report}` for the sessions of `ids` this merchant has.
pub fn session_reports(snapshot: &Snapshot, ids: &BTreeSet<i64>) -> String {
    serde_json::to_string(&reports_by_id(snapshot, ids)).unwrap_or_else(|_| "{}".into())
}

/// Each session of `ids` this merchant has → its report.
fn reports_by_id(snapshot: &Snapshot, ids: &BTreeSet<i64>) -> BTreeMap<String, serde_json::Value> {
    let state = snapshot.state();
    let mut out = BTreeMap::new();
    for id in ids {
        let Some(session) = state.entry::<SessionRecord>(*id).map(|e| e.record()) else {
            continue;
        };
        let running;
        let (figures, last) = match &session.figures {
            Some(frozen) if session.closed => (frozen, session.last_receipt_number),
            _ => {
                running = state
                    .till
                    .get(id)
                    .map(|f| (**f).clone())
                    .unwrap_or_default();
                let last = state.receipts.get(&session.register_id).copied();
                (&running, last)
            }
        };
        let register = state
            .entry::<RegisterRecord>(session.register_id)
            .map(|r| r.name.clone())
            .unwrap_or_default();
        let report = report(session, figures, last, &register);
        out.insert(id.to_string(), report);
    }
    out
}

fn report(
    session: &SessionRecord,
    figures: &TillFigures,
    last: Option<i64>,
    register: &str,
) -> serde_json::Value {
    let book =
        |b: &BTreeMap<String, Tally>| b.get(domain::till::session::CASH).map_or(0, |t| t.amount);
    let expected = session.opening_float + figures.cash_moved();
    let cash = Drawer {
        opening_float: session.opening_float,
        cash_sales: book(&figures.payments),
        cash_refunds: book(&figures.refunds),
        paid_in: figures.paid_in.amount,
        paid_out: figures.paid_out.amount,
        expected: session.expected_cash.unwrap_or(expected),
        counted: session.counted_cash,
        difference: session.difference,
    };
    let first = session.first_receipt_number;
    let last = last.filter(|l| *l >= first);
    let mut r = Report {
        session_id: session.id,
        kind: if session.closed { "Z" } else { "X" },
        register_id: session.register_id,
        store_id: session.store_id,
        open_date: session.active_date.and_then(to_iso),
        close_date: session.close_date.and_then(to_iso),
        opened_by: session.employee_id,
        closed_by: session.closed_by,
        first_receipt_number: last.map(|_| first),
        last_receipt_number: last,
        figures,
        cash,
        text: String::new(),
    };
    r.text = printed(&r, register);
    serde_json::to_value(&r).unwrap_or_default()
}

/// Receipt printers print 42 columns on 80 mm paper.
const WIDTH: usize = 42;

/// Minor units as a printed amount (`-12.05`).
fn money(minor: i64) -> String {
    let sign = if minor < 0 { "-" } else { "" };
    let v = minor.unsigned_abs();
    format!("{sign}{}.{:02}", v / 100, v % 100)
}

/// A label at the left and a value at the right of one line.
fn row(out: &mut String, label: &str, value: &str) {
    let pad = WIDTH
        .saturating_sub(label.chars().count() + value.chars().count())
        .max(1);
    let _ = writeln!(out, "{label}{:pad$}{value}", "");
}

fn section(out: &mut String, title: &str, book: &BTreeMap<String, Tally>, name: &str) {
    if book.is_empty() {
        return;
    }
    let _ = writeln!(out, "{title}");
    for (key, t) in book {
        row(
            out,
            &format!("  {name}{key} x{}", t.count.max(t.quantity)),
            &money(t.amount),
        );
    }
}

fn printed(r: &Report<'_>, register: &str) -> String {
    let f = r.figures;
    let mut out = String::new();
    let rule = "-".repeat(WIDTH);
    row(
        &mut out,
        &format!("{}-REPORT", r.kind),
        &format!("Session {}", r.session_id),
    );
    row(
        &mut out,
        &format!("Register {} {register}", r.register_id),
        &format!("Store {}", r.store_id),
    );
    row(&mut out, "Opened", r.open_date.as_deref().unwrap_or("-"));
    if let Some(closed) = &r.close_date {
        row(&mut out, "Closed", closed);
    }
    match (r.first_receipt_number, r.last_receipt_number) {
        (Some(a), Some(b)) => row(&mut out, "Receipts", &format!("{a} - {b}")),
        _ => row(&mut out, "Receipts", "none"),
    }
    let _ = writeln!(out, "{rule}");
    row(
        &mut out,
        &format!("Sales x{}", f.sales.count),
        &money(f.sales.amount),
    );
    row(
        &mut out,
        &format!("Returns x{}", f.returns.count),
        &money(f.returns.amount),
    );
    row(&mut out, "Discounts", &money(f.discounts));
    row(&mut out, "Cash rounding", &money(f.cash_rounding));
    row(&mut out, "Tax", &money(f.sales.tax + f.returns.tax));
    section(&mut out, "Payments", &f.payments, "");
    section(&mut out, "Refunds", &f.refunds, "");
    section(&mut out, "Tax by rate", &f.taxes, "");
    section(&mut out, "Employees", &f.employees, "#");
    section(&mut out, "Categories", &f.categories, "#");
    let _ = writeln!(out, "{rule}");
    let c = &r.cash;
    row(&mut out, "Opening float", &money(c.opening_float));
    row(&mut out, "Cash sales", &money(c.cash_sales));
    row(&mut out, "Cash refunds", &money(-c.cash_refunds));
    row(&mut out, "Paid in", &money(c.paid_in));
    row(&mut out, "Paid out", &money(-c.paid_out));
    row(&mut out, "Expected in drawer", &money(c.expected));
    if let (Some(counted), Some(difference)) = (c.counted, c.difference) {
        row(&mut out, "Counted", &money(counted));
        row(&mut out, "Difference", &money(difference));
    }
    out
}
