//! A customer's erasure: personal data out of everything stored beside its record.

mod erase;
