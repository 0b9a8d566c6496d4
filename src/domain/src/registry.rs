//! The record types a merchant's supervisor keeps: the one list every layer reads. Each layer
//! hands [`for_each_record!`] a macro of its own and gets one item per record type: the
//! storage's record enums, the engine's state collections and loads, the HTTP routes and the
//! OpenAPI document. Adding a record type is its declaration, a migration and one line here.
//!
//! A line is `collection: Type`, in the order a merchant is loaded and its tables are
//! archived (a record after the records it names).

/// Calls `$callback! { collection: path::Type, ... }` with every record type.
#[macro_export]
macro_rules! for_each_record {
    ($callback:path) => {
        $callback! {
            stores: $crate::store::StoreRecord,
            categories: $crate::category::CategoryRecord,
            products: $crate::product::ProductRecord,
            suppliers: $crate::supplier::SupplierRecord,
            supplier_stores: $crate::supplier::SupplierStoreRecord,
            employees: $crate::employee::EmployeeRecord,
            applications: $crate::application::ApplicationRecord,
            promotions: $crate::promotion::PromotionRecord,
            webhooks: $crate::webhook::WebhookRecord,
            customers: $crate::customer::CustomerRecord,
            registers: $crate::register::RegisterRecord,
            sessions: $crate::till::SessionRecord,
            cash_movements: $crate::till::CashMovementRecord,
            baskets: $crate::basket::BasketRecord,
            transactions: $crate::sales::TransactionRecord,
            orders: $crate::sales::OrderRecord,
            invoices: $crate::sales::InvoiceRecord,
            stock_reconciliations: $crate::reconcile::StockReconciliation,
        }
    };
}

macro_rules! declarations {
    ($($collection:ident: $ty:path,)*) => {
        /// Every record type's declaration, in the registry's order.
        pub fn declarations() -> [&'static $crate::record::RecordDecl; [$(stringify!($collection)),*].len()] {
            [$(<$ty as $crate::record::Declared>::DECL),*]
        }
    };
}

for_each_record!(declarations);
