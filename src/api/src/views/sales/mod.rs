//! How sales are shown: a priced basket (calculate) and the reports.

pub mod pricing;
pub mod report;
