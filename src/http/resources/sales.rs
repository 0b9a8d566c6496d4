//! `/basket`, `/transaction`, `/order`, `/invoice`: their GET filters. Writes use the generic
//! handlers.

use actix_web::{web, HttpRequest};

use super::generic::{render, IdHeaders};
use super::show_deleted;
use crate::actors::resource::Resource;
use crate::domain::basket::BasketRecord;
use crate::domain::sales::{InvoiceRecord, OrderRecord, TransactionRecord};
use crate::http::auth::Caller;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::{filters, AppState};

impl IdHeaders for BasketRecord {
    const ID_HEADERS: [&'static str; 2] = ["basketIds", "basketId"];
}

impl IdHeaders for TransactionRecord {
    const ID_HEADERS: [&'static str; 2] = ["transactionIds", "transactionId"];
}

impl IdHeaders for OrderRecord {
    const ID_HEADERS: [&'static str; 2] = ["orderIds", "orderId"];
}

// The spec names the invoice header `invoiceId` (a comma list); `invoiceIds` works too.
impl IdHeaders for InvoiceRecord {
    const ID_HEADERS: [&'static str; 2] = ["invoiceId", "invoiceIds"];
}

pub async fn baskets(
    req: HttpRequest,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    let h = req.headers();
    let ids = filters::id_list_any(h, &BasketRecord::ID_HEADERS)?;
    let stores = filters::id_list(h, "storeIds")?;
    let completed = filters::boolean(h, "completed")?;
    let deleted = show_deleted(h)?;
    let snapshot = state
        .merchants
        .get(caller.merchant_id)
        .await?
        .snapshot()
        .await?;
    let records = render::<BasketRecord>(&snapshot, ids.as_ref(), deleted, |b| {
        stores.as_ref().is_none_or(|s| s.contains(&b.store_id))
            && completed.is_none_or(|c| c == b.completed)
    });
    Ok(Reply::ok().field(BasketRecord::PLURAL, records))
}

pub async fn transactions(
    req: HttpRequest,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    let h = req.headers();
    let ids = filters::id_list_any(h, &TransactionRecord::ID_HEADERS)?;
    let baskets = filters::id_list(h, "basketIds")?;
    let deleted = show_deleted(h)?;
    let snapshot = state
        .merchants
        .get(caller.merchant_id)
        .await?
        .snapshot()
        .await?;
    let records = render::<TransactionRecord>(&snapshot, ids.as_ref(), deleted, |t| {
        baskets.as_ref().is_none_or(|b| b.contains(&t.basket_id))
    });
    Ok(Reply::ok().field(TransactionRecord::PLURAL, records))
}

pub async fn orders(
    req: HttpRequest,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    let h = req.headers();
    let ids = filters::id_list_any(h, &OrderRecord::ID_HEADERS)?;
    let stores = filters::id_list(h, "storeIds")?;
    let completed = filters::boolean(h, "completed")?;
    let deleted = show_deleted(h)?;
    let snapshot = state
        .merchants
        .get(caller.merchant_id)
        .await?
        .snapshot()
        .await?;
    let records = render::<OrderRecord>(&snapshot, ids.as_ref(), deleted, |o| {
        stores.as_ref().is_none_or(|s| s.contains(&o.store_id))
            && completed.is_none_or(|c| c == o.is_completed())
    });
    Ok(Reply::ok().field(OrderRecord::PLURAL, records))
}

pub async fn invoices(
    req: HttpRequest,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    let h = req.headers();
    let ids = filters::id_list_any(h, &InvoiceRecord::ID_HEADERS)?;
    let stores = filters::id_list(h, "storeIds")?;
    let deleted = show_deleted(h)?;
    let snapshot = state
        .merchants
        .get(caller.merchant_id)
        .await?
        .snapshot()
        .await?;
    let records = render::<InvoiceRecord>(&snapshot, ids.as_ref(), deleted, |i| {
        stores.as_ref().is_none_or(|s| s.contains(&i.store_id))
    });
    Ok(Reply::ok().field(InvoiceRecord::PLURAL, records))
}
