//! `/basket`, `/transaction`, `/order`, `/invoice`: their GET filters, parsed into one
//! [`SalesQuery`]; the merchant's actors answer from the cache or from history. Writes use the
//! generic handlers.

use actix_web::http::header::HeaderMap;

use crate::http::auth::Call;
use crate::http::delta;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::filters;
use crate::http::resources::generic::IdHeaders;
use crate::http::resources::show_deleted;
use crate::views::lists::{self, Historic, SalesQuery};
use crate::views::Snapshot;
use domain::sales::basket::BasketRecord;
use domain::sales::order::OrderRecord;
use domain::sales::payment::TransactionRecord;
use domain::stock::invoice::InvoiceRecord;

/// Which filter headers a sales resource reads besides its ids and `deleted`.
pub struct Reads {
    pub stores: bool,
    pub baskets: bool,
    /// `customerIds`: a customer's purchase history.
    pub customers: bool,
    /// `sessionIds`: the sales of till sessions.
    pub sessions: bool,
    pub completed: bool,
}

/// A sales resource's GET filters.
pub trait SalesFilters: Historic + IdHeaders {
    const READS: Reads;
}

impl SalesFilters for BasketRecord {
    const READS: Reads = Reads {
        stores: true,
        baskets: false,
        customers: true,
        sessions: true,
        completed: true,
    };
}

impl SalesFilters for TransactionRecord {
    const READS: Reads = Reads {
        stores: false,
        baskets: true,
        customers: false,
        sessions: true,
        completed: false,
    };
}

impl SalesFilters for OrderRecord {
    const READS: Reads = Reads {
        stores: true,
        baskets: false,
        customers: true,
        sessions: false,
        completed: true,
    };
}

impl SalesFilters for InvoiceRecord {
    const READS: Reads = Reads {
        stores: true,
        baskets: false,
        customers: false,
        sessions: false,
        completed: false,
    };
}

fn query<R: SalesFilters>(h: &HeaderMap) -> Result<SalesQuery, ApiError> {
    let reads = &R::READS;
    Ok(SalesQuery {
        ids: filters::id_list_any(h, &R::ID_HEADERS)?,
        store_ids: if reads.stores {
            filters::id_list(h, "storeIds")?
        } else {
            None
        },
        basket_ids: if reads.baskets {
            filters::id_list(h, "basketIds")?
        } else {
            None
        },
        customer_ids: if reads.customers {
            filters::id_list(h, "customerIds")?
        } else {
            None
        },
        session_ids: if reads.sessions {
            filters::id_list(h, "sessionIds")?
        } else {
            None
        },
        completed: if reads.completed {
            filters::boolean(h, "completed")?
        } else {
            None
        },
        deleted: show_deleted(h)?,
        completed_between: None,
    })
}

/// `GET` of a sales resource.
pub async fn list<R: SalesFilters>(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let mut query = query::<R>(req.headers())?;
    // A delta read narrows to the changes up to a position taken first; the records read
    // after it are as new as it or newer, never older. A plain list answers the position of
    // the state it was read from.
    let mut position = None;
    if let Some(since) = delta::changed_since(req.headers())? {
        let upto = Snapshot::of(&state.merchants, caller.merchant_id)
            .await?
            .position();
        let narrowed = delta::narrow_to(
            &state,
            caller.merchant_id,
            upto,
            &[R::EVENT],
            since,
            query.ids.take(),
        )
        .await?;
        query.ids = narrowed.ids;
        query.deleted = narrowed.deleted;
        position = Some(upto);
    }
    let found = lists::sales::<R>(&state.merchants, caller.merchant_id, &query).await?;
    let position = position.unwrap_or(found.position);
    Ok(delta::positioned(
        Reply::ok().raw_field(R::PLURAL, found.json),
        position,
    ))
}
