//! Record declarations: what a record type is made of, said once on its struct with
//! `#[derive(Record)]` (the `merchantd-macros` crate) and read by every layer that needs it.
//! The storage layer maps it to a table row, the read side renders it as JSON, the OpenAPI
//! document describes it, and writes learn which fields they accept. Rules (`apply`, `decide`)
//! stay hand-written beside each record.
//!
//! A declaration is a static table ([`RecordDecl`]) plus two generated functions:
//! [`Declared::visit`] hands each field's value, in order, to a [`Visitor`], and
//! [`Declared::build`] makes a record from a [`Source`] of stored values. Both are plain
//! field accesses; visitors are generic, so a renderer or a row encoder compiles to straight
//! code for each record type.

use std::collections::BTreeMap;

use rust_decimal::Decimal;

use super::Role;

mod probe;

pub use probe::{bool_field, int_field, same_stored, text_field};

/// What a field holds, as the API shows it. Storage follows from it: integers, dates and
/// booleans are integer columns, text and decimals are text columns, lists and maps are JSON
/// text.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// A record id (`id`, `storeId`).
    Id,
    Integer,
    Text,
    /// Money: a decimal string of minor units (`"300"`, `"41.7"`).
    Money,
    /// A rate: a decimal string of a fraction (`"0.200"`).
    Rate,
    /// Written as a number or a decimal string, shown as a decimal string (a promotion's `x`).
    Decimal,
    /// Milliseconds since the epoch, shown as ISO 8601 UTC.
    Date,
    Bool,
    /// Written as a number or a decimal string, shown as a number (`lat`, `unit`).
    Number,
    /// A list of ids.
    Ids,
    /// A list of strings.
    Texts,
    /// One of the listed words.
    Choice(&'static [&'static str]),
    /// Records of another declaration, shown as a map keyed by their key.
    Children(&'static RecordDecl),
    /// A product's categories: written as ids, shown as id → title of the live ones.
    Categories,
    /// File names, shown as the URLs they are served at.
    Images,
    /// An employee's per-store roles: store id → role.
    StoreRoles,
    /// A URL that may carry credentials in its path or query: events show its origin only.
    Url,
    /// JSON the record keeps as text, stored and shown as it is (a basket's receipt); the
    /// name of its OpenAPI schema.
    Json(&'static str),
}

/// How writes treat a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Shown; the server sets it, and a write's value is dropped silently.
    ReadOnly,
    /// Shown and writable.
    Optional,
    /// Shown and writable; a create must give it.
    Required,
    /// Writable, never stored as such nor shown (`rotateSecret`).
    WriteOnly,
    /// Stored only: never shown, never written through the API.
    Hidden,
    /// A secret the server made, shown once in the answer of the write that set it.
    Once,
}

/// One field of a declaration.
#[derive(Debug)]
pub struct FieldDecl {
    /// Its name in JSON (empty for a hidden field).
    pub name: &'static str,
    /// Its column, when the record's own table stores it.
    pub column: Option<&'static str>,
    pub kind: Kind,
    pub nullable: bool,
    pub access: Access,
    /// The GET header that filters by this field (`supplierIds`).
    pub filter: Option<&'static str>,
    /// Decimals shown without trailing zeros.
    pub normalized: bool,
    /// The field's doc comment.
    pub doc: &'static str,
    /// What a written value must keep: the validator checks them, the document shows them.
    pub limits: Limits,
    /// The collection an id names (`suppliers`): a write naming a record that is not there
    /// (or is deleted) is refused.
    pub refers: Option<&'static str>,
    /// Written by the create that makes the record alone (a till's `clientId`).
    pub create_only: bool,
}

/// The limits of a field's written value (`#[field(max_len = .., min = .., max = ..,
/// max_items = ..)]`), each a constant of the domain.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limits {
    /// Characters of a text.
    pub max_len: Option<usize>,
    /// A number's range.
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// Items of a list, entries of a map.
    pub max_items: Option<usize>,
}

impl FieldDecl {
    /// Whether reads show it.
    pub fn shown(&self) -> bool {
        !matches!(
            self.access,
            Access::WriteOnly | Access::Hidden | Access::Once
        )
    }

    /// Whether writes accept it.
    pub fn writable(&self) -> bool {
        matches!(
            self.access,
            Access::Optional | Access::Required | Access::WriteOnly
        )
    }
}

