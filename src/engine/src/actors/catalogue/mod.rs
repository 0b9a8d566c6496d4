//! The catalogue resources as the merchant supervisor knows them.

mod application;
mod category;
pub mod customer;
mod employee;
pub(crate) mod offline;
pub mod pricing;
mod product;
mod promotion;
mod reconcile;
mod register;
mod sales;
mod store;
mod supplier;
pub mod till;
mod webhook;
