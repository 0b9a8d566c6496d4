//! The catalogue's rows: products with their instances (the other catalogue records are plain
//! rows of their declarations).

pub mod products;
