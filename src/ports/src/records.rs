//! The record types of the registry (`domain::for_each_record!`) as storage sees them: which
//! one ([`RecordKind`]), some of one type ([`Records`]), and the changes one write made to
//! some of one type ([`RecordChanges`]). Closed enums, so storage dispatches on them with a
//! `match` and the engine never hands it code.

use domain::batch::Change;
use domain::record::{Declared, RecordDecl};

/// A record type of the registry as data: `Records::of::<R>`, `R::KIND`.
pub trait Registered: Declared + Clone + Send + Sync + 'static {
    const KIND: RecordKind;
    fn into_records(records: Vec<Self>) -> Records;
    /// The records, when they are of this type.
    fn from_records(records: Records) -> Option<Vec<Self>>;
    fn changes(changes: &[(Change, Self)]) -> RecordChanges<'_>;
}

macro_rules! record_enums {
    ($($collection:ident: $ty:path = $rules:ident,)*) => {
        /// One of the registry's record types.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(non_camel_case_types)]
        pub enum RecordKind {
            $($collection,)*
        }

        impl RecordKind {
            pub const ALL: &'static [RecordKind] = &[$(RecordKind::$collection),*];

            /// The collection's name in the merchant's state (`supplier_stores`).
            pub fn collection(self) -> &'static str {
                match self {
                    $(RecordKind::$collection => stringify!($collection),)*
                }
            }

            /// `visitor.visit::<R>()` for this kind's record type `R`.
            pub fn visit<V: KindVisitor>(self, visitor: V) -> V::Out {
                match self {
                    $(RecordKind::$collection => visitor.visit::<$ty>(),)*
                }
            }

            pub fn decl(self) -> &'static RecordDecl {
                match self {
                    $(RecordKind::$collection => <$ty as Declared>::DECL,)*
                }
            }
        }

        /// Records of one type.
        #[derive(Clone, Debug)]
        #[allow(non_camel_case_types)]
        pub enum Records {
            $($collection(Vec<$ty>),)*
        }

        impl Records {
            pub fn kind(&self) -> RecordKind {
                match self {
                    $(Records::$collection(_) => RecordKind::$collection,)*
                }
            }

            pub fn len(&self) -> usize {
                match self {
                    $(Records::$collection(v) => v.len(),)*
                }
            }

            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// No records of `kind`.
            pub fn none(kind: RecordKind) -> Self {
                match kind {
                    $(RecordKind::$collection => Records::$collection(Vec::new()),)*
                }
            }
        }

        /// What one write (or group) changed of one record type, in order.
        #[derive(Clone, Copy, Debug)]
        #[allow(non_camel_case_types)]
        pub enum RecordChanges<'a> {
            $($collection(&'a [(Change, $ty)]),)*
        }

        impl RecordChanges<'_> {
            pub fn kind(&self) -> RecordKind {
                match self {
                    $(RecordChanges::$collection(_) => RecordKind::$collection,)*
                }
            }
        }

        $(impl Registered for $ty {
            const KIND: RecordKind = RecordKind::$collection;

            fn into_records(records: Vec<Self>) -> Records {
                Records::$collection(records)
            }

            fn from_records(records: Records) -> Option<Vec<Self>> {
                match records {
                    Records::$collection(v) => Some(v),
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }

            fn changes(changes: &[(Change, Self)]) -> RecordChanges<'_> {
                RecordChanges::$collection(changes)
            }
        })*
    };
}

domain::for_each_record!(record_enums);

/// Something done with one record type, chosen at run time by its [`RecordKind`]
/// (`kind.visit(Load { db, merchant_id })`): what a generic function over record types is
/// called through when the type is data.
pub trait KindVisitor {
    type Out;
    fn visit<R: Registered>(self) -> Self::Out;
}
