//! Offline tills' rows: records found by the till's own ids, and the record digests.

mod clients;
mod digest;