/// A record type's declaration.
#[derive(Debug)]
pub struct RecordDecl {
    /// Its OpenAPI schema name (`Supplier`).
    pub schema: &'static str,
    /// Its table (empty when it has none of its own).
    pub table: &'static str,
    /// The collection key in bodies and answers (`suppliers`); empty for nested records.
    pub plural: &'static str,
    /// How messages name one (`Supplier`).
    pub noun: &'static str,
    /// The object of its change events (`supplier`).
    pub event: &'static str,
    /// The id headers of its GET and DELETE, plural first.
    pub id_headers: [&'static str; 2],
    /// A nested record's column naming its parent.
    pub parent_column: Option<&'static str>,
    /// Sales history (`#[record(history)]`): finished records (completed or deleted) leave the
    /// cached state, and storage answers for them by id and by filter.
    pub history: bool,
    /// Where a top-level record's routes are (`/supplier/store`); empty for nested records.
    pub path: &'static str,
    /// What the record is, from its struct's doc comment.
    pub doc: &'static str,
    pub fields: &'static [FieldDecl],
}

/// The id-list filter headers sales records declare (`#[field(filter = "storeIds")]`): what a
/// caller names when it filters sales by them.
pub mod filter {
    pub const STORE_IDS: &str = "storeIds";
    pub const BASKET_IDS: &str = "basketIds";
    pub const CUSTOMER_IDS: &str = "customerIds";
    pub const SESSION_IDS: &str = "sessionIds";
}

impl RecordDecl {
    /// The field a filter header reads (`storeIds` → `storeId`).
    pub fn filtered_by(&'static self, header: &str) -> Option<&'static FieldDecl> {
        self.fields.iter().find(|f| f.filter == Some(header))
    }

    pub fn field(&'static self, name: &str) -> Option<&'static FieldDecl> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// What every declared record can show of itself, through a trait object (renderers take any
/// record without being generic over its type).
pub trait Visit {
    fn decl(&self) -> &'static RecordDecl;

    /// What keys it in its parent's map (its id unless declared otherwise).
    fn key(&self) -> i64;

    /// Hands each field's value to `v`, in declaration order.
    fn visit(&self, v: &mut dyn Visitor);
}

/// A record type with a declaration (`#[derive(Record)]`).
pub trait Declared: Visit + Sized {
    const DECL: &'static RecordDecl;
    /// The stored columns, in declaration order (the id first).
    const COLUMNS: &'static [&'static str];
    /// The columns holding JSON text.
    const JSON_COLUMNS: &'static [&'static str];
    /// The names writes accept.
    const WRITABLE: &'static [&'static str];
    /// The names reads show that writes may send back and are dropped.
    const READ_ONLY: &'static [&'static str];

    /// A nested record's parent id (0 for records without a parent).
    fn parent_id(&self) -> i64;

    /// A record from stored values: every stored field from `source`, nested records and
    /// fields that are not stored at their defaults.
    fn build<S: Source>(source: &mut S) -> Result<Self, S::Error>;
}

/// A record whose nested records are rows of their own table, read and written with it
/// (`#[field(children, stored)]`).
pub trait Parent: Declared {
    type Child: Declared;
    fn children(&self) -> &[Self::Child];
    fn set_children(&mut self, children: Vec<Self::Child>);
}

