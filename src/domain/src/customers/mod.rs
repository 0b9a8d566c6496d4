//! Customers: their records, their search, and erasing one (personal data out of
//! everything kept about it).

pub mod customer;
pub mod erase;
