//! A product category (api-reference.md, Category).

use serde_json::{json, Map, Value};

use super::dates::to_iso;
use super::fields::{Fields, Patch, Shape};

#[derive(Clone, Debug, PartialEq)]
pub struct CategoryRecord {
    pub id: i64,
    pub title: String,
    pub parent_id: Option<i64>,
    pub active_date: Option<i64>,
    pub delete_date: Option<i64>,
}

const KNOWN: [&str; 3] = ["title", "parentId", "activeDate"];
const READ_ONLY: [&str; 2] = ["id", "deleteDate"];

/// The fields writes accept (see [`Shape`]).
pub const SHAPE: Shape = Shape::flat(&KNOWN, &READ_ONLY);

impl CategoryRecord {
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "title": self.title,
            "parentId": self.parent_id,
            "activeDate": self.active_date.and_then(to_iso),
            "deleteDate": self.delete_date.and_then(to_iso),
        })
    }

    /// Applies written fields. `parent_ok` says whether a parent id is a live category of this
    /// merchant that would not make a cycle with this one.
    pub fn apply(
        mut self,
        fields: Map<String, Value>,
        parent_ok: impl Fn(i64, i64) -> Result<(), String>,
    ) -> Result<Self, Vec<String>> {
        let mut f = Fields::new(fields, &KNOWN, &READ_ONLY);
        let title = f
            .text("title", 200)
            .apply(Some(self.title.clone()).filter(|t| !t.is_empty()));
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

    pub fn new(id: i64, now: i64) -> Self {
        Self {
            id,
            title: String::new(),
            parent_id: None,
            active_date: Some(now),
            delete_date: None,
        }
    }
}
