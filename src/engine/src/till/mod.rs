//! Registers and their sessions as the merchant supervisor writes them: one open session per
//! register, receipt numbers per register, each open session's running figures.

mod register;
pub mod session;
