//! `/promotion` (api-reference.md Promotion; examples §2.8). Writes use the generic handlers;
//! GET filters by store and by the promotion's stage at request time.

use std::collections::BTreeSet;

use actix_web::web;

use crate::http::auth::Call;
use crate::http::delta;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::filters::{self, FilterHeader, FilterKind};
use crate::http::resources::generic::{self, IdHeaders};
use crate::http::resources::show_deleted;
use crate::views::lists::ListQuery;
use crate::views::Snapshot;
use domain::catalogue::promotion::PromotionRecord;
use domain::now_millis;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// The GET filters beside the id header; `None` lets everything through.
struct Stages {
    stores: Option<BTreeSet<i64>>,
    active: Option<bool>,
    expired: Option<bool>,
    imminent: Option<bool>,
    now: i64,
    imminent_window: i64,
}

impl Stages {
    fn keeps(&self, p: &PromotionRecord) -> bool {
        let matches = |wanted: Option<bool>, is: bool| wanted.is_none_or(|w| w == is);
        self.stores.as_ref().is_none_or(|s| p.valid_at_any(s))
            && matches(self.active, p.is_active(self.now))
            && matches(self.expired, p.is_expired(self.now))
            && matches(self.imminent, p.is_imminent(self.now, self.imminent_window))
    }
}

const STORE_IDS: FilterHeader = FilterHeader::new(
    "storeIds",
    FilterKind::Ids,
    "Only promotions valid at any of these stores (`storeId` is read the same).",
);
const ACTIVE: FilterHeader = FilterHeader::new(
    "active",
    FilterKind::Bool,
    "Only promotions running now (`true`), or only those not running (`false`).",
);
const EXPIRED: FilterHeader = FilterHeader::new(
    "expired",
    FilterKind::Bool,
    "Only promotions whose end has passed (`true`), or only those whose has not.",
);
const IMMINENT: FilterHeader = FilterHeader::new(
    "imminent",
    FilterKind::Bool,
    "Only promotions starting within the merchant's imminent window (`true`), or the others.",
);

/// The filters `GET /promotion` reads beyond its ids.
pub const FILTERS: &[FilterHeader] = &[STORE_IDS, ACTIVE, EXPIRED, IMMINENT];

async fn list(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let headers = req.headers();
    let ids = filters::id_list_any(headers, &PromotionRecord::ID_HEADERS)?;
    let days = i64::try_from(state.settings.promotion_imminent_days).unwrap_or(i64::MAX);
    let stages = Stages {
        stores: filters::id_list_any(headers, &[STORE_IDS.name, "storeId"])?,
        active: filters::boolean(headers, ACTIVE.name)?,
        expired: filters::boolean(headers, EXPIRED.name)?,
        imminent: filters::boolean(headers, IMMINENT.name)?,
        now: now_millis(),
        imminent_window: days.saturating_mul(DAY_MS),
    };
    let query = ListQuery {
        ids,
        deleted: show_deleted(headers)?,
        filters: Vec::new(),
    };
    let snapshot = Snapshot::of(&state.merchants, caller.merchant_id).await?;
    let records = generic::narrowed_list(&req, &state, &snapshot, query, |p: &PromotionRecord| {
        stages.keeps(p)
    })
    .await?;
    Ok(delta::positioned(
        Reply::ok().raw_field("promotions", records),
        snapshot.position(),
    ))
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/promotion")
            .route(web::get().to(list))
            .route(web::post().to(generic::write::<PromotionRecord>))
            .route(web::put().to(generic::write::<PromotionRecord>))
            .route(web::delete().to(generic::delete::<PromotionRecord>)),
    );
}
