//! Records as JSON, from their declarations: one writer for every record type, so the field
//! list a record declares is the one its answers show.
//!
//! A read renders a record once per version and keeps the text (see `views::records`); what
//! shows other records (a product's category titles) is left as a `{}` placeholder whose
//! offset is kept, and written afresh at each read.

use domain::dates::to_iso;
use domain::money;
use domain::record::{Access, Cell, FieldDecl, Kind, Visit, Visitor};
use domain::Role;

/// What a rendering shows beyond the record's own fields.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// Where uploaded files are served (`<public_base_url>`), for image URLs.
    pub files_base: &'a str,
    /// Who renders: a read (or a write's answer), or a change event.
    pub audience: Audience,
    /// A secret the write made, shown once where the record declares it.
    pub secret: Option<&'a str>,
}

/// Who a rendering is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Audience {
    Read,
    /// Events reach `read` streams and the merchant's other endpoints: URLs show their origin.
    Event,
}

impl<'a> Context<'a> {
    pub fn read(files_base: &'a str) -> Self {
        Self {
            files_base,
            audience: Audience::Read,
            secret: None,
        }
    }
}

/// Where a rendering left its live placeholder, and the ids the live part shows.
pub type Live = Option<(usize, Vec<i64>)>;

/// A record's JSON and its live placeholder, when it has one.
pub fn render(record: &dyn Visit, ctx: &Context<'_>) -> (String, Live) {
    let mut out = String::with_capacity(256);
    let live = write(record, ctx, &mut out);
    (out, live)
}

/// Writes a record's JSON object into `out`; gives its live placeholder.
pub fn write(record: &dyn Visit, ctx: &Context<'_>, out: &mut String) -> Live {
    let mut writer = Writer {
        out,
        ctx,
        first: true,
        live: None,
    };
    writer.out.push('{');
    record.visit(&mut writer);
    writer.out.push('}');
    writer.live
}

struct Writer<'o, 'c, 'x> {
    out: &'o mut String,
    ctx: &'c Context<'x>,
    first: bool,
    live: Live,
}

impl Writer<'_, '_, '_> {
    fn key(&mut self, name: &str) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        push_str(self.out, name);
        self.out.push(':');
    }
}

impl Visitor for Writer<'_, '_, '_> {
    fn cell(&mut self, field: &'static FieldDecl, value: Cell<'_>) {
        match field.access {
            Access::Hidden | Access::WriteOnly => return,
            Access::Once => {
                if let Some(secret) = self.ctx.secret {
                    self.key(field.name);
                    push_str(self.out, secret);
                }
                return;
            }
            _ => {}
        }
        self.key(field.name);
        match (field.kind, value) {
            (_, Cell::Null) => self.out.push_str("null"),
            (Kind::Date, Cell::Int(ms)) => match to_iso(ms) {
                Some(iso) => push_str(self.out, &iso),
                None => self.out.push_str("null"),
            },
            (_, Cell::Int(v)) => self.out.push_str(itoa::Buffer::new().format(v)),
            (_, Cell::Real(v)) => match serde_json::Number::from_f64(v) {
                Some(n) => self.out.push_str(&n.to_string()),
                None => self.out.push_str("null"),
            },
            (_, Cell::Bool(v)) => self.out.push_str(if v { "true" } else { "false" }),
            (Kind::Url, Cell::Text(url)) if self.ctx.audience == Audience::Event => {
                let origin = url::Url::parse(url)
                    .map(|u| u.origin().ascii_serialization())
                    .unwrap_or_default();
                push_str(self.out, &origin)
            }
            (_, Cell::Text(v)) => push_str(self.out, v),
            (_, Cell::Decimal(d)) => {
                let d = if field.normalized { d.normalize() } else { d };
                push_str(self.out, &money::text(&d));
            }
            (Kind::Categories, Cell::Ids(ids)) => {
                self.live = Some((self.out.len(), ids.to_vec()));
                self.out.push_str("{}");
            }
            (_, Cell::Ids(ids)) => {
                self.out.push('[');
                for (i, id) in ids.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    self.out.push_str(itoa::Buffer::new().format(*id));
                }
                self.out.push(']');
            }
            (kind, Cell::Texts(texts)) => {
                self.out.push('[');
                for (i, text) in texts.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    if matches!(kind, Kind::Images) {
                        push_str(self.out, &format!("{}/files/{text}", self.ctx.files_base));
                    } else {
                        push_str(self.out, text);
                    }
                }
                self.out.push(']');
            }
            (_, Cell::StoreRoles(roles)) => write_store_roles(self.out, roles),
            (_, Cell::Json(value)) => match serde_json::to_string(&value) {
                Ok(text) => self.out.push_str(&text),
                Err(_) => self.out.push_str("null"),
            },
        }
    }

    fn children(&mut self, field: &'static FieldDecl, items: &mut dyn Iterator<Item = &dyn Visit>) {
        self.key(field.name);
        self.out.push('{');
        for (i, child) in items.enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            push_key(self.out, child.key());
            write(child, self.ctx, self.out);
        }
        self.out.push('}');
    }
}

