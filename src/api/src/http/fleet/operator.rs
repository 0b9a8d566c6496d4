//! The operator API (docs/operator.md): the hosting operator's realm under `/operator`, with a
//! gate of its own. Operator tokens (`merchantd operator token`) work here and nowhere else; a
//! merchant's token is unknown here, as an operator token is at the merchant API's gate.

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::middleware::{from_fn, Next};
use actix_web::{web, HttpRequest};
use serde_json::json;

use crate::http::batch::{json_document, objects};
use crate::http::envelope::{ErrorObject, Messages, Reply};
use crate::http::error::ApiError;
use crate::http::filters::{id_list, HeaderCheck};
use crate::http::messages::Message;
use crate::http::AppState;
use domain::dates::to_iso;
use domain::fleet::operator::MerchantSummary;
use domain::fleet::tenant::AppliedTenant;
use engine::fleet::operator::CreateRefused;

/// Merchants one create may hold: each hashes its users' passwords (before the transaction).
pub const MAX_CREATE: usize = 20;

pub fn configure(cfg: &mut web::ServiceConfig) {
    use crate::http::fleet::archive::{export, import, move_merchant};
    let resources = [
        (
            "/operator/merchant",
            vec![web::get().to(list), web::post().to(create)],
        ),
        ("/operator/merchant/suspend", vec![web::post().to(suspend)]),
        ("/operator/merchant/resume", vec![web::post().to(resume)]),
        ("/operator/merchant/delete", vec![web::post().to(delete)]),
        ("/operator/merchant/export", vec![web::get().to(export)]),
        (
            "/operator/merchant/move",
            vec![web::post().to(move_merchant)],
        ),
        ("/operator/merchant/import", vec![web::post().to(import)]),
    ];
    for (path, routes) in resources {
        let resource = routes
            .into_iter()
            .fold(web::resource(path), |resource, route| resource.route(route));
        cfg.service(resource.wrap(from_fn(gate)));
    }
    // Any other path of the realm is a 404 behind its gate, not the merchant API's.
    cfg.service(
        web::scope("/operator")
            .wrap(from_fn(gate))
            .default_service(web::to(crate::http::not_found)),
    );
}

async fn gate(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    match admit(&req).await {
        Ok(()) => Ok(next.call(req).await?.map_into_left_body()),
        Err(err) => Ok(req.error_response(err).map_into_right_body()),
    }
}

async fn admit(req: &ServiceRequest) -> Result<(), ApiError> {
    let state = req
        .app_data::<web::Data<AppState>>()
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("application state is missing")))?;
    let token = crate::http::auth::presented_token(req)?;
    match state.services.operator.token(token).await? {
        Some(_) => Ok(()),
        None => Err(ApiError::TokenInvalid {
            detail: "the token is not a live operator token".into(),
        }),
    }
}

/// Merchants one page of `GET /operator/merchant` lists unless `limit` says otherwise, and at
/// most.
pub const DEFAULT_PAGE: i64 = 100;
pub const MAX_PAGE: i64 = 1_000;

/// `GET /operator/merchant`: merchants by id with their usage, a page at a time: headers
/// `afterId` (the previous page's `nextAfterId`) and `limit`; `merchantIds` for some.
async fn list(req: HttpRequest, state: web::Data<AppState>) -> Result<Reply, ApiError> {
    let mut check = HeaderCheck::new(req.headers());
    let ids = check.ids("merchantIds", false);
    let after = check.parsed("afterId", |text| match text.parse::<i64>() {
        Ok(n) if n >= 0 => Ok(n),
        _ => Err("must be a merchant id (a whole number).".into()),
    });
    let limit = check.parsed("limit", |text| match text.parse::<i64>() {
        Ok(n) if (1..=MAX_PAGE).contains(&n) => Ok(n),
        _ => Err(format!("must be a whole number from 1 to {MAX_PAGE}.")),
    });
    check.finish(&["merchantIds", "afterId", "limit"])?;
    let ids = ids.map(|ids| ids.into_iter().collect::<Vec<_>>());
    let limit = limit.unwrap_or(DEFAULT_PAGE);
    let merchants = state
        .services
        .operator
        .merchants(ids.as_deref(), after.unwrap_or(0), limit)
        .await?;
    // A full page may have a next one; the client asks for it with this.
    let next = (merchants.len() as i64 == limit)
        .then(|| merchants.last().map(|m| m.id))
        .flatten();
    let usage = state.services.operator.usage();
    let mut out = serde_json::Map::new();
    for merchant in &merchants {
        out.insert(
            merchant.id.to_string(),
            summary_json(merchant, usage.of(merchant.id)),
        );
    }
    Ok(Reply::ok()
        .field("merchants", out)
        .field("nextAfterId", next))
}

fn summary_json(
    m: &MerchantSummary,
    live: domain::fleet::operator::LiveUsage,
) -> serde_json::Value {
    json!({
        "id": m.id,
        "key": m.key,
        "name": m.name,
        "createDate": to_iso(m.created_at),
        "suspendDate": m.suspend_date.and_then(to_iso),
        "deleteAfter": m.delete_after.and_then(to_iso),
        "usage": {
            "products": m.stored.products,
            "sales": m.stored.sales,
            "fileBytes": m.stored.file_bytes,
            "requests": live.requests,
            "writes": live.writes,
            "eventClients": live.event_clients,
        },
    })
}

