//! Till sessions and cash movements as the merchant supervisor knows them (docs/tills.md):
//! one open session per register, receipt numbers counted per register, and each open
//! session's running figures kept as a ledger beside the state.

use std::sync::Arc;

use crate::merchant::resource::{Resource, Writing};
use crate::merchant::state::MerchantState;
use domain::catalogue::product::ProductRecord;
use domain::catalogue::store::StoreRecord;
use domain::people::employee::EmployeeRecord;
use domain::sales::basket::BasketRecord;
use domain::sales::payment::TransactionRecord;
use domain::sales::totals::{local_bucket, sale_deltas, Deltas};
use domain::till::register::RegisterRecord;
use domain::till::session::{CashMovementRecord, SessionContext, SessionRecord, TillFigures};

/// A live register's store, or why `id` is not one of this merchant's.
pub fn register_store(state: &MerchantState, id: i64) -> Result<i64, String> {
    state
        .find::<RegisterRecord>(id)
        .map(|r| r.store_id)
        .ok_or_else(|| format!("{id} is not a register of this merchant."))
}

/// The session open at a register.
pub fn open_session(state: &MerchantState, register: i64) -> Option<i64> {
    state.index.open_sessions.get(&register).copied()
}

/// A register's last receipt number (0 before its first sale).
pub fn last_receipt(state: &MerchantState, register: i64) -> i64 {
    state.receipts.get(&register).copied().unwrap_or(0)
}

/// An open session's running figures.
pub fn figures(state: &MerchantState, session: i64) -> TillFigures {
    state
        .till
        .get(&session)
        .map(|f| f.as_ref().clone())
        .unwrap_or_default()
}

/// Counts a basket just completed: its register's receipt number, and its figures in its
/// session's.
pub fn count_sale(state: &mut MerchantState, basket: &BasketRecord) {
    if let (Some(register), Some(number)) = (basket.register_id, basket.receipt_number) {
        state.receipts.insert(register, number);
    }
    // A closed session's figures are frozen: a sale synced late shows on its supplementary
    // report instead.
    let Some(session) = basket
        .session_id
        .filter(|s| state.find::<SessionRecord>(*s).is_some_and(|s| !s.closed))
    else {
        return;
    };
    let mut figures = figures(state, session);
    figures.add_sale(basket, &|product| categories(state, product));
    state.till.insert(session, Arc::new(figures));
}

/// Keeps the open sessions' payment figures in step with a payment's change: a completed, live
/// payment counts in the session it was taken in.
pub fn count_payment(
    state: &mut MerchantState,
    before: Option<&TransactionRecord>,
    after: Option<&TransactionRecord>,
) {
    let counted = |t: Option<&TransactionRecord>| {
        t.filter(|t| t.completed && t.delete_date.is_none())
            .and_then(|t| t.session_id.map(|s| (s, t.clone())))
    };
    for (sign, (session, t)) in [(-1, counted(before)), (1, counted(after))]
        .into_iter()
        .filter_map(|(sign, c)| c.map(|c| (sign, c)))
    {
        let open = state
            .find::<SessionRecord>(session)
            .is_some_and(|s| !s.closed);
        if open {
            let mut figures = figures(state, session);
            figures.add_payment(&t, sign);
            state.till.insert(session, Arc::new(figures));
        }
    }
}

/// What a basket just completed adds to the sales running totals, at its store's local day
/// and hour.
pub fn sale_totals(state: &MerchantState, basket: &BasketRecord, out: &mut Deltas) {
    let tz = state
        .entry::<StoreRecord>(basket.store_id)
        .map_or("UTC", |s| s.timezone.as_str());
    let at = local_bucket(basket.complete_date.unwrap_or_default(), tz);
    let payments = payments_of(state, basket.id);
    sale_deltas(basket, payments, &|p| categories(state, p), at, out);
}

/// A basket's cached payments (an open basket's are all cached).
fn payments_of(state: &MerchantState, basket: i64) -> Vec<&TransactionRecord> {
    state
        .index
        .transactions_by_basket
        .get(&basket)
        .into_iter()
        .flatten()
        .filter_map(|id| state.find::<TransactionRecord>(*id))
        .collect()
}

/// A product's categories (none for one unknown here).
pub fn categories(state: &MerchantState, product: i64) -> Vec<i64> {
    state
        .entry::<ProductRecord>(product)
        .map(|p| p.category_ids.clone())
        .unwrap_or_default()
}

impl Resource for SessionRecord {
    const COMPLETES_AS: Option<&'static str> = Some("closed");

    crate::resource_basics!(sessions);

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        let state = w.state;
        let register = |id| register_store(state, id);
        let open_at = |register| open_session(state, register);
        let employee_exists = |id| state.find::<EmployeeRecord>(id).is_some();
        let last_receipt = |register| last_receipt(state, register);
        let figures = |session| figures(state, session);
        let ctx = SessionContext {
            register: &register,
            open_at: &open_at,
            employee_exists: &employee_exists,
            last_receipt: &last_receipt,
            figures: &figures,
            caller: w.input.caller,
        };
        self.apply(w.input.fields, &ctx, w.now, w.creating)
    }

    fn locked(&self) -> bool {
        self.closed
    }

    fn verb(&self, before: Option<&Self>) -> &'static str {
        match before {
            None => "opened",
            Some(b) if self.closed && !b.closed => "closed",
            Some(_) => "updated",
        }
    }

    fn reindex(state: &mut MerchantState, before: Option<&Self>, after: Option<&Self>) {
        if let Some(b) = before.filter(|b| !b.closed && b.delete_date.is_none()) {
            state.index.open_sessions.remove(&b.register_id);
        }
        if let Some(a) = after.filter(|a| !a.closed && a.delete_date.is_none()) {
            state.index.open_sessions.insert(a.register_id, a.id);
        }
    }

    /// A closed session's figures are frozen in it: the running ones are no longer kept.
    fn keep_ledger(state: &mut MerchantState, _before: Option<&Self>, after: Option<&Self>) {
        if let Some(a) = after.filter(|a| a.closed) {
            state.till.remove(&a.id);
        }
    }

    fn check_delete(&self, _state: &MerchantState) -> Result<(), String> {
        Err(format!(
            "Session {} is a till's record: it is closed (closed: true with countedCash), never deleted.",
            self.id
        ))
    }
}

impl Resource for CashMovementRecord {
    crate::resource_basics!(cash_movements);

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        let state = w.state;
        let session_open = |id| match state.find::<SessionRecord>(id) {
            Some(s) if !s.closed => Ok(()),
            Some(_) => Err(format!("session {id} is closed.")),
            None => Err(format!("{id} is not a session of this merchant.")),
        };
        self.apply(w.input.fields, &session_open, w.input.caller)
    }

    /// Cash once moved stays moved: a correction is another movement.
    fn locked(&self) -> bool {
        true
    }

    fn keep_ledger(state: &mut MerchantState, before: Option<&Self>, after: Option<&Self>) {
        if let (None, Some(movement)) = (before, after) {
            let mut figures = figures(state, movement.session_id);
            figures.add_movement(movement);
            state.till.insert(movement.session_id, Arc::new(figures));
        }
    }

    fn check_delete(&self, _state: &MerchantState) -> Result<(), String> {
        Err(format!(
            "Cash movement {} cannot be deleted: record another movement to correct it.",
            self.id
        ))
    }
}