/// `{"<category id>": "<title>", ...}` of the live categories among `ids`, in their order.
pub fn write_categories<'a>(out: &mut String, ids: &[i64], title: &dyn Fn(i64) -> Option<&'a str>) {
    out.push('{');
    let mut written: Vec<i64> = Vec::with_capacity(ids.len());
    for id in ids {
        let Some(title) = title(*id) else {
            continue;
        };
        if written.contains(id) {
            continue;
        }
        if !written.is_empty() {
            out.push(',');
        }
        written.push(*id);
        push_key(out, *id);
        push_str(out, title);
    }
    out.push('}');
}

/// `{"<store id>": {"id": <store id>, "roleId": <role id>}, ...}`
pub fn write_store_roles(out: &mut String, roles: &std::collections::BTreeMap<i64, Role>) {
    out.push('{');
    for (i, (store, role)) in roles.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let mut n = itoa::Buffer::new();
        push_key(out, *store);
        out.push_str("{\"id\":");
        out.push_str(n.format(*store));
        out.push_str(",\"roleId\":");
        out.push_str(n.format(role.id()));
        out.push('}');
    }
    out.push('}');
}

/// A string as JSON (quoted and escaped), as serde_json would write it.
pub fn push_str(out: &mut String, text: &str) {
    let plain = text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\');
    if plain {
        out.push('"');
        out.push_str(text);
        out.push('"');
    } else {
        // A str always serializes.
        out.push_str(&serde_json::to_string(text).unwrap_or_default());
    }
}

/// `"<id>":`
pub fn push_key(out: &mut String, id: i64) {
    out.push('"');
    out.push_str(itoa::Buffer::new().format(id));
    out.push_str("\":");
}

#[cfg(test)]
mod parity {
    //! Every record type rendered from its declaration, against the golden file of what the
    //! hand-written renderers it replaced answered (`golden/records.jsonl`, one record a
    //! line, in the order below).
    use std::collections::BTreeMap;

    use rust_decimal::Decimal;

    use super::*;
    use domain::catalogue::category::CategoryRecord;
    use domain::catalogue::product::{InstanceRecord, ProductRecord};
    use domain::catalogue::promotion::{PromotionRecord, PromotionType};
    use domain::catalogue::store::StoreRecord;
    use domain::catalogue::supplier::{SupplierRecord, SupplierStoreRecord};
    use domain::people::application::ApplicationRecord;
    use domain::people::employee::EmployeeRecord;
    use domain::sales::basket::{BasketLine, BasketRecord, BasketType};
    use domain::sales::order::OrderRecord;
    use domain::sales::payment::TransactionRecord;
    use domain::stock::count::{CountLine, StockReconciliation, SurplusEntry};
    use domain::stock::invoice::{InvoiceItem, InvoiceRecord};
    use domain::webhooks::webhook::WebhookRecord;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    const GOLDEN: &str = include_str!("golden/records.jsonl");

