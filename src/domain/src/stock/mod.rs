//! Stock: levels and moves per store and product, the ledger, stock counts and supplier
//! invoices received.

pub mod count;
pub mod invoice;
pub mod levels;
