//! Customers: their records, erasing one (a write serialized with the merchant's others) and
//! exporting everything kept about one.

pub mod customer;
pub(crate) mod erase;
mod export;
