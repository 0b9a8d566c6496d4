//! The postal address and contact fields a store and a supplier's store share.

use super::fields::{Fields, Patch};

/// Applies `addressLine1` … `lng` of the written fields `$f` to `$record`, whose fields of
/// those names (in snake case) take them.
#[macro_export]
macro_rules! apply_address {
    ($f:expr, $record:expr) => {{
        let (f, r) = (&mut $f, &mut $record);
        r.address_line1 = f.text("addressLine1", 200).apply(r.address_line1.take());
        r.address_line2 = f.text("addressLine2", 200).apply(r.address_line2.take());
        r.address_line3 = f.text("addressLine3", 200).apply(r.address_line3.take());
        r.city = f.text("city", 100).apply(r.city.take());
        r.postcode = f.text("postcode", 20).apply(r.postcode.take());
        r.country_id = $crate::address::country(f, r.country_id.take());
        r.phone_number = f.text("phoneNumber", 40).apply(r.phone_number.take());
        r.email = $crate::address::email(f, r.email.take());
        r.lat = f.number("lat", -90.0, 90.0).apply(r.lat);
        r.lng = f.number("lng", -180.0, 180.0).apply(r.lng);
    }};
}

/// An ISO 3166-1 alpha-2 code, stored upper-case.
pub fn country(f: &mut Fields, current: Option<String>) -> Option<String> {
    match f.text("countryId", 2) {
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
    match f.text("email", 254) {
        Patch::Set(e) if !e.contains('@') => {
            f.reject("email", "is not an email address.");
            current
        }
        other => other.apply(current),
    }
}
