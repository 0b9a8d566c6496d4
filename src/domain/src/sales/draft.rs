//! The common shape of a basket to price — a store, lines of a product and a quantity, maybe
//! promotions named by id — read straight from the body's bytes into these types. A till asks
//! "what will this cost?" with this shape on every scan, and reading it into a generic JSON
//! tree first cost more than pricing it (benches/load/results/HISTORY.md, "Calculate at a
//! third of the ceiling").
//!
//! Anything else a body may say (an open basket's `id`, a price, a return, a note, a NUL, a
//! key written twice) does not fit these types: the caller then reads the body the general
//! way, whose rules and messages stay the only ones a client ever sees.

use std::collections::HashSet;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, Error, MapAccess, Visitor};
use serde::Deserialize as DeriveDeserialize;

/// `{"baskets": {"<clientKey>": {...}}}`.
#[derive(DeriveDeserialize)]
#[serde(deny_unknown_fields)]
pub struct DraftBatch<'a> {
    #[serde(borrow)]
    pub baskets: Keyed<'a, Draft<'a>>,
}

/// A new sale basket as calculate is asked to price it.
#[derive(DeriveDeserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Draft<'a> {
    pub store_id: i64,
    #[serde(default, borrow)]
    pub basket_products: Keyed<'a, DraftLine>,
    #[serde(default)]
    pub promotion_ids: Option<Vec<i64>>,
}

#[derive(DeriveDeserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DraftLine {
    pub product_id: i64,
    pub quantity: i64,
    #[serde(default)]
    pub product_instance_id: Option<i64>,
}

/// A JSON object's entries in the body's order, their keys borrowed from the body. A key
/// written twice, holding a NUL or an escape, is an error here: the general reading decides
/// what it means.
pub struct Keyed<'a, T>(pub Vec<(&'a str, T)>);

impl<T> Default for Keyed<'_, T> {
    fn default() -> Self {
        Keyed(Vec::new())
    }
}

impl<'de: 'a, 'a, T: Deserialize<'de>> Deserialize<'de> for Keyed<'a, T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<'a, T>(PhantomData<(&'a (), T)>);

        impl<'de: 'a, 'a, T: Deserialize<'de>> Visitor<'de> for Entries<'a, T> {
            type Value = Keyed<'a, T>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object keyed by client keys")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keyed<'a, T>, A::Error> {
                let mut entries: Vec<(&'a str, T)> = Vec::with_capacity(8);
                let mut seen = HashSet::with_capacity(8);
                while let Some(key) = map.next_key::<&'de str>()? {
                    if key.contains('\0') || !seen.insert(key) {
                        return Err(A::Error::custom("a key the general reading must judge"));
                    }
                    let value = map.next_value()?;
                    entries.push((key, value));
                }
                Ok(Keyed(entries))
            }
        }

        deserializer.deserialize_map(Entries(PhantomData))
    }
}

impl<'a> DraftBatch<'a> {
    /// The body as drafts, or `None` when it says anything beyond them.
    pub fn read(body: &'a [u8]) -> Option<DraftBatch<'a>> {
        serde_json::from_slice(body).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_shape_reads_in_order() {
        let body = br#"{"baskets":{"b":{"storeId":3,"basketProducts":{"z":{"productId":7,"quantity":2},"a":{"productId":8,"quantity":-1,"productInstanceId":null}},"promotionIds":[4]}}}"#;
        let batch = DraftBatch::read(body).expect("drafts");
        let (key, draft) = &batch.baskets.0[0];
        assert_eq!((*key, draft.store_id), ("b", 3));
        let keys: Vec<&str> = draft.basket_products.0.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["z", "a"]);
        assert_eq!(draft.basket_products.0[1].1.quantity, -1);
        assert_eq!(draft.promotion_ids.as_deref(), Some(&[4][..]));
    }

    #[test]
    fn anything_else_is_left_to_the_general_reading() {
        for body in [
            &br#"{"baskets":{"b":{"storeId":3,"id":9}}}"#[..],
            br#"{"baskets":{"b":{"storeId":3,"basketProducts":{"l":{"productId":7,"quantity":1,"price":"2"}}}}}"#,
            br#"{"baskets":{"b":{"storeId":3,"basketProducts":{"l":{"productId":7,"quantity":1.5}}}}}"#,
            br#"{"baskets":{"b":{"storeId":3,"basketProducts":{"l":{"productId":7,"quantity":1},"l":{"productId":8,"quantity":1}}}}}"#,
            br#"{"baskets":{"b\u0000":{"storeId":3}}}"#,
            br#"{"baskets":{"b\u0041":{"storeId":3}}}"#,
            br#"{"baskets":{"b":{"storeId":"3"}}}"#,
            br#"{"baskets":{"b":{"storeId":3}},"extra":1}"#,
            br#"{"baskets":{"b":{"storeId":3,"type":"sale"}}}"#,
            br#"{"baskets":{"b":{"storeId":3,"basketProducts":null}}}"#,
            br#"not json"#,
        ] {
            assert!(
                DraftBatch::read(body).is_none(),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }
}