/// What a declaration's `visit` hands its fields to.
pub trait Visitor {
    fn cell(&mut self, field: &'static FieldDecl, value: Cell<'_>);
    fn children(&mut self, field: &'static FieldDecl, items: &mut dyn Iterator<Item = &dyn Visit>);
}

/// Where a declaration's `build` takes stored values from.
pub trait Source {
    type Error;
    fn take<T: FromCell>(&mut self, field: &'static FieldDecl) -> Result<T, Self::Error>;
}

/// One field's value, borrowed from its record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell<'a> {
    Null,
    Int(i64),
    Real(f64),
    Bool(bool),
    Text(&'a str),
    Decimal(Decimal),
    Ids(&'a [i64]),
    Texts(&'a [String]),
    StoreRoles(&'a BTreeMap<i64, Role>),
    /// A structured value, shown and stored as its JSON.
    Json(Json<'a>),
}

/// The structured values records keep ([`Kind::Json`]); the read side and the storage layer
/// serialize them, the domain only names them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Json<'a> {
    Receipt(&'a crate::sales::pricing::Receipt),
    ReturnOf(&'a crate::sales::basket::ReturnOf),
    Attributes(&'a crate::customers::customer::Attributes),
    Denominations(&'a crate::till::session::Denominations),
    TillFigures(&'a crate::till::session::TillFigures),
    SyncWarnings(&'a crate::offline::sync::SyncWarnings),
}

impl serde::Serialize for Json<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Receipt(r) => r.serialize(s),
            Json::ReturnOf(r) => r.serialize(s),
            Json::Attributes(a) => a.serialize(s),
            Json::Denominations(d) => d.serialize(s),
            Json::TillFigures(f) => f.serialize(s),
            Json::SyncWarnings(w) => w.serialize(s),
        }
    }
}

/// A stored value, as the storage layer decodes it for a field of a given [`Kind`].
#[derive(Clone, Debug, PartialEq)]
pub enum Stored {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Decimal(Decimal),
    Ids(Vec<i64>),
    Texts(Vec<String>),
    /// Store id → role id.
    Pairs(Vec<(i64, i64)>),
}

/// A field type's value as a [`Cell`].
pub trait AsCell {
    fn as_cell(&self) -> Cell<'_>;
}

/// A field type made from a [`Stored`] value (`None`: the value does not fit).
pub trait FromCell: Sized {
    fn from_cell(value: Stored) -> Option<Self>;
}

/// A field type kept as JSON text ([`Kind::Json`]), with its OpenAPI schema.
pub trait JsonCell {
    const SCHEMA: &'static str;
}

/// A structured type kept as JSON ([`Kind::Json`]): its variant of [`Json`] and its OpenAPI
/// schema's name.
#[macro_export]
macro_rules! json_cell {
    ($ty:ty, $variant:ident, $schema:literal) => {
        impl $crate::record::AsCell for $ty {
            fn as_cell(&self) -> $crate::record::Cell<'_> {
                $crate::record::Cell::Json($crate::record::Json::$variant(self))
            }
        }

        impl $crate::record::FromCell for $ty {
            fn from_cell(value: $crate::record::Stored) -> Option<Self> {
                match value {
                    $crate::record::Stored::Text(json) => serde_json::from_str(&json).ok(),
                    _ => None,
                }
            }
        }

        impl $crate::record::JsonCell for $ty {
            const SCHEMA: &'static str = $schema;
        }
    };
}

/// An enumeration stored and shown as one of its words.
pub trait Choice: Sized + Copy {
    const VALUES: &'static [&'static str];
    fn as_str(self) -> &'static str;
    fn parse(text: &str) -> Option<Self>;
}

impl AsCell for i64 {
    fn as_cell(&self) -> Cell<'_> {
        Cell::Int(*self)
    }
}

impl FromCell for i64 {
    fn from_cell(value: Stored) -> Option<Self> {
        match value {
            Stored::Int(v) => Some(v),
            _ => None,
        }
    }
}

impl AsCell for f64 {
    fn as_cell(&self) -> Cell<'_> {
        Cell::Real(*self)
    }
}

impl FromCell for f64 {
    fn from_cell(value: Stored) -> Option<Self> {
        match value {
            Stored::Real(v) => Some(v),
            Stored::Int(v) => Some(v as f64),
            _ => None,
        }
    }
}

impl AsCell for bool {
    fn as_cell(&self) -> Cell<'_> {
        Cell::Bool(*self)
    }
}

impl FromCell for bool {
    fn from_cell(value: Stored) -> Option<Self> {
        match value {
            Stored::Int(v) => Some(v != 0),
            _ => None,
        }
    }
}

impl AsCell for String {
    fn as_cell(&self) -> Cell<'_> {
        Cell::Text(self)
    }
}

impl FromCell for String {
    fn from_cell(value: Stored) -> Option<Self> {
        match value {
            Stored::Text(v) => Some(v),
            _ => None,
        }
    }
}

impl AsCell for Decimal {
    fn as_cell(&self) -> Cell<'_> {
        Cell::Decimal(*self)
    }
}

impl FromCell for Decimal {
    fn from_cell(value: Stored) -> Option<Self> {
        match value {
            Stored::Decimal(v) => Some(v),
            _ => None,
        }
    }
}

impl AsCell for Vec<i64> {
    fn as_cell(&self) -> Cell<'_> {
        Cell::Ids(self)
    }
}

