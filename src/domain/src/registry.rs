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
            stores: $crate::catalogue::store::StoreRecord,
            categories: $crate::catalogue::category::CategoryRecord,
            products: $crate::catalogue::product::ProductRecord,
            suppliers: $crate::catalogue::supplier::SupplierRecord,
            supplier_stores: $crate::catalogue::supplier::SupplierStoreRecord,
            employees: $crate::people::employee::EmployeeRecord,
            applications: $crate::people::application::ApplicationRecord,
            promotions: $crate::catalogue::promotion::PromotionRecord,
            webhooks: $crate::webhooks::webhook::WebhookRecord,
            customers: $crate::customers::customer::CustomerRecord,
            registers: $crate::till::register::RegisterRecord,
            sessions: $crate::till::session::SessionRecord,
            cash_movements: $crate::till::session::CashMovementRecord,
            baskets: $crate::sales::basket::BasketRecord,
            transactions: $crate::sales::payment::TransactionRecord,
            orders: $crate::sales::order::OrderRecord,
            invoices: $crate::stock::invoice::InvoiceRecord,
            stock_reconciliations: $crate::stock::count::StockReconciliation,
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

#[cfg(test)]
mod tests {
    use crate::record::{Kind, RecordDecl};

    /// Each declaration and the nested ones it holds.
    fn with_children(decl: &'static RecordDecl, out: &mut Vec<&'static RecordDecl>) {
        out.push(decl);
        for field in decl.fields {
            if let Kind::Children(child) = field.kind {
                with_children(child, out);
            }
        }
    }

    #[test]
    fn every_written_text_and_number_declares_its_limits() {
        let mut decls = Vec::new();
        for decl in super::declarations() {
            with_children(decl, &mut decls);
        }
        let mut missing = Vec::new();
        for decl in decls {
            for f in decl.fields.iter().filter(|f| f.writable()) {
                let limits = f.limits;
                let unbounded = match f.kind {
                    Kind::Text | Kind::Url => limits.max_len.is_none(),
                    Kind::Number => limits.min.is_none() || limits.max.is_none(),
                    _ => false,
                };
                if unbounded {
                    missing.push(format!("{}.{}", decl.schema, f.name));
                }
            }
        }
        assert!(
            missing.is_empty(),
            "fields without declared limits: {missing:?}"
        );
    }
}
