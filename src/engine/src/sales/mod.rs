//! Baskets, payments, orders and invoices as the merchant supervisor writes them, baskets
//! priced by the sale engine, and the reports read from what is stored.

pub mod pricing;
mod reports;
mod resources;
