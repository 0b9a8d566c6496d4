//! Selling: baskets and their lines, payments and refunds, orders, the sale engine
//! (`pricing`: tax, promotions, rounding), the running sales totals, the basket report and
//! drafts priced without being kept.

pub mod basket;
pub mod draft;
pub mod line;
pub mod order;
pub mod payment;
pub mod pricing;
pub mod report;
pub mod totals;