/// `POST /operator/merchant`: `{"merchants": {"<clientKey>": <manifest as JSON>}}`.
async fn create(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    let document = json_document(&req, &body)?;
    let sent = objects(document, "merchants", MAX_CREATE)?
        .into_iter()
        .map(|object| (object.key, object.fields))
        .collect();
    let outcomes = state
        .services
        .operator
        .create(sent, state.settings.pbkdf2_iterations)
        .await?;
    let mut messages = Messages::default();
    let mut created = serde_json::Map::new();
    let mut problems = Vec::new();
    for (key, outcome) in outcomes {
        match outcome {
            Ok(applied) => {
                tracing::info!(merchant_id = applied.id, key = %applied.key, "merchant created by the operator");
                messages.add(
                    Message::Created,
                    Some(&key),
                    format!("Merchant {} created.", applied.id),
                );
                created.insert(key, created_json(&applied));
            }
            Err(refused) => {
                let message = match refused {
                    CreateRefused::Invalid(_) => Message::InvalidObject,
                    CreateRefused::KeyTaken(_) => Message::Conflict,
                };
                problems.push(format!("{key}: {refused}"));
                messages.add(message, Some(&key), refused.to_string());
            }
        }
    }
    if created.is_empty() {
        return Ok(Reply::new(StatusCode::UNPROCESSABLE_ENTITY)
            .messages(messages)
            .error(ErrorObject {
                code: 422,
                message: "No object in the request was valid.".into(),
                details: problems,
            }));
    }
    Ok(Reply::new(StatusCode::CREATED)
        .field("merchants", created)
        .messages(messages))
}

fn created_json(applied: &AppliedTenant) -> serde_json::Value {
    json!({
        "id": applied.id,
        "key": applied.key,
        "stores": applied.stores,
        "users": applied.users,
        "applications": applied.applications,
    })
}

async fn suspend(req: HttpRequest, state: web::Data<AppState>) -> Result<Reply, ApiError> {
    set_suspended(req, state, true).await
}

async fn resume(req: HttpRequest, state: web::Data<AppState>) -> Result<Reply, ApiError> {
    set_suspended(req, state, false).await
}

/// The merchants `merchantIds` names (required).
fn named_merchants(req: &HttpRequest) -> Result<Vec<i64>, ApiError> {
    Ok(id_list(req.headers(), "merchantIds")?
        .ok_or_else(|| ApiError::bad_header("merchantIds", "the header is required."))?
        .into_iter()
        .collect())
}

/// Suspends or resumes the merchants `merchantIds` names: 200 with a message per id, 404 when
/// none exists. Tokens cached here are forgotten at once; other replicas hear it on commit.
async fn set_suspended(
    req: HttpRequest,
    state: web::Data<AppState>,
    suspended: bool,
) -> Result<Reply, ApiError> {
    let ids = named_merchants(&req)?;
    let found = state
        .services
        .operator
        .set_suspended(&ids, suspended)
        .await?;
    state.tokens.forget_cached_tokens();
    let done = if suspended { "suspended" } else { "resumed" };
    tracing::info!(merchants = ?found, done, "merchants suspended or resumed by the operator");
    Ok(per_merchant(&ids, |id| {
        found
            .contains(&id)
            .then(|| format!("Merchant {id} {done}."))
    }))
}

/// `POST /operator/merchant/delete`: the merchants `merchantIds` names are suspended now and
/// lose every row after `merchant_delete_grace_secs`, unless resumed before.
async fn delete(req: HttpRequest, state: web::Data<AppState>) -> Result<Reply, ApiError> {
    let ids = named_merchants(&req)?;
    let grace = state.settings.merchant_delete_grace_secs;
    let scheduled = state
        .services
        .operator
        .schedule_deletion(&ids, grace)
        .await?;
    state.tokens.forget_cached_tokens();
    tracing::info!(merchants = ?scheduled, "merchants deleted by the operator");
    Ok(per_merchant(&ids, |id| {
        let (_, after) = scheduled.iter().find(|(found, _)| *found == id)?;
        Some(format!(
            "Merchant {id} is suspended and will be deleted after {}; resume it before then \
             to keep it.",
            to_iso(*after).unwrap_or_default()
        ))
    }))
}

/// A message per id: what was done (`done` says, `None` when no such merchant), 404 when it
/// was done to none.
fn per_merchant(ids: &[i64], done: impl Fn(i64) -> Option<String>) -> Reply {
    let mut messages = Messages::default();
    let mut problems = Vec::new();
    let mut any = false;
    for &id in ids {
        let key = id.to_string();
        match done(id) {
            Some(text) => {
                any = true;
                messages.add(Message::RequestSuccessful, Some(&key), text);
            }
            None => {
                let detail = format!("Merchant {id} does not exist.");
                problems.push(detail.clone());
                messages.add(Message::NotFound, Some(&key), detail);
            }
        }
    }
    if !any {
        return Reply::new(StatusCode::NOT_FOUND)
            .messages(messages)
            .error(ErrorObject {
                code: 404,
                message: "Not found.".into(),
                details: problems,
            });
    }
    Reply::ok().messages(messages)
}
