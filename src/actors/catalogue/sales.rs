//! Baskets, transactions, orders and invoices as the merchant supervisor knows them: completed
//! records are locked (111), and completing a basket or an invoice moves stock.

use serde_json::{Map, Value};
use sqlx::AnyConnection;

use crate::actors::merchant::MerchantState;
use crate::actors::resource::{Ids, Resource};
use crate::db::stock::StockMove;
use crate::db::{rows, DbError};
use crate::domain::basket::{self, BasketContext, BasketRecord, InstancePrice};
use crate::domain::product::ProductRecord;
use crate::domain::sales::{self, InvoiceContext, InvoiceRecord, OrderRecord, TransactionRecord};
use crate::domain::store::StoreRecord;
use crate::domain::supplier::{SupplierRecord, SupplierStoreRecord};
use crate::http::messages::Message;

fn next_id(ids: Ids<'_>) -> Result<i64, Vec<String>> {
    ids.next()
        .ok_or_else(|| vec!["no identifier was available.".to_owned()])
}

/// The price instance a basket line sells.
fn instance_of(
    state: &MerchantState,
    product_id: i64,
    wanted: Option<i64>,
) -> Result<InstancePrice, String> {
    let product = state
        .find::<ProductRecord>(product_id)
        .ok_or_else(|| format!("product {product_id} is not a product of this merchant."))?;
    let live: Vec<_> = product.live_instances().collect();
    let instance = match wanted {
        Some(id) => live
            .iter()
            .find(|i| i.id == id)
            .ok_or_else(|| format!("{id} is not a live instance of product {product_id}."))?,
        None => match live.as_slice() {
            [only] => only,
            [] => return Err(format!("product {product_id} has no price instance.")),
            _ => {
                return Err(format!(
                    "required: product {product_id} has several instances."
                ))
            }
        },
    };
    Ok(InstancePrice {
        product_id,
        instance_id: instance.id,
        price: instance.price,
        tax_percentage: instance.tax_percentage,
    })
}

fn paid(state: &MerchantState, basket_id: i64) -> i64 {
    state
        .live::<TransactionRecord>()
        .filter(|t| t.basket_id == basket_id && t.completed)
        .map(|t| t.amount)
        .sum()
}

fn apply_basket(
    base: BasketRecord,
    ids: Ids<'_>,
    fields: Map<String, Value>,
    state: &MerchantState,
    now: i64,
    creating: bool,
) -> Result<BasketRecord, Vec<String>> {
    let store_exists = |id| state.find::<StoreRecord>(id).is_some();
    let instance = |p, i| instance_of(state, p, i);
    let paid = |b| paid(state, b);
    let ctx = BasketContext {
        store_exists: &store_exists,
        instance: &instance,
        paid: &paid,
    };
    base.apply(fields, ids, &ctx, now, creating)
}

impl Resource for BasketRecord {
    const NOUN: &'static str = "Basket";
    const PLURAL: &'static str = "baskets";
    crate::resource_basics!(baskets);

    fn ids_needed(fields: &Map<String, Value>) -> usize {
        1 + basket::new_lines(fields)
    }

    fn create(
        ids: Ids<'_>,
        fields: Map<String, Value>,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        let id = next_id(ids)?;
        apply_basket(BasketRecord::new(id, now), ids, fields, state, now, true)
    }

    fn update(
        &self,
        ids: Ids<'_>,
        fields: Map<String, Value>,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        apply_basket(self.clone(), ids, fields, state, now, false)
    }

    fn locked(&self) -> bool {
        self.completed
    }

    fn stock_moves(&self, before: Option<&Self>) -> Vec<StockMove> {
        if !self.completed || before.is_some_and(|b| b.completed) {
            return Vec::new();
        }
        self.lines
            .iter()
            .map(|l| StockMove {
                store_id: self.store_id,
                product_id: l.product_id,
                total: 0,
                sold: l.quantity,
            })
            .collect()
    }

    fn verb(&self, before: Option<&Self>) -> &'static str {
        match before {
            _ if self.completed && !before.is_some_and(|b| b.completed) => "completed",
            Some(_) => "updated",
            None => "created",
        }
    }

    fn to_json(&self, _: &MerchantState) -> Value {
        BasketRecord::to_json(self)
    }

    async fn load(conn: &mut AnyConnection, merchant_id: i64) -> Result<Vec<Self>, DbError> {
        rows::load_with_children(conn, merchant_id).await
    }

    async fn persist(
        conn: &mut AnyConnection,
        merchant_id: i64,
        record: &Self,
        is_new: bool,
    ) -> Result<(), DbError> {
        rows::persist_replacing_children(conn, merchant_id, record, is_new).await
    }
}

impl Resource for TransactionRecord {
    const NOUN: &'static str = "Transaction";
    const PLURAL: &'static str = "transactions";
    crate::resource_basics!(transactions);

    fn create(
        ids: Ids<'_>,
        fields: Map<String, Value>,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        let id = next_id(ids)?;
        TransactionRecord::new(id, now).apply(
            fields,
            |b| state.find::<BasketRecord>(b).is_some(),
            now,
            true,
        )
    }

