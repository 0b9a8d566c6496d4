//! Reconciliation digests (`GET /digest`, docs/digest.md): per bucket of one resource's ids, a
//! count and a sum of 32-bit hashes of (object, id, last change sequence). An integrator keeps
//! the same figures over its local copy (built from the change events it received) and fetches
//! only the buckets that differ. The definition is exact so that anyone can compute it: the
//! reference implementation in Python is `docs/digest.py`.

/// The bucket sizes a digest may take (ids per bucket).
pub const BUCKET_SIZES: [i64; 6] = [10, 100, 1_000, 10_000, 100_000, 1_000_000];

/// The records a digest can be asked of, by their change events' object name.
pub const RESOURCES: &[&str] = &[
    "application",
    "basket",
    "cash_movement",
    "category",
    "customer",
    "employee",
    "invoice",
    "order",
    "product",
    "promotion",
    "register",
    "session",
    "stock_count",
    "store",
    "supplier",
    "supplier_store",
    "transaction",
    "webhook",
];

/// The hash of one record's state: the first 4 bytes of SHA-256 of `<object>:<id>:<seq>`, as
/// an unsigned big-endian number. Sums of them stay exact in 64 bits up to 2^31 records.
pub fn record_hash(object: &str, id: i64, seq: i64) -> i64 {
    let hex = crate::crypto::sha256_hex(&format!("{object}:{id}:{seq}"));
    hex.get(..8)
        .and_then(|h| i64::from_str_radix(h, 16).ok())
        .unwrap_or(0)
}

/// The record an event type is a change of (`basket` of `basket.completed`); `None` for the
/// stock events, which are not records.
pub fn record_object(event_type: &str) -> Option<&str> {
    let (object, _) = event_type.split_once('.')?;
    (object != "stock").then_some(object)
}

/// One bucket: ids `[first_id, first_id + size)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    pub first_id: i64,
    pub count: i64,
    /// Σ record hash.
    pub sum: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_the_first_four_bytes_of_the_sha256() {
        // printf 'basket:7004:41' | sha256sum → 8b3d0c43…
        let full = crate::crypto::sha256_hex("basket:7004:41");
        assert_eq!(
            record_hash("basket", 7004, 41),
            i64::from_str_radix(&full[..8], 16).unwrap()
        );
        assert!(record_hash("basket", 7004, 41) < 1 << 32);
        assert_ne!(
            record_hash("basket", 7004, 41),
            record_hash("basket", 7004, 42)
        );
    }

    #[test]
    fn stock_events_are_not_records() {
        assert_eq!(record_object("basket.completed"), Some("basket"));
        assert_eq!(record_object("stock.changed"), None);
        assert_eq!(record_object("stock.shortfall"), None);
        assert_eq!(record_object("nonsense"), None);
    }
}
