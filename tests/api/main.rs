//! One integration-test binary (linked once); modules grouped by what they prove.

#[allow(dead_code)]
mod helpers;

mod envelope;
mod process;
mod tenants;
