//! Employees and applications as the merchant supervisor writes them.

mod application;
mod employee;