    fn update(
        &self,
        _: Ids<'_>,
        fields: Map<String, Value>,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        self.clone().apply(
            fields,
            |b| state.find::<BasketRecord>(b).is_some(),
            now,
            false,
        )
    }

    fn locked(&self) -> bool {
        self.completed
    }

    /// Payments belong to open baskets: a completed basket's payments are final.
    fn check(&self, state: &MerchantState) -> Result<(), (Message, Vec<String>)> {
        match state.find::<BasketRecord>(self.basket_id) {
            Some(b) if b.completed => Err((
                Message::AlreadyComplete,
                vec![format!(
                    "Basket {} is completed and takes no more payments.",
                    b.id
                )],
            )),
            _ => Ok(()),
        }
    }

    fn to_json(&self, _: &MerchantState) -> Value {
        TransactionRecord::to_json(self)
    }
}

impl Resource for OrderRecord {
    const NOUN: &'static str = "Order";
    const PLURAL: &'static str = "orders";
    crate::resource_basics!(orders);

    fn create(
        ids: Ids<'_>,
        fields: Map<String, Value>,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        let id = next_id(ids)?;
        OrderRecord::new(id, now).apply(
            fields,
            |b| state.find::<BasketRecord>(b).map(|b| b.store_id),
            now,
            true,
        )
    }

    fn update(
        &self,
        _: Ids<'_>,
        fields: Map<String, Value>,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        self.clone().apply(
            fields,
            |b| state.find::<BasketRecord>(b).map(|b| b.store_id),
            now,
            false,
        )
    }

    fn locked(&self) -> bool {
        self.is_completed()
    }

    /// Orders are made from completed baskets only (112).
    fn check(&self, state: &MerchantState) -> Result<(), (Message, Vec<String>)> {
        match state.find::<BasketRecord>(self.basket_id) {
            Some(b) if !b.completed => Err((
                Message::NotComplete,
                vec![format!(
                    "basketId: basket {} is not completed; complete it first.",
                    b.id
                )],
            )),
            _ => Ok(()),
        }
    }

    fn to_json(&self, _: &MerchantState) -> Value {
        OrderRecord::to_json(self)
    }
}

fn apply_invoice(
    base: InvoiceRecord,
    ids: Ids<'_>,
    fields: Map<String, Value>,
    state: &MerchantState,
    now: i64,
    creating: bool,
) -> Result<InvoiceRecord, Vec<String>> {
    let store_exists = |id| state.find::<StoreRecord>(id).is_some();
    let supplier_exists = |id| state.find::<SupplierRecord>(id).is_some();
    let supplier_of_store = |id| state.find::<SupplierStoreRecord>(id).map(|s| s.supplier_id);
    let product_exists = |id| state.find::<ProductRecord>(id).is_some();
    let ctx = InvoiceContext {
        store_exists: &store_exists,
        supplier_exists: &supplier_exists,
        supplier_of_store: &supplier_of_store,
        product_exists: &product_exists,
    };
    base.apply(fields, ids, &ctx, now, creating)
}

impl Resource for InvoiceRecord {
    const NOUN: &'static str = "Invoice";
    const PLURAL: &'static str = "invoices";
    crate::resource_basics!(invoices);

    fn ids_needed(fields: &Map<String, Value>) -> usize {
        1 + sales::new_items(fields)
    }

    fn create(
        ids: Ids<'_>,
        fields: Map<String, Value>,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        let id = next_id(ids)?;
        apply_invoice(InvoiceRecord::new(id, now), ids, fields, state, now, true)
    }

    fn update(
        &self,
        ids: Ids<'_>,
        fields: Map<String, Value>,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        apply_invoice(self.clone(), ids, fields, state, now, false)
    }

    fn locked(&self) -> bool {
        self.completed
    }

    fn stock_moves(&self, before: Option<&Self>) -> Vec<StockMove> {
        if !self.completed || before.is_some_and(|b| b.completed) {
            return Vec::new();
        }
        self.items
            .iter()
            .map(|i| StockMove {
                store_id: self.store_id,
                product_id: i.product_id,
                total: i.quantity,
                sold: 0,
            })
            .collect()
    }

    fn verb(&self, before: Option<&Self>) -> &'static str {
        match before {
            _ if self.completed && !before.is_some_and(|b| b.completed) => "received",
            Some(_) => "updated",
            None => "created",
        }
    }

    fn to_json(&self, _: &MerchantState) -> Value {
        InvoiceRecord::to_json(self)
    }

    async fn load(conn: &mut AnyConnection, merchant_id: i64) -> Result<Vec<Self>, DbError> {
        rows::load_with_children(conn, merchant_id).await
    }

    async fn persist(
        conn: &mut AnyConnection,
        merchant_id: i64,
        record: &Self,
        is_new: bool,
    ) -> Result<(), DbError> {
        rows::persist_replacing_children(conn, merchant_id, record, is_new).await
    }
}
