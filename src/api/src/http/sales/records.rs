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
use domain::record::Kind;

/// A sales resource's GET filters: its id headers, `deleted`, and each filter header its
/// declaration names (`#[field(filter = "storeIds")]`, `filter = "completed"`).
pub trait SalesFilters: Historic + IdHeaders {}

impl<R: Historic + IdHeaders> SalesFilters for R {}

fn query<R: SalesFilters>(h: &HeaderMap) -> Result<SalesQuery, ApiError> {
    let mut query = SalesQuery {
        ids: filters::id_list_any(h, &R::ID_HEADERS)?,
        deleted: show_deleted(h)?,
        ..SalesQuery::default()
    };
    for field in R::DECL.fields {
        match (field.filter, field.kind) {
            (Some(header), Kind::Bool) => query.completed = filters::boolean(h, header)?,
            (Some(header), _) => {
                if let Some(ids) = filters::id_list(h, header)? {
                    query = query.with(header, ids);
                }
            }
            (None, _) => {}
        }
    }
    Ok(query)
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
