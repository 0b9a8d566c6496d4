//! `GET /digest`: reconciliation digests of one resource (docs/digest.md).

use std::fmt::Write as _;

use crate::http::auth::Call;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::filters::HeaderCheck;
use domain::offline::digest::{Bucket, BUCKET_SIZES, RESOURCES};

pub async fn digest(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let mut check = HeaderCheck::new(req.headers());
    let resource = check.parsed("resource", |text| {
        RESOURCES
            .iter()
            .find(|r| **r == text)
            .copied()
            .ok_or_else(|| format!("\"{text}\" is not one of {}.", RESOURCES.join(", ")))
    });
    let size = check
        .parsed("bucketSize", |text| {
            text.parse::<i64>()
                .ok()
                .filter(|n| BUCKET_SIZES.contains(n))
                .ok_or_else(|| format!("must be one of {BUCKET_SIZES:?} (ids per bucket)."))
        })
        .unwrap_or(10_000);
    if resource.is_none() {
        check.missing("resource");
    }
    check.finish(&["resource", "bucketSize"])?;
    let Some(resource) = resource else {
        return Err(ApiError::bad_header("resource", "the header is missing."));
    };
    let buckets = state
        .services
        .digest(caller.merchant_id, resource, size)
        .await?;
    Ok(Reply::ok().raw_field("digest", rendered(resource, size, &buckets)))
}

/// `{"resource", "bucketSize", "buckets": {"<first id>": {"count", "hash"}}, "total"}`; a
/// hash is Σ record hash as 16 hexadecimal digits.
fn rendered(resource: &str, size: i64, buckets: &[Bucket]) -> String {
    let mut out = format!("{{\"resource\":\"{resource}\",\"bucketSize\":{size},\"buckets\":{{");
    let (mut count, mut sum) = (0i64, 0i64);
    for (i, b) in buckets.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(
            out,
            "\"{}\":{{\"count\":{},\"hash\":\"{:016x}\"}}",
            b.first_id, b.count, b.sum
        );
        count += b.count;
        sum = sum.wrapping_add(b.sum);
    }
    let _ = write!(
        out,
        "}},\"total\":{{\"count\":{count},\"hash\":\"{sum:016x}\"}}}}"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_and_the_total_render_as_json() {
        let buckets = [
            Bucket {
                first_id: 0,
                count: 2,
                sum: 10,
            },
            Bucket {
                first_id: 10_000,
                count: 1,
                sum: 255,
            },
        ];
        let v: serde_json::Value =
            serde_json::from_str(&rendered("basket", 10_000, &buckets)).unwrap();
        assert_eq!(v["buckets"]["10000"]["hash"], "00000000000000ff");
        assert_eq!(v["total"]["count"], 3);
        assert_eq!(v["total"]["hash"], "0000000000000109");
    }
}
