//! What a merchant sells and where: products and their instances, categories, promotions,
//! stores, suppliers, and the catalogue file (CSV import and export).

pub mod category;
pub mod file;
pub mod product;
pub mod promotion;
pub mod store;
pub mod supplier;
