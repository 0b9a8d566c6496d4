//! Generic handlers for catalogue resources: GET with the id header and `deleted`, POST (create
//! or update), PUT (update only), DELETE (soft). Resource-specific filters live beside their
//! resource and pass a `keep` predicate to [`render`].

use actix_web::{web, HttpRequest};

use crate::http::auth::{Call, Caller};
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::resources::{batch_reply, delete_ids, delete_reply, show_deleted};
use crate::http::{batch, delta, filters, idempotency, AppState};
use crate::views::lists::{self, Filter, FilterValue, ListQuery};
use crate::views::Snapshot;
use domain::batch::{Answered, BatchObject, WriteMode};
use domain::record::{Declared, Kind};
use engine::merchant::job::{DeleteOutcome, ObjectOutcome};
use engine::merchant::resource::Resource;

/// The id header of a resource's GET and DELETE, plural first (`storeIds`, `storeId`), as its
/// declaration names them.
pub trait IdHeaders {
    const ID_HEADERS: [&'static str; 2];
}

impl<R: Declared> IdHeaders for R {
    const ID_HEADERS: [&'static str; 2] = R::DECL.id_headers;
}

/// What the HTTP side adds to a resource's writes, around the merchant actor's work: facts the
/// server makes (a client secret) before, and the answer's extras and cache effects after.
// Only this crate implements it, and its handlers need no `Send` futures (actix runs each on
// its worker's thread).
#[allow(async_fn_in_trait)]
pub trait WriteHooks: Resource {
    /// What `before` hands to `after` (the clear secrets, say).
    type Notes;

    /// Runs before the write goes to the merchant actor: may add server facts to objects, or
    /// refuse one (its `fields` become the reason).
    async fn before(objects: &mut [BatchObject], mode: WriteMode, state: &AppState) -> Self::Notes;

    /// The answer for the outcomes. By default the batch reply.
    fn after(
        _notes: Self::Notes,
        outcomes: Vec<ObjectOutcome>,
        _caller: &Caller,
        _state: &AppState,
    ) -> Reply {
        batch_reply(Self::PLURAL, outcomes)
    }

    /// Whether deleting a record revokes tokens (so this replica's token cache must forget
    /// what it holds at once), as the revocation metric names it.
    const DELETE_REVOKES_TOKENS: Option<&'static str> = None;

