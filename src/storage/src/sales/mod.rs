//! Sales' rows: what returns and refunds gave back, the running sales totals, and the basket
//! report's queries.

pub mod report;
mod returns;
pub mod totals;
