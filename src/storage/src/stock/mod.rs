//! Stock's rows: levels and movements per store and product, the ledger, and stock counts
//! with their lines and surplus entries.

pub mod counts;
pub mod levels;
