//! `/customer`: the generic reads and writes, plus the `search` header, which keeps customers
//! whose name (or a word of it), email or phone number starts with its text (docs/customers.md).

use super::generic::{list_query, narrowed_list};
use crate::actors::resource::Resource;
use crate::domain::customer::CustomerRecord;
use crate::http::auth::Call;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::{delta, filters};
use crate::views::{lists, Snapshot};

/// The longest search text.
const MAX_SEARCH: usize = 100;

pub async fn list(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let mut query = list_query::<CustomerRecord>(req.headers())?;
    let search = filters::search(req.headers(), "search", MAX_SEARCH)?;
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
