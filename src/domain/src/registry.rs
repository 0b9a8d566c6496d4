//! The record types a merchant's supervisor keeps: the one list every layer reads. Each layer
//! hands [`for_each_record!`] a macro of its own and gets one item per record type: the
//! storage's record enums, the engine's state collections and loads, the HTTP routes and the
//! OpenAPI document. Adding a record type is its declaration, a migration and one line here.
//!
//! A line is `collection: Type = rules`, in the order a merchant is loaded and its tables are
//! archived (a record after the records it names). `rules` is `plain` for a record whose
//! declaration says everything (its fields, limits and the records it refers to): each layer
//! then writes its part itself (storage's rows, the engine's write, the routes). A record with
//! rules of its own says `own`, and each layer has code for it, beside its feature.

/// Calls `$callback! { collection: path::Type = rules, ... }` with every record type.
#[macro_export]
macro_rules! for_each_record {
    ($callback:path) => {
        $callback! {
            stores: $crate::catalogue::store::StoreRecord = own,
            categories: $crate::catalogue::category::CategoryRecord = own,
            products: $crate::catalogue::product::ProductRecord = own,
            suppliers: $crate::catalogue::supplier::SupplierRecord = own,
            supplier_stores: $crate::catalogue::supplier::SupplierStoreRecord = own,
            supplier_products: $crate::catalogue::supplier::SupplierProductRecord = plain,
            employees: $crate::people::employee::EmployeeRecord = own,
            applications: $crate::people::application::ApplicationRecord = own,
            promotions: $crate::catalogue::promotion::PromotionRecord = own,
            webhooks: $crate::webhooks::webhook::WebhookRecord = own,
            customers: $crate::customers::customer::CustomerRecord = own,
            registers: $crate::till::register::RegisterRecord = own,
            sessions: $crate::till::session::SessionRecord = own,
            cash_movements: $crate::till::session::CashMovementRecord = own,
            baskets: $crate::sales::basket::BasketRecord = own,
            transactions: $crate::sales::payment::TransactionRecord = own,
            orders: $crate::sales::order::OrderRecord = own,
            invoices: $crate::stock::invoice::InvoiceRecord = own,
            stock_reconciliations: $crate::stock::count::StockReconciliation = own,
        }
    };
}

macro_rules! declarations {
    ($($collection:ident: $ty:path = $rules:ident,)*) => {
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
