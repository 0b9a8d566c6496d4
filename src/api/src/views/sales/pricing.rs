//! `POST /basket/calculate`: the sale engine run on one published state of the merchant,
//! writing nothing (docs/money-and-tax.md).

use domain::batch::BatchObject;
use domain::sales::draft::{Draft, Keyed};
use domain::{Failure, Refusal};
use engine::merchant::registry::Merchants;
use engine::sales::pricing;

use crate::views::Snapshot;

/// Each object's receipt as JSON, or why it cannot be priced, in body order.
pub async fn calculate(
    merchants: &Merchants,
    merchant_id: i64,
    objects: Vec<BatchObject>,
    now: i64,
) -> Result<Vec<(String, Result<String, Refusal>)>, Failure> {
    let snapshot = Snapshot::of(merchants, merchant_id).await?;
    Ok(objects
        .into_iter()
        .map(|object| {
            let priced = object
                .fields
                .map_err(|why| Refusal::Invalid(vec![why]))
                .and_then(|fields| pricing::calculate(snapshot.state(), fields, now))
                .map(|receipt| serde_json::to_string(&receipt).unwrap_or_default());
            (object.key, priced)
        })
        .collect())
}

/// The drafts' receipts as `{"<clientKey>": <receipt>, ...}`, in body order; `None` when one
/// of them needs the general rules (see [`pricing::calculate_draft`]).
pub async fn calculate_drafts(
    merchants: &Merchants,
    merchant_id: i64,
    drafts: &Keyed<'_, Draft<'_>>,
    now: i64,
) -> Result<Option<String>, Failure> {
    let snapshot = Snapshot::of(merchants, merchant_id).await?;
    let mut out = Vec::with_capacity(1024 * drafts.0.len());
    out.push(b'{');
    for (i, (key, draft)) in drafts.0.iter().enumerate() {
        let Some(receipt) = pricing::calculate_draft(snapshot.state(), draft, now) else {
            return Ok(None);
        };
        if i > 0 {
            out.push(b',');
        }
        // Neither a string nor a receipt of integers and decimals can fail to serialize.
        let _ = serde_json::to_writer(&mut out, key);
        out.push(b':');
        let _ = serde_json::to_writer(&mut out, &receipt);
    }
    out.push(b'}');
    Ok(String::from_utf8(out).ok())
}
