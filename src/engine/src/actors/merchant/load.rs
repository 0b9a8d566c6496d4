//! Activation: what a merchant's cached state is built from. The catalogue is loaded whole,
//! sales only while open; the collections are read concurrently.

use std::sync::Arc;

use tokio::sync::watch;

use super::state::{Cached, MerchantState};
use crate::actors::resource::Resource;
use std::collections::BTreeMap;

use crate::actors::catalogue::till::categories;
use domain::application::ApplicationRecord;
use domain::basket::BasketRecord;
use domain::category::CategoryRecord;
use domain::customer::CustomerRecord;
use domain::employee::EmployeeRecord;
use domain::product::ProductRecord;
use domain::promotion::PromotionRecord;
use domain::reconcile::StockReconciliation;
use domain::register::RegisterRecord;
use domain::sales::{InvoiceRecord, OrderRecord, TransactionRecord};
use domain::store::StoreRecord;
use domain::supplier::{SupplierRecord, SupplierStoreRecord};
use domain::till::{CashMovementRecord, SessionRecord, TillFigures};
use domain::webhook::WebhookRecord;
use storage::{Db, DbError, Record, SalesFilter, SalesRecord};

#[tracing::instrument(level = "debug", skip_all, fields(merchant_id = blank.merchant_id))]
pub(in crate::actors) async fn load(
    db: &Db,
    blank: MerchantState,
) -> Result<MerchantState, DbError> {
    let mut state = blank;
    let merchant_id = state.merchant_id;
    // First: a write committed while the rest is read makes this state look older than it
    // is (and reloaded again), never newer.
    state.version = db.merchant_version(merchant_id).await?;
    state.event_seq = db.event_position(merchant_id).await?.last;
    state.sales = std::sync::Arc::new(db.merchant_sales(merchant_id).await?);
    state.returned = db.returned_units(merchant_id).await?.into_iter().collect();
    state.refunded = db
        .refunded_amounts(merchant_id)
        .await?
        .into_iter()
        .collect();
    let (stock, catalogue, people, sales) = tokio::try_join!(
        db.load_merchant_stock(merchant_id),
        async {
            tokio::try_join!(
                StoreRecord::load(db, merchant_id),
                CategoryRecord::load(db, merchant_id),
                ProductRecord::load(db, merchant_id),
                SupplierRecord::load(db, merchant_id),
                SupplierStoreRecord::load(db, merchant_id),
            )
        },
        async {
            tokio::try_join!(
                EmployeeRecord::load(db, merchant_id),
                ApplicationRecord::load(db, merchant_id),
                PromotionRecord::load(db, merchant_id),
                WebhookRecord::load(db, merchant_id),
                CustomerRecord::load(db, merchant_id),
                RegisterRecord::load(db, merchant_id),
                SessionRecord::load(db, merchant_id),
                CashMovementRecord::load(db, merchant_id),
            )
        },
        async {
            tokio::try_join!(
                BasketRecord::load(db, merchant_id),
                TransactionRecord::load(db, merchant_id),
                OrderRecord::load(db, merchant_id),
                InvoiceRecord::load(db, merchant_id),
                StockReconciliation::load(db, merchant_id),
            )
        },
    )?;
    // Each store's stock as last stored; the StoreActors take over from these values.
    state.stock = stock
        .into_iter()
        .map(|(id, levels)| (id, watch::channel(Arc::new(levels)).1))
        .collect();
    let (stores, categories, products, suppliers, supplier_stores) = catalogue;
    fill(&mut state, stores);
    fill(&mut state, categories);
    fill(&mut state, products);
    fill(&mut state, suppliers);
    fill(&mut state, supplier_stores);
    let (employees, applications, promotions, webhooks, customers, registers, sessions, cash) =
        people;
    fill(&mut state, customers);
    fill(&mut state, registers);
    fill(&mut state, sessions);
    fill(&mut state, cash);
    fill(&mut state, employees);
    fill(&mut state, applications);
    fill(&mut state, promotions);
    fill(&mut state, webhooks);
    let (baskets, transactions, orders, invoices, counts) = sales;
    fill(&mut state, baskets);
    fill(&mut state, transactions);
    fill(&mut state, orders);
    fill(&mut state, invoices);
    fill(&mut state, counts);
    load_till(db, &mut state).await?;
    Ok(state)
}

/// The till ledgers: each register's last receipt number, and each open session's running
/// figures from its completed baskets (a session's day, however long the history).
async fn load_till(db: &Db, state: &mut MerchantState) -> Result<(), DbError> {
    let registers: Vec<i64> = state.registers.keys().copied().collect();
    let merchant_id = state.merchant_id;
    state.receipts = db
        .last_receipts(merchant_id, &registers)
        .await?
        .into_iter()
        .collect();
    let open: Vec<i64> = state.index.open_sessions.values().copied().collect();
    if open.is_empty() {
        return Ok(());
    }
    let sold = SalesFilter {
        session_ids: Some(open.clone()),
        completed: Some(true),
        ..SalesFilter::default()
    };
    let (baskets, payments) = tokio::try_join!(
        BasketRecord::query(db, merchant_id, &sold),
        TransactionRecord::query(db, merchant_id, &sold),
    )?;
    let mut figures: BTreeMap<i64, TillFigures> =
        open.iter().map(|s| (*s, TillFigures::default())).collect();
    for basket in &baskets {
        if let Some(f) = basket.session_id.and_then(|s| figures.get_mut(&s)) {
            f.add_sale(basket, &|product| categories(state, product));
        }
    }
    for payment in &payments {
        if let Some(f) = payment.session_id.and_then(|s| figures.get_mut(&s)) {
            f.add_payment(payment, 1);
        }
    }
    for movement in state.cash_movements.values() {
        if let (Some(f), None) = (figures.get_mut(&movement.session_id), movement.delete_date) {
            f.add_movement(movement);
        }
    }
    state.till = figures.into_iter().map(|(s, f)| (s, Arc::new(f))).collect();
    Ok(())
}

/// Sets a collection from loaded records and indexes them.
fn fill<R: Resource>(state: &mut MerchantState, records: Vec<R>) {
    for record in &records {
        R::reindex(state, None, Some(record));
    }
    *R::collection_mut(state) = records
        .into_iter()
        .map(|r| (r.id(), Cached::new(r)))
        .collect();
}
