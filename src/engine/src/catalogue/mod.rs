//! The catalogue's records as the merchant supervisor writes them (products, categories,
//! stores, suppliers, promotions), and the catalogue file: imported as one write, exported from
//! the cached state.

mod category;
pub mod export;
pub(crate) mod import;
mod product;
mod promotion;
mod store;
mod supplier;
