//! Who acts for a merchant: employees' and applications' rows and the revocations their life
//! cycle triggers, the authorization server's rows (codes, families, tokens, sessions), and
//! the connected applications of `/account`.

pub mod account;
pub mod oauth;
pub mod records;