    /// Why a write's answer cannot be replayed for an `Idempotency-Key`, if it cannot.
    const NOT_REPLAYABLE: Option<&'static str> = None;
}

/// Resources whose writes need nothing around them.
macro_rules! plain_writes {
    ($($t:ty),*) => {
        $(impl WriteHooks for $t {
            type Notes = ();
            async fn before(_: &mut [BatchObject], _: WriteMode, _: &AppState) {}
        })*
    };
}

/// A `plain` record of the registry: writes with nothing around them, routes at its path.
macro_rules! plain_records {
    ($($collection:ident: $ty:path = $rules:ident,)*) => {
        $(plain_records!(@ $rules $ty);)*

        /// The routes of every `plain` record.
        pub fn plain_routes(cfg: &mut web::ServiceConfig) {
            $(plain_records!(@route $rules $ty, cfg);)*
        }
    };
    (@ own $ty:path) => {};
    (@ plain $ty:path) => {
        plain_writes!($ty);
    };
    (@route own $ty:path, $cfg:ident) => {};
    (@route plain $ty:path, $cfg:ident) => {
        routes::<$ty>($cfg, <$ty as domain::record::Declared>::DECL.path);
    };
}

domain::for_each_record!(plain_records);

plain_writes!(
    domain::catalogue::store::StoreRecord,
    domain::catalogue::category::CategoryRecord,
    domain::catalogue::product::ProductRecord,
    domain::catalogue::supplier::SupplierRecord,
    domain::catalogue::supplier::SupplierStoreRecord,
    domain::customers::customer::CustomerRecord,
    domain::till::register::RegisterRecord,
    domain::till::session::SessionRecord,
    domain::till::session::CashMovementRecord,
    domain::catalogue::promotion::PromotionRecord,
    domain::sales::basket::BasketRecord,
    domain::sales::payment::TransactionRecord,
    domain::sales::order::OrderRecord,
    domain::stock::invoice::InvoiceRecord,
    domain::stock::count::StockReconciliation
);

pub async fn list<R: Resource + IdHeaders>(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let query = list_query::<R>(req.headers())?;
    let snapshot = Snapshot::of(&state.merchants, caller.merchant_id).await?;
    let json = narrowed_list::<R>(&req, &state, &snapshot, query, |_| true).await?;
    Ok(delta::positioned(
        Reply::ok().raw_field(R::PLURAL, json),
        snapshot.position(),
    ))
}

/// The id header, `deleted` and the record's declared filter headers of a GET.
pub fn list_query<R: Resource + IdHeaders>(
    headers: &actix_web::http::header::HeaderMap,
) -> Result<ListQuery, ApiError> {
    let mut query = ListQuery {
        ids: filters::id_list_any(headers, &R::ID_HEADERS)?,
        deleted: show_deleted(headers)?,
        filters: Vec::new(),
    };
    for field in R::DECL.fields {
        let Some(header) = field.filter else {
            continue;
        };
        let value = match field.kind {
            Kind::Bool => filters::boolean(headers, header)?.map(FilterValue::Bool),
            _ => filters::id_list(headers, header)?.map(FilterValue::Ids),
        };
        if let Some(value) = value {
            query.filters.push(Filter { field, value });
        }
    }
    Ok(query)
}

/// The records of a list query, narrowed to `changedSince` when it was sent.
pub async fn narrowed_list<R: Resource>(
    req: &HttpRequest,
    state: &AppState,
    snapshot: &Snapshot,
    mut query: ListQuery,
    keep: impl Fn(&R) -> bool,
) -> Result<String, ApiError> {
    let delta::Narrowed { ids, deleted } = delta::narrow(
        req.headers(),
        state,
        snapshot,
        &[R::EVENT],
        query.ids,
        query.deleted,
    )
    .await?;
    query.ids = ids;
    query.deleted = deleted;
    Ok(lists::records::<R>(snapshot, &query, keep))
}

/// POST creates or updates each object; PUT only updates (an object without a known id is
/// refused).
pub async fn write<R: WriteHooks>(call: Call, body: web::Bytes) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let mode = if req.method() == actix_web::http::Method::PUT {
        WriteMode::UpdateOnly
    } else {
        WriteMode::Upsert
    };
    let mut document = batch::json_document(&req, &body)?;
    if let Some(old) = batch::old_key(&document, R::PLURAL) {
        if state
            .services
            .legacy_application(caller.application_id)
            .await?
        {
            document = batch::from_old_key(document, old, R::PLURAL);
        }
    }
    let mut objects = batch::objects(document, R::PLURAL, state.settings.max_batch_objects)?;
    if let Some(why) = R::NOT_REPLAYABLE {
        idempotency::refuse_key(&req, why)?;
    }
    let key = idempotency::key(&req, &caller, &body)?;
    let notes = R::before(&mut objects, mode, &state).await;
    let answer = state
        .merchants
        .write::<R>(caller.merchant_id, mode, objects, caller.employee_id, key)
        .await?;
    idempotency::reply(answer, |outcomes| {
        R::after(notes, outcomes, &caller, &state)
    })
}

pub async fn delete<R: WriteHooks + IdHeaders>(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let ids = delete_ids(req.headers(), &R::ID_HEADERS)?;
    let listed: Vec<String> = ids.iter().map(i64::to_string).collect();
    let key = idempotency::key(&req, &caller, listed.join(",").as_bytes())?;
    let answer = state
        .merchants
        .delete::<R>(caller.merchant_id, ids, key)
        .await?;
    let replayed = matches!(answer, Answered::Replayed(_));
    let results = match answer {
        Answered::Fresh(results) | Answered::Replayed(results) => results,
        Answered::KeyReused => {
            return idempotency::reply(Answered::<()>::KeyReused, |_| Reply::ok())
        }
    };
    let deleted: Vec<i64> = results
        .iter()
        .filter(|(_, outcome)| *outcome == DeleteOutcome::Deleted)
        .map(|(id, _)| *id)
        .collect();
    if let (Some(via), false) = (R::DELETE_REVOKES_TOKENS, deleted.is_empty()) {
        state
            .metrics
            .oauth_revocations
            .with_label_values(&[via])
            .inc_by(deleted.len() as u64);
        // The delete revoked their tokens in its transaction; the cache forgets them here, so
        // their next request is a 401 on this replica at once.
        state.tokens.forget_cached_tokens();
        tracing::info!(
            merchant_id = caller.merchant_id,
            by_employee_id = caller.employee_id,
            deleted = ?deleted,
            resource = R::PLURAL,
            outcome = "revoked",
            "records deleted; their tokens were revoked"
        );
    }
    let reply = delete_reply(R::NOUN, results);
    match replayed {
        true => idempotency::reply(Answered::Replayed(reply), |r| r),
        false => Ok(reply),
    }
}

/// Registers the four routes of a resource with the default GET.
pub fn routes<R: WriteHooks + IdHeaders>(cfg: &mut web::ServiceConfig, path: &str) {
    cfg.service(
        web::resource(path)
            .route(web::get().to(list::<R>))
            .route(web::post().to(write::<R>))
            .route(web::put().to(write::<R>))
            .route(web::delete().to(delete::<R>)),
    );
}
