//! Stock counts as the merchant supervisor writes them (the shortfalls and surpluses they
//! book).

mod count;
