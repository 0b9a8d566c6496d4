//! The operator's realm over HTTP (docs/operator.md): its own gate and tokens, merchants
//! created, suspended and deleted, their archives out and in, and moves between pods.

mod archive;
pub mod operator;
