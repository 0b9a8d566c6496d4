//! A product category (api-reference.md, Category).

use serde_json::{Map, Value};

use crate::fields::{Fields, Patch, Shape};
use merchantd_macros::Record;

#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(table = "categories", event = "category")]
pub struct CategoryRecord {
    pub id: i64,
    #[field(max_len = 200, required)]
    pub title: String,
    pub parent_id: Option<i64>,
    pub active_date: Option<i64>,
    pub delete_date: Option<i64>,
}

/// The fields writes accept (see [`Shape`]).
pub const SHAPE: Shape = Shape::of::<CategoryRecord>();

impl CategoryRecord {
    /// Applies written fields. `parent_ok` says whether a parent id is a live category of this
    /// merchant that would not make a cycle with this one.
    pub fn apply(
        mut self,
        fields: Map<String, Value>,
        parent_ok: impl Fn(i64, i64) -> Result<(), String>,
    ) -> Result<Self, Vec<String>> {
        let mut f = Fields::declared::<Self>(fields);
        let title = f.required_text("title", &self.title);
        self.parent_id = match f.integer("parentId") {
            Patch::Set(parent) => match parent_ok(self.id, parent) {
                Ok(()) => Some(parent),
                Err(why) => {
                    f.reject("parentId", why);
                    self.parent_id
                }
            },
            other => other.apply(self.parent_id),
        };
        self.active_date = f.date("activeDate").apply(self.active_date);
        f.require("title", &title);
        f.finish()?;
        self.title = title.unwrap_or_default();
        Ok(self)
    }

    crate::blank!(|id, now|);
}
