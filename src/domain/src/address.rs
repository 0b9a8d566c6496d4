//! The postal address and contact fields a store and a supplier's store share.

use super::fields::{Fields, Patch};

/// The limits of an address's fields, declared on each record that has one.
pub const LINE_MAX: usize = 200;
pub const CITY_MAX: usize = 100;
pub const POSTCODE_MAX: usize = 20;
pub const PHONE_MAX: usize = 40;
/// An ISO 3166-1 alpha-2 code.
pub const COUNTRY_LEN: usize = 2;
/// RFC 5321's longest forward path, less its angle brackets.
pub const EMAIL_MAX: usize = 254;
pub const LAT_MAX: f64 = 90.0;
pub const LNG_MAX: f64 = 180.0;

/// Applies `addressLine1` … `lng` of the written fields `$f` to `$record`, whose fields of
/// those names (in snake case) take them.
#[macro_export]
macro_rules! apply_address {
    ($f:expr, $record:expr) => {{
        let (f, r) = (&mut $f, &mut $record);
        r.address_line1 = f.text("addressLine1").apply(r.address_line1.take());
        r.address_line2 = f.text("addressLine2").apply(r.address_line2.take());
        r.address_line3 = f.text("addressLine3").apply(r.address_line3.take());
        r.city = f.text("city").apply(r.city.take());
        r.postcode = f.text("postcode").apply(r.postcode.take());
        r.country_id = $crate::address::country(f, r.country_id.take());
        r.phone_number = f.text("phoneNumber").apply(r.phone_number.take());
        r.email = $crate::address::email(f, r.email.take());
        r.lat = f.number("lat").apply(r.lat);
        r.lng = f.number("lng").apply(r.lng);
    }};
}

/// An ISO 3166-1 alpha-2 code, stored upper-case.
pub fn country(f: &mut Fields, current: Option<String>) -> Option<String> {
    match f.text("countryId") {
        Patch::Set(c) if c.len() == 2 && c.chars().all(|ch| ch.is_ascii_alphabetic()) => {
            Some(c.to_ascii_uppercase())
        }
        Patch::Set(c) => {
            f.reject(
                "countryId",
                format!("\"{c}\" is not an ISO 3166-1 alpha-2 code."),
            );
            current
        }
        other => other.apply(current),
    }
}

/// An email address (only its `@` is checked: delivery is the real test).
pub fn email(f: &mut Fields, current: Option<String>) -> Option<String> {
    match f.text("email") {
        Patch::Set(e) if !e.contains('@') => {
            f.reject("email", "is not an email address.");
            current
        }
        other => other.apply(current),
    }
}
