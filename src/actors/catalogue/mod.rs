//! The catalogue resources as the merchant supervisor knows them.

mod category;
mod store;
