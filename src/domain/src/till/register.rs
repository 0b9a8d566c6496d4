//! A till at a store (issue 23, docs/registers.md): where sessions will open and close and
//! receipt numbers will count. A register stays at the store it was created at.

use serde_json::{Map, Value};

use crate::fields::{Fields, Patch, Shape};
use merchantd_macros::Record;

#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(table = "registers", event = "register")]
pub struct RegisterRecord {
    pub id: i64,
    /// A live store of the merchant; a register stays at the store it was created at.
    #[field(required, filter = "storeIds")]
    pub store_id: i64,
    #[field(max_len = 200, required)]
    pub name: String,
    /// When it was created.
    #[field(read_only)]
    pub active_date: Option<i64>,
    /// When it was deleted.
    pub delete_date: Option<i64>,
}

/// The fields register writes accept (see [`Shape`]).
pub const SHAPE: Shape = Shape::of::<RegisterRecord>();

impl RegisterRecord {
    crate::blank!(|id, now|);

    /// Applies written fields. `creating` makes `storeId` required and settable; `store_ok`
    /// says whether a store id is a live store of this merchant.
    pub fn apply(
        mut self,
        fields: Map<String, Value>,
        creating: bool,
        store_ok: impl Fn(i64) -> bool,
    ) -> Result<Self, Vec<String>> {
        let mut f = Fields::declared::<Self>(fields);
        match f.integer("storeId") {
            Patch::Set(store) if !creating && store == self.store_id => {}
            Patch::Set(_) if !creating => f.reject("storeId", "a register stays at its store."),
            Patch::Set(store) if store_ok(store) => self.store_id = store,
            Patch::Set(store) => f.reject(
                "storeId",
                format!("{store} is not a store of this merchant."),
            ),
            Patch::Clear => f.reject("storeId", "cannot be cleared."),
            Patch::Keep => {}
        }
        if self.store_id == 0 {
            f.reject("storeId", "required field is missing.");
        }
        let name = f.required_text("name", &self.name);
        f.require("name", &name);
        f.finish()?;
        self.name = name.unwrap_or_default();
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::testing::obj;

    #[test]
    fn a_register_needs_a_store_of_the_merchant_and_stays_there() {
        let store_ok = |s| s == 9 || s == 10;
        let errs = RegisterRecord::new(1, 0)
            .apply(obj(json!({"storeId": 8})), true, store_ok)
            .unwrap_err();
        assert_eq!(
            errs,
            vec![
                "storeId: 8 is not a store of this merchant.",
                "storeId: required field is missing.",
                "name: required field is missing."
            ]
        );
        let r = RegisterRecord::new(1, 0)
            .apply(obj(json!({"storeId": 9, "name": "Till 1"})), true, store_ok)
            .unwrap();
        let errs = r
            .clone()
            .apply(obj(json!({"storeId": 10})), false, store_ok)
            .unwrap_err();
        assert_eq!(errs, vec!["storeId: a register stays at its store."]);
        let renamed = r
            .apply(obj(json!({"name": "Till A"})), false, store_ok)
            .unwrap();
        assert_eq!((renamed.store_id, renamed.name.as_str()), (9, "Till A"));
    }
}
