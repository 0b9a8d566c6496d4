//! Tills: registers, their sessions (open, X-report, close with the Z-report) and the cash
//! paid in and out.

pub mod register;
pub mod session;
