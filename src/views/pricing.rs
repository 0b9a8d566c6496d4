//! `POST /basket/calculate`: the sale engine run on one published state of the merchant,
//! writing nothing (docs/money-and-tax.md).

use crate::actors::catalogue::pricing;
use crate::actors::registry::Merchants;
use crate::domain::batch::BatchObject;
use crate::domain::{Failure, Refusal};

use super::Snapshot;

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
