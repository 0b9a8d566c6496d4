//! `#[derive(Record)]`: a record type's field list, written once on its struct, becomes its
//! declaration (`crate::record::Declared`): the JSON names, columns, kinds and write
//! rules every other layer reads (the table-row mapping in `db`, the JSON in `views`, the
//! OpenAPI schemas, the id and filter headers). The generated code is plain field accesses in
//! declaration order (`cargo expand` shows it); nothing is looked up by name at run time.
//!
//! ```ignore
//! #[derive(Clone, Debug, PartialEq, Record)]
//! #[record(table = "suppliers", plural = "suppliers", noun = "Supplier", event = "supplier",
//!          ids("supplierIds", "supplierId"))]
//! pub struct SupplierRecord {
//!     pub id: i64,
//!     #[field(required)]
//!     pub name: String,
//!     #[field(kind = "date")]
//!     pub active_date: Option<i64>,
//!     pub delete_date: Option<i64>,
//! }
//! ```
//!
//! Struct attributes (`#[record(...)]`): `table`, `event` (the singular in snake case,
//! `supplier_store`), and where they differ from what those give: `plural` (camelCase of the
//! table), `noun` (the event's words, capitalised: `Supplier store`), `ids("plural",
//! "singular")` (the id headers: `supplierStoreIds`, `supplierStoreId`), `schema` (the OpenAPI
//! name; the struct's name without `Record`), `key = "field"` (what keys a child in its
//! parent's map; `id` by default), `path = "/register/cash"` (where a top-level record's
//! routes are; the event's words by default: `supplier_store` is at `/supplier/store`),
//! `computed(name, kind, get, after)` (a read-only field rendered from a method, placed after
//! the field with JSON name `after`), `write_only(name, kind)` (a field writes accept that is
//! neither stored nor shown, such as `rotateSecret`), `history` (sales history: kept in the
//! cache only while open, found in storage by id and by filter).
//!
//! Field attributes (`#[field(...)]`): `name` (JSON; camelCase of the Rust name by default),
//! `column` (snake case of the Rust name by default), `no_column`, `kind` (inferred for `i64`
//! — a date when the name ends in `_date`, an id when it is `id` or ends in `_id` —, `String`,
//! `bool`, `f64`, `Vec<i64>`, `Vec<String>` and their `Option`s), `choices = PATH`,
//! `read_only` (implied for the dates the server sets: `create_date`, `complete_date`,
//! `delete_date`, `erase_date`), `required` (on create), `writable` (an `id` a write may
//! name), `hidden` (stored, never shown or written), `skip` (neither stored nor shown:
//! `Default` when read back), `children` (a `Vec` of declared records shown as a map),
//! `live = "method"` (the children to show), `parent` (a child's column naming its parent),
//! `filter = "header"`, `normalized` (decimals shown without trailing zeros), and the rules a
//! write's value keeps, which the validator and the OpenAPI document both read: `max_len = N`
//! (characters of a text), `min = N` and `max = N` (a number's range), `max_items = N` (a
//! list's length), `refers = "collection"` (the id of a record of that collection, live),
//! `create_only` (written by the create alone). The struct's doc comment describes the record.

mod attrs;
mod expand;
mod kinds;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

#[proc_macro_derive(Record, attributes(record, field))]
pub fn derive_record(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand::expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}
