//! Suppliers and their stores (depots, branches) (api-reference.md, Supplier).

use serde_json::{Map, Value};

use crate::fields::{Fields, Patch, Shape};
use merchantd_macros::Record;

#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(table = "suppliers", event = "supplier")]
pub struct SupplierRecord {
    pub id: i64,
    #[field(max_len = 200, required)]
    pub name: String,
    #[field(max_len = 2000)]
    pub description: Option<String>,
    #[field(max_len = 40)]
    pub company_number: Option<String>,
    #[field(max_len = 40)]
    pub vat_number: Option<String>,
    #[field(max_len = 2000)]
    pub note: Option<String>,
    pub active_date: Option<i64>,
    pub delete_date: Option<i64>,
}

/// The fields supplier writes accept (see [`Shape`]).
pub const SUPPLIER_SHAPE: Shape = Shape::of::<SupplierRecord>();

impl SupplierRecord {
    crate::blank!(|id, now|);

    /// Applies written fields (fields left out keep their value).
    pub fn apply(mut self, fields: Map<String, Value>) -> Result<Self, Vec<String>> {
        let mut f = Fields::declared::<Self>(fields);
        let name = f.required_text("name", &self.name);
        self.description = f.text("description").apply(self.description);
        self.company_number = f.text("companyNumber").apply(self.company_number);
        self.vat_number = f.text("vatNumber").apply(self.vat_number);
        self.note = f.text("note").apply(self.note);
        self.active_date = f.date("activeDate").apply(self.active_date);
        f.require("name", &name);
        f.finish()?;
        self.name = name.unwrap_or_default();
        Ok(self)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(table = "supplier_stores", event = "supplier_store")]
pub struct SupplierStoreRecord {
    pub id: i64,
    #[field(required, filter = "supplierIds")]
    pub supplier_id: i64,
    #[field(max_len = 200)]
    pub name: Option<String>,
    #[field(max_len = crate::address::LINE_MAX)]
    pub address_line1: Option<String>,
    #[field(max_len = crate::address::LINE_MAX)]
    pub address_line2: Option<String>,
    #[field(max_len = crate::address::LINE_MAX)]
    pub address_line3: Option<String>,
    #[field(max_len = crate::address::CITY_MAX)]
    pub city: Option<String>,
    #[field(max_len = crate::address::POSTCODE_MAX)]
    pub postcode: Option<String>,
    #[field(max_len = crate::address::COUNTRY_LEN)]
    pub country_id: Option<String>,
    #[field(max_len = crate::address::PHONE_MAX)]
    pub phone_number: Option<String>,
    #[field(max_len = crate::address::EMAIL_MAX)]
    pub email: Option<String>,
    #[field(min = -crate::address::LAT_MAX, max = crate::address::LAT_MAX)]
    pub lat: Option<f64>,
    #[field(min = -crate::address::LNG_MAX, max = crate::address::LNG_MAX)]
    pub lng: Option<f64>,
    pub active_date: Option<i64>,
    pub delete_date: Option<i64>,
}

/// The fields supplier-store writes accept (see [`Shape`]).
pub const STORE_SHAPE: Shape = Shape::of::<SupplierStoreRecord>();

impl SupplierStoreRecord {
    crate::blank!(|id, now|);