    fn same(record: &dyn Visit, line: usize) {
        let (new, _) = render(record, &Context::read("http://x"));
        assert_eq!(new, GOLDEN.lines().nth(line).unwrap_or_default());
    }

    #[test]
    fn catalogue_records_render_as_before() {
        let store = StoreRecord {
            id: 1,
            name: "Caf\u{e9} \"One\"\n".into(),
            address_line1: Some("1 High St".into()),
            address_line2: None,
            address_line3: None,
            city: Some("Bath".into()),
            postcode: None,
            country_id: Some("GB".into()),
            phone_number: None,
            email: None,
            lat: Some(51.5),
            lng: Some(-2.0),
            timezone: "Europe/London".into(),
            sandbox: true,
            active_date: Some(1_700_000_000_123),
            delete_date: None,
        };
        same(&store, 0);
        let cat = CategoryRecord {
            id: 2,
            title: "Hot".into(),
            parent_id: Some(1),
            active_date: None,
            delete_date: Some(5),
        };
        same(&cat, 1);
        let emp = EmployeeRecord {
            id: 3,
            first_name: Some("A".into()),
            last_name: None,
            email: "a@b.c".into(),
            role: domain::Role::Manager,
            stores: BTreeMap::from([(10, domain::Role::Guest), (2, domain::Role::Owner)]),
            joined_date: Some(1),
            exit_date: None,
            active_date: Some(2),
            delete_date: None,
        };
        same(&emp, 2);
        let app = ApplicationRecord {
            id: 4,
            name: "POS".into(),
            description: None,
            redirect_uris: vec!["https://a/b".into(), "http://127.0.0.1/cb".into()],
            client_id: "cid".into(),
            logo: None,
            active_date: Some(3),
            delete_date: None,
            new_secret_hash: Some("h".into()),
        };
        same(&app, 3);
        let sup = SupplierRecord {
            id: 5,
            name: "S".into(),
            description: Some("d".into()),
            company_number: None,
            vat_number: Some("GB1".into()),
            note: None,
            active_date: Some(1),
            delete_date: None,
        };
        same(&sup, 4);
        let ss = SupplierStoreRecord {
            id: 6,
            supplier_id: 5,
            name: None,
            address_line1: None,
            address_line2: None,
            address_line3: None,
            city: None,
            postcode: None,
            country_id: None,
            phone_number: None,
            email: Some("x@y".into()),
            lat: None,
            lng: Some(1.25),
            active_date: None,
            delete_date: None,
        };
        same(&ss, 5);
    }

    #[test]
    fn products_and_promotions_render_as_before() {
        let promo = PromotionRecord {
            id: 7,
            title: "10%".into(),
            details: None,
            terms: None,
            kind: PromotionType::XForY,
            x: d("3.0"),
            y: Some(d("2")),
            store_ids: vec![],
            product_ids: vec![1, 2],
            category_ids: vec![3],
            start_date: 10,
            end_date: None,
            days_available: vec![0, 6],
            automatic: true,
            stackable: false,
            active_date: Some(1),
            delete_date: None,
        };
        same(&promo, 6);
        let product = ProductRecord {
            id: 8,
            name: "Tea".into(),
            barcode: Some("123".into()),
            details: None,
            tags: None,
            unit: Some(1.5),
            images: vec!["a.png".into()],
            category_ids: vec![2],
            instances: vec![
                InstanceRecord {
                    id: 9,
                    product_id: 8,
                    name: Some("Small".into()),
                    price: d("250.00"),
                    tax_percentage: d("0.200"),
                    size: None,
                    tags: None,
                    tax_codes: vec![],
                    active_date: Some(1),
                    delete_date: None,
                },
                InstanceRecord {
                    id: 10,
                    product_id: 8,
                    name: None,
                    price: d("1"),
                    tax_percentage: d("0"),
                    size: None,
                    tags: None,
                    tax_codes: vec![],
                    active_date: Some(1),
                    delete_date: Some(2),
                },
            ],
            created_at: 5,
            active_date: Some(5),
            delete_date: None,
        };
        same(&product, 7);
    }

