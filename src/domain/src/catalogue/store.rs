//! A merchant's store (api-reference.md, Store).

use serde_json::{Map, Value};

use crate::fields::{Fields, Patch, Shape};
use merchantd_macros::Record;

pub const DEFAULT_TIMEZONE: &str = "Europe/London";

#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(table = "stores", event = "store")]
pub struct StoreRecord {
    pub id: i64,
    #[field(max_len = 200, required)]
    pub name: String,
    #[field(max_len = crate::address::LINE_MAX, required)]
    pub address_line1: Option<String>,
    #[field(max_len = crate::address::LINE_MAX)]
    pub address_line2: Option<String>,
    #[field(max_len = crate::address::LINE_MAX)]
    pub address_line3: Option<String>,
    #[field(max_len = crate::address::CITY_MAX, required)]
    pub city: Option<String>,
    #[field(max_len = crate::address::POSTCODE_MAX, required)]
    pub postcode: Option<String>,
    #[field(max_len = crate::address::COUNTRY_LEN, required)]
    pub country_id: Option<String>,
    #[field(max_len = crate::address::PHONE_MAX)]
    pub phone_number: Option<String>,
    #[field(max_len = crate::address::EMAIL_MAX)]
    pub email: Option<String>,
    #[field(min = -crate::address::LAT_MAX, max = crate::address::LAT_MAX)]
    pub lat: Option<f64>,
    #[field(min = -crate::address::LNG_MAX, max = crate::address::LNG_MAX)]
    pub lng: Option<f64>,
    #[field(max_len = 64)]
    pub timezone: String,
    pub sandbox: bool,
    pub active_date: Option<i64>,
    pub delete_date: Option<i64>,
}

/// The fields writes accept (see [`Shape`]).
pub const SHAPE: Shape = Shape::of::<StoreRecord>();

impl StoreRecord {
    crate::blank!(|id, now| timezone: DEFAULT_TIMEZONE.into());

    /// A new store from a create object; every problem is listed.
    pub fn create(id: i64, fields: Map<String, Value>, now: i64) -> Result<Self, Vec<String>> {
        Self::new(id, now).apply(fields, true)
    }

    /// This store with an update applied (fields left out keep their value).
    pub fn update(&self, fields: Map<String, Value>) -> Result<Self, Vec<String>> {
        self.clone().apply(fields, false)
    }

    pub fn apply(
        mut self,
        fields: Map<String, Value>,
        creating: bool,
    ) -> Result<Self, Vec<String>> {
        let mut f = Fields::declared::<Self>(fields);
        let name = f.required_text("name", &self.name);
        crate::apply_address!(f, self);
        match f.text("timezone") {
            Patch::Set(tz) if tz.parse::<chrono_tz::Tz>().is_ok() => self.timezone = tz,
            Patch::Set(tz) => f.reject("timezone", format!("\"{tz}\" is not an IANA time zone.")),
            Patch::Clear => self.timezone = DEFAULT_TIMEZONE.into(),
            Patch::Keep => {}
        }
        if let Some(sandbox) = f.boolean("sandbox") {
            self.sandbox = sandbox;
        }
        self.active_date = f.date("activeDate").apply(self.active_date);
        f.require("name", &name);
        if creating {
            for (key, value) in [
                ("addressLine1", &self.address_line1),
                ("city", &self.city),
                ("postcode", &self.postcode),
                ("countryId", &self.country_id),
            ] {
                f.require(key, value);
            }
        }
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
    fn create_needs_the_address_and_defaults_the_rest() {
        let s = StoreRecord::create(
            1040,
            obj(
                json!({"name": "Station Kiosk", "addressLine1": "Unit 4", "city": "Bristol",
                       "postcode": "BS1 6QF", "countryId": "gb"}),
            ),
            0,
        )
        .unwrap();
        assert_eq!(s.country_id.as_deref(), Some("GB"));
        assert_eq!(s.timezone, "Europe/London");
        let errs = StoreRecord::create(1, obj(json!({"name": "x"})), 0).unwrap_err();
        assert!(
            errs.contains(&"city: required field is missing.".to_string()),
            "{errs:?}"
        );
    }

    #[test]
    fn bad_values_and_unknown_fields_are_named() {
        let errs = StoreRecord::create(
            1,
            obj(
                json!({"name": "x", "addressLine1": "a", "city": "c", "postcode": "p",
                       "countryId": "GBR", "lat": 100, "timezone": "Mars/Base", "notAField": 1}),
            ),
            0,
        )
        .unwrap_err();
        crate::testing::assert_named(
            &errs,
            &[
                "notAField: unknown field",
                "countryId:",
                "lat:",
                "timezone:",
            ],
        );
    }

    #[test]
    fn updates_are_partial() {
        let s = StoreRecord::create(
            1,
            obj(json!({"name": "x", "addressLine1": "a", "city": "c", "postcode": "p", "countryId": "GB"})),
            0,
        )
        .unwrap();
        let u = s.update(obj(json!({"name": "y", "lat": "51.5"}))).unwrap();
        assert_eq!(
            (u.name.as_str(), u.city.as_deref(), u.lat),
            ("y", Some("c"), Some(51.5))
        );
    }
}
