//! `POST /basket/calculate` and the `Receipt` a basket carries (docs/money-and-tax.md).

use actix_web::http::Method;
use utoipa::openapi::path::{HttpMethod, PathItem};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::{Content, RefOr, Required};

use crate::common::{api_operation, item, ok, with};
use crate::endpoints::envelope_with;
use crate::schemas::{self, keyed, named};

use schemas::fields_object as object;

/// The receipt and its parts.
pub fn schemas() -> Vec<(&'static str, Schema)> {
    let int = || RefOr::T(schemas::integer());
    let list = |name: &str| RefOr::T(ArrayBuilder::new().items(named(name)).build().into());
    let rate = ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(schemas::rate_pattern()))
        .build();
    let line = object(
        "A line's amounts, in minor units.",
        vec![
            ("lineId", int()),
            ("key", RefOr::T(schemas::string())),
            ("gross", int()),
            ("discount", int()),
            ("net", int()),
            ("tax", int()),
            ("total", int()),
        ],
        &["key"],
    );
    let discount = object(
        "A promotion's discount, shared over its lines before tax.",
        vec![
            ("promotionId", int()),
            ("amount", int()),
            ("lineIds", RefOr::T(schemas::integers())),
            ("shares", RefOr::T(schemas::integers())),
        ],
        &[],
    );
    let tax = object(
        "One rate's tax over the basket.",
        vec![
            ("code", RefOr::T(schemas::string())),
            ("rate", RefOr::T(rate.into())),
            ("included", RefOr::T(schemas::boolean())),
            ("taxable", int()),
            ("tax", int()),
        ],
        &[],
    );
    let cash = object(
        "What paying the whole total in cash settles at.",
        vec![("increment", int()), ("total", int()), ("rounding", int())],
        &[],
    );
    let receipt = object(
        "A basket priced by the sale engine, every amount in whole minor units: its lines, \
         discounts, tax per rate and totals; `cash` is what paying it all in cash settles at, \
         `cashRounding` the rounding its cash payments settled with (at completion).",
        vec![
            ("lines", list("ReceiptLine")),
            ("discounts", list("ReceiptDiscount")),
            ("taxes", list("ReceiptTax")),
            ("subtotal", int()),
            ("discount", int()),
            ("tax", int()),
            ("taxAdded", int()),
            ("total", int()),
            ("cash", named("ReceiptCash")),
            ("cashRounding", int()),
        ],
        &[],
    );
    let return_of = object(
        "The sale line a return line gives back: a completed sale basket of the merchant and \
         one of its sold lines.",
        vec![("basketId", int()), ("lineId", int())],
        &[],
    );
    let body = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("baskets", keyed(named("BasketWrite")))
        .required("baskets")
        .build()
        .into();
    let attributes = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(
            "A customer's own fields, key → text (at most 50, keys of 1 to 60 characters, \
             values of at most 500).",
        ))
        .additional_properties(Some(schemas::string()))
        .build()
        .into();
    vec![
        ("CustomerAttributes", attributes),
        ("ReturnOf", return_of),
        ("Receipt", receipt),
        ("ReceiptLine", line),
        ("ReceiptDiscount", discount),
        ("ReceiptTax", tax),
        ("ReceiptCash", cash),
        ("CalculateBody", body),
    ]
}

fn calculate() -> PathItem {
    let op = api_operation(
        &Method::POST,
        "/basket/calculate",
        "calculateBaskets",
        "Price baskets without writing them",
    )
    .description(Some(
        "The sale engine that completion records, run without writing: each basket of the body \
         (a new basket's fields, or an open basket's `id` with fields to try on it) answers its \
         receipt under its client key — lines (with their client keys), discounts, tax per rate, \
         totals and the cash total. A completed basket's `id` answers the receipt its \
         completion recorded. Needs the `read` scope."
            .to_owned(),
    ))
    .request_body(Some(
        RequestBodyBuilder::new()
            .required(Some(Required::True))
            .content(
                "application/json",
                Content::new(Some(named("CalculateBody"))),
            )
            .build(),
    ))
    .response(
        "200",
        ok(
            "Each basket's receipt, keyed by client key; baskets that could not be priced are \
             named in the messages.",
            envelope_with("receipts", keyed(named("Receipt"))),
        ),
    );
    item(vec![(
        HttpMethod::Post,
        with(op, &["400", "413", "415", "422"]).build(),
    )])
}

pub fn items() -> Vec<(&'static str, PathItem)> {
    vec![("/basket/calculate", calculate())]
}