    #[test]
    fn sales_render_as_before() {
        let basket = BasketRecord {
            id: 11,
            store_id: 1,
            name: None,
            note: Some("n".into()),
            basket_type: BasketType::Sale,
            lines: vec![BasketLine {
                id: 12,
                basket_id: 11,
                product_id: 8,
                product_instance_id: 9,
                quantity: 3,
                price: d("250.00"),
                original_price: d("300.10"),
                tax_percentage: d("0.200"),
                note: None,
                added_date: 7,
                return_of: None,
                restock: true,
                client_id: None,
            }],
            completed: true,
            complete_date: Some(9),
            active_date: Some(1),
            delete_date: None,
            promotion_ids: vec![],
            customer_id: None,
            register_id: Some(3),
            session_id: Some(4),
            employee_id: Some(5),
            receipt_number: Some(6),
            receipt: None,
            client_id: None,
            occurred_at: None,
            sync_date: None,
            sync_warnings: None,
            client_digest: Some("never shown".into()),
        };
        same(&basket, 8);
        let tx = TransactionRecord {
            id: 13,
            basket_id: 11,
            payment_type: "CASH".into(),
            amount: 750,
            tip: 0,
            note: None,
            refund_of: None,
            register_id: Some(3),
            session_id: Some(4),
            employee_id: None,
            completed: false,
            complete_date: None,
            active_date: Some(1),
            delete_date: None,
            ..TransactionRecord::default()
        };
        same(&tx, 9);
        let order = OrderRecord {
            id: 14,
            basket_id: 11,
            store_id: 1,
            fulfilment: "table".into(),
            customer_id: Some(21),
            customer_name: Some("C".into()),
            customer_email: None,
            customer_phone: None,
            delivery_address: None,
            table_number: Some("4".into()),
            due_date: None,
            note: None,
            status: "ready".into(),
            complete_date: None,
            active_date: Some(1),
            delete_date: None,
        };
        same(&order, 10);
        let invoice = InvoiceRecord {
            id: 15,
            store_id: 1,
            supplier_id: 5,
            supplier_store_id: None,
            reference: Some("R".into()),
            items: vec![InvoiceItem {
                id: 16,
                invoice_id: 15,
                product_id: 8,
                quantity: 4,
                unit_price: d("99.50"),
                vat_percentage: d("0.2"),
            }],
            note: None,
            invoice_date: Some(3),
            completed: false,
            complete_date: None,
            active_date: Some(1),
            delete_date: None,
        };
        same(&invoice, 11);
    }

    #[test]
    fn counts_and_webhooks_render_as_before() {
        let count = StockReconciliation {
            id: 17,
            store_id: 1,
            note: None,
            completed: true,
            complete_date: Some(4),
            lines: vec![CountLine {
                reconciliation_id: 17,
                product_id: 8,
                counted: 5,
                cost_price: Some(d("1.50")),
                vat_percentage: None,
                note: None,
                expected: Some(7),
            }],
            wastage_basket_id: Some(18),
            surplus_entries: vec![SurplusEntry {
                id: 19,
                reconciliation_id: 17,
                store_id: 1,
                product_id: 8,
                quantity: 1,
                entry_date: 4,
            }],
            active_date: Some(1),
            delete_date: None,
            booked_basket: None,
        };
        same(&count, 12);
        let hook = WebhookRecord {
            id: 20,
            url: "https://user:pw@hooks.example/p?q=1".into(),
            events: vec!["product".into()],
            active: false,
            description: None,
            disabled_reason: Some("gone".into()),
            create_date: 1,
            delete_date: None,
            new_secret: Some("whsec_x".into()),
        };
        same(&hook, 13);
        let event = Context {
            audience: Audience::Event,
            ..Context::read("http://x")
        };
        assert_eq!(
            render(&hook, &event).0,
            GOLDEN.lines().nth(14).unwrap_or_default()
        );
    }
}