    /// Applies written fields. `creating` makes `supplierId` required; `supplier_ok` says
    /// whether a written supplier id is a live supplier of this merchant.
    pub fn apply(
        mut self,
        fields: Map<String, Value>,
        creating: bool,
        supplier_ok: impl Fn(i64) -> Result<(), String>,
    ) -> Result<Self, Vec<String>> {
        let mut f = Fields::declared::<Self>(fields);
        let current = (!creating).then_some(self.supplier_id);
        let supplier_id = match f.integer("supplierId") {
            Patch::Set(id) => match supplier_ok(id) {
                Ok(()) => Some(id),
                Err(why) => {
                    f.reject("supplierId", why);
                    current
                }
            },
            Patch::Clear => None,
            Patch::Keep => current,
        };
        self.name = f.text("name").apply(self.name);
        crate::apply_address!(f, self);
        self.active_date = f.date("activeDate").apply(self.active_date);
        f.require("supplierId", &supplier_id);
        f.finish()?;
        self.supplier_id = supplier_id.unwrap_or_default();
        Ok(self)
    }
}

/// A supplier's terms for one product: the product's code in the supplier's catalogue and what
/// a unit of it costs from that supplier. A record of the registry's `plain` kind: what it is
/// is all said here.
#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(table = "supplier_products", event = "supplier_product")]
pub struct SupplierProductRecord {
    pub id: i64,
    #[field(required, filter = "supplierIds", refers = "suppliers")]
    pub supplier_id: i64,
    #[field(required, filter = "productIds", refers = "products")]
    pub product_id: i64,
    /// The product's code in the supplier's catalogue.
    #[field(max_len = 64)]
    pub code: Option<String>,
    /// What a unit costs from this supplier, in minor units.
    #[field(kind = "money")]
    pub unit_cost: Option<rust_decimal::Decimal>,
    #[field(read_only)]
    pub active_date: Option<i64>,
    pub delete_date: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::testing::obj;

    #[test]
    fn a_supplier_needs_a_name_and_updates_are_partial() {
        let errs = SupplierRecord::new(1, 0).apply(obj(json!({}))).unwrap_err();
        assert_eq!(errs, vec!["name: required field is missing."]);
        let s = SupplierRecord::new(1, 0)
            .apply(obj(json!({"name": "Bean Brothers", "vatNumber": "GB123"})))
            .unwrap();
        let u = s.apply(obj(json!({"note": "Call first"}))).unwrap();
        assert_eq!(
            (u.name.as_str(), u.vat_number.as_deref(), u.note.as_deref()),
            ("Bean Brothers", Some("GB123"), Some("Call first"))
        );
    }

    #[test]
    fn a_supplier_store_needs_a_known_supplier() {
        let ok = |id: i64| {
            if id == 7 {
                Ok(())
            } else {
                Err(format!("{id} is not a supplier of this merchant."))
            }
        };
        let errs = SupplierStoreRecord::new(1, 0)
            .apply(obj(json!({"name": "Depot"})), true, ok)
            .unwrap_err();
        assert_eq!(errs, vec!["supplierId: required field is missing."]);
        let errs = SupplierStoreRecord::new(1, 0)
            .apply(obj(json!({"supplierId": 8})), true, ok)
            .unwrap_err();
        assert_eq!(
            errs,
            vec!["supplierId: 8 is not a supplier of this merchant."]
        );
        let s = SupplierStoreRecord::new(1, 0)
            .apply(
                obj(json!({"supplierId": 7, "countryId": "gb", "lat": "51.5", "lng": -2.5})),
                true,
                ok,
            )
            .unwrap();
        assert_eq!(
            (s.supplier_id, s.country_id.as_deref(), s.lat, s.lng),
            (7, Some("GB"), Some(51.5), Some(-2.5))
        );
        let u = s.apply(obj(json!({"city": "Bath"})), false, ok).unwrap();
        assert_eq!((u.supplier_id, u.city.as_deref()), (7, Some("Bath")));
    }

    #[test]
    fn bad_supplier_store_values_are_named() {
        let errs = SupplierStoreRecord::new(1, 0)
            .apply(
                obj(
                    json!({"supplierId": 7, "countryId": "G1", "lat": 91, "lng": "east",
                           "email": "nobody", "notAField": true}),
                ),
                true,
                |_| Ok(()),
            )
            .unwrap_err();
        crate::testing::assert_named(
            &errs,
            &[
                "notAField: unknown field",
                "countryId:",
                "lat:",
                "lng:",
                "email:",
            ],
        );
    }
}
