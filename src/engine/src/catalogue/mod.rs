pub mod export;
pub(crate) mod import;
