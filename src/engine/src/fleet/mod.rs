//! The operator's realm over the fleet's storage: its tokens, merchants created, suspended and
//! deleted, archives, moves, and each merchant's usage on this replica.

pub mod operator;
