//! `GET /register/session/report`: the X-report of an open till session, the Z-report of a
//! closed one (docs/tills.md), for the sessions the `sessionIds` header names; a closed
//! session that took offline sales after its close also shows them as `supplementary`
//! (docs/offline.md).

use crate::http::auth::Call;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::{delta, filters};
use crate::views::Snapshot;

pub async fn report(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let ids = filters::id_list(req.headers(), "sessionIds")?
        .ok_or_else(|| ApiError::bad_header("sessionIds", "the header is missing."))?;
    let snapshot = Snapshot::of(&state.merchants, caller.merchant_id).await?;
    let json = crate::views::till::session_reports_with_late(
        &state.merchants,
        caller.merchant_id,
        &snapshot,
        &ids,
    )
    .await?;
    Ok(delta::positioned(
        Reply::ok().raw_field("sessionReports", json),
        snapshot.position(),
    ))
}
