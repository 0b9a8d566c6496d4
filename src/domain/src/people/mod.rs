//! Who acts for a merchant: employees (roles per store) and applications (OAuth clients).

pub mod application;
pub mod employee;
