//! `/customer`: the generic reads and writes, plus the `search` header, which keeps customers
//! whose name (or a word of it), email or phone number starts with its text; and the privacy
//! pair: `GET /customer/export`, everything held about one customer, and `POST
//! /customer/erase`, which makes customers anonymous (docs/customers.md).

use actix_web::web;

use crate::http::auth::Call;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::filters::{FilterHeader, FilterKind};
use crate::http::resources::generic::{list_query, narrowed_list, IdHeaders};
use crate::http::resources::{delete_ids, outcome_reply};
use crate::http::{delta, filters, idempotency, logs};
use crate::views::lists::SalesQuery;
use crate::views::{events, lists, Snapshot};
use domain::batch::Answered;
use domain::customers::customer::CustomerRecord;
use domain::record::filter;
use domain::sales::basket::BasketRecord;
use domain::sales::order::OrderRecord;
use domain::sales::payment::TransactionRecord;
use engine::merchant::resource::Resource;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/customer/export").route(web::get().to(export)));
    cfg.service(web::resource("/customer/erase").route(web::post().to(erase)));
}

/// The longest search text.
pub const MAX_SEARCH: usize = 100;

const SEARCH: FilterHeader = FilterHeader::new(
    "search",
    FilterKind::Search(MAX_SEARCH),
    "The first letters of a name (or a word of it), an email or a phone number; case is \
     ignored, and so is everything but the digits of a phone number.",
);

/// The filters `GET /customer` reads beyond its ids and declared fields.
pub const FILTERS: &[FilterHeader] = &[SEARCH];

pub async fn list(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let mut query = list_query::<CustomerRecord>(req.headers())?;
    let search = filters::search(req.headers(), SEARCH.name, MAX_SEARCH)?;
    let snapshot = Snapshot::of(&state.merchants, caller.merchant_id).await?;
    if let Some(text) = &search {
        // The index narrows to the candidates; `matches` below decides.
        let found = lists::customer_candidates(&snapshot, text);
        query.ids = Some(match query.ids {
            Some(ids) => ids.intersection(&found).copied().collect(),
            None => found,
        });
    }
    let json = narrowed_list::<CustomerRecord>(&req, &state, &snapshot, query, |c| {
        search.as_deref().is_none_or(|text| c.matches(text))
    })
    .await?;
    Ok(delta::positioned(
        Reply::ok().raw_field(CustomerRecord::PLURAL, json),
        snapshot.position(),
    ))
}

/// `GET /customer/export` with `customerId: <id>`: the customer (deleted or erased too), its
/// baskets, their payments, its orders, the events about them and the logs quoting it.
pub async fn export(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let name = CustomerRecord::ID_HEADERS[1];
    let id = match filters::id_list_any(req.headers(), &CustomerRecord::ID_HEADERS)? {
        Some(ids) if ids.len() == 1 => ids.into_iter().next().unwrap_or_default(),
        Some(_) => return Err(ApiError::bad_header(name, "an export is of one customer.")),
        None => return Err(ApiError::bad_header(name, "the header is required.")),
    };
    let merchant_id = caller.merchant_id;
    let snapshot = Snapshot::of(&state.merchants, merchant_id).await?;
    let Some(customer) = lists::record::<CustomerRecord>(&snapshot, id) else {
        return Err(ApiError::NotFound {
            detail: format!("Customer {id} does not exist."),
        });
    };
    let query = SalesQuery {
        deleted: true,
        ..SalesQuery::default()
    };
    let of_customer = query.clone().with(filter::CUSTOMER_IDS, [id].into());
    let (baskets, basket_ids) =
        lists::sales_and_ids::<BasketRecord>(&state.merchants, merchant_id, &of_customer).await?;
    let orders = lists::sales::<OrderRecord>(&state.merchants, merchant_id, &of_customer).await?;
    let query = query.with(filter::BASKET_IDS, basket_ids.iter().copied().collect());
    let payments = match basket_ids.is_empty() {
        true => "{}".to_owned(),
        false => {
            lists::sales::<TransactionRecord>(&state.merchants, merchant_id, &query)
                .await?
                .json
        }
    };
    let events: Vec<String> = state
        .services
        .customer_events(merchant_id, id)
        .await?
        .iter()
        .map(events::payload)
        .collect();
    let contacts = lists::customer_contacts(&snapshot, id);
    let quoting = state.services.logs_quoting(merchant_id, &contacts).await?;
    Ok(Reply::ok()
        .raw_field(CustomerRecord::PLURAL, format!("{{\"{id}\":{customer}}}"))
        .raw_field(BasketRecord::PLURAL, baskets.json)
        .raw_field(TransactionRecord::PLURAL, payments)
        .raw_field(OrderRecord::PLURAL, orders.json)
        .raw_field("events", format!("[{}]", events.join(",")))
        .field("logs", logs::collection(&quoting)))
}

/// `POST /customer/erase` with `customerIds: <id>,…`: each customer becomes anonymous (its
/// personal data removed wherever it is held) while its sales stay; 205 like a delete.
pub async fn erase(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let ids = delete_ids(req.headers(), &CustomerRecord::ID_HEADERS)?;
    let listed: Vec<String> = ids.iter().map(i64::to_string).collect();
    let fingerprint = format!("erase:{}", listed.join(","));
    let key = idempotency::key(&req, &caller, fingerprint.as_bytes())?;
    let answer = state
        .merchants
        .erase_customers(caller.merchant_id, ids, key)
        .await?;
    let (results, replayed) = match answer {
        Answered::Fresh(results) => (results, false),
        Answered::Replayed(results) => (results, true),
        Answered::KeyReused => {
            return idempotency::reply(Answered::<()>::KeyReused, |_| Reply::ok())
        }
    };
    tracing::info!(
        merchant_id = caller.merchant_id,
        by_employee_id = caller.employee_id,
        customers = ?results.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
        "customers erased"
    );
    let reply = outcome_reply(CustomerRecord::NOUN, "erased", results);
    match replayed {
        true => idempotency::reply(Answered::Replayed(reply), |r| r),
        false => Ok(reply),
    }
}