impl FromCell for Vec<i64> {
    fn from_cell(value: Stored) -> Option<Self> {
        match value {
            Stored::Ids(v) => Some(v),
            Stored::Null => Some(Vec::new()),
            _ => None,
        }
    }
}

impl AsCell for Vec<String> {
    fn as_cell(&self) -> Cell<'_> {
        Cell::Texts(self)
    }
}

impl FromCell for Vec<String> {
    fn from_cell(value: Stored) -> Option<Self> {
        match value {
            Stored::Texts(v) => Some(v),
            Stored::Null => Some(Vec::new()),
            _ => None,
        }
    }
}

impl AsCell for Role {
    fn as_cell(&self) -> Cell<'_> {
        Cell::Int(self.id())
    }
}

impl FromCell for Role {
    fn from_cell(value: Stored) -> Option<Self> {
        match value {
            Stored::Int(id) => Role::from_id(id),
            _ => None,
        }
    }
}

impl AsCell for BTreeMap<i64, Role> {
    fn as_cell(&self) -> Cell<'_> {
        Cell::StoreRoles(self)
    }
}

impl FromCell for BTreeMap<i64, Role> {
    fn from_cell(value: Stored) -> Option<Self> {
        match value {
            Stored::Null => Some(BTreeMap::new()),
            Stored::Pairs(pairs) => pairs
                .into_iter()
                .map(|(store, role)| Role::from_id(role).map(|r| (store, r)))
                .collect(),
            _ => None,
        }
    }
}

impl<T: AsCell> AsCell for Option<T> {
    fn as_cell(&self) -> Cell<'_> {
        match self {
            Some(v) => v.as_cell(),
            None => Cell::Null,
        }
    }
}

impl<T: FromCell> FromCell for Option<T> {
    fn from_cell(value: Stored) -> Option<Self> {
        match value {
            Stored::Null => Some(None),
            other => T::from_cell(other).map(Some),
        }
    }
}

/// An enumeration of words from one table (the first variant is the default): the enum, its
/// [`Choice`] words and its cells, so a word is written once and cannot drift from its variant.
#[macro_export]
macro_rules! choice {
    ($(#[$meta:meta])* $vis:vis enum $name:ident {
        $first:ident = $first_word:literal $(, $variant:ident = $word:literal)* $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
        $vis enum $name {
            #[default]
            $first,
            $($variant,)*
        }

        impl $crate::record::Choice for $name {
            const VALUES: &'static [&'static str] = &[$first_word $(, $word)*];

            fn as_str(self) -> &'static str {
                match self {
                    Self::$first => $first_word,
                    $(Self::$variant => $word,)*
                }
            }

            fn parse(text: &str) -> Option<Self> {
                match text {
                    $first_word => Some(Self::$first),
                    $($word => Some(Self::$variant),)*
                    _ => None,
                }
            }
        }

        $crate::choice_cell!($name);
    };
}

/// Choices are stored and shown as their word.
#[macro_export]
macro_rules! choice_cell {
    ($($t:ty),*) => {
        $(impl $crate::record::AsCell for $t {
            fn as_cell(&self) -> $crate::record::Cell<'_> {
                $crate::record::Cell::Text($crate::record::Choice::as_str(*self))
            }
        }

        impl $crate::record::FromCell for $t {
            fn from_cell(value: $crate::record::Stored) -> Option<Self> {
                match value {
                    $crate::record::Stored::Text(word) => {
                        <$t as $crate::record::Choice>::parse(&word)
                    }
                    _ => None,
                }
            }
        })*
    };
}

/// `pub fn new(id, now)` of a record type: nothing written yet, active from `now`, every other
/// field at its `Default` unless named (`blank!(|id, now| timezone: DEFAULT_TIMEZONE.into())`).
#[macro_export]
macro_rules! blank {
    (|$id:ident, $now:ident| $($field:ident: $value:expr),* $(,)?) => {
        /// A record with nothing written yet.
        pub fn new($id: i64, $now: i64) -> Self {
            Self {
                id: $id,
                active_date: Some($now),
                $($field: $value,)*
                ..Self::default()
            }
        }
    };
}
