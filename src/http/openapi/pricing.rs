//! `POST /basket/calculate` and the `Receipt` a basket carries (docs/money-and-tax.md).

use actix_web::http::Method;
use utoipa::openapi::path::{HttpMethod, PathItem};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::{Content, Required};

use super::endpoints::envelope_with;
use super::paths::{api_operation, item, ok, with};
use super::schemas::{self, closed, keyed, named, RATE};

/// The receipt and its parts.
pub fn schemas() -> Vec<(&'static str, Schema)> {
    let int = schemas::integer;
    let line = closed()
        .description(Some("A line's amounts, in minor units."))
        .property("lineId", int())
        .property("key", schemas::string())
        .property("gross", int())
        .property("discount", int())
        .property("net", int())
        .property("tax", int())
        .property("total", int())
        .required("lineId")
        .required("gross")
        .required("discount")
        .required("net")
        .required("tax")
        .required("total")
        .build();
    let discount = closed()
        .description(Some("A promotion's discount, shared over its lines before tax."))
        .property("promotionId", int())
        .property("amount", int())
        .property("lineIds", schemas::integers())
        .property("shares", schemas::integers())
        .required("promotionId")
        .required("amount")
        .required("lineIds")
        .required("shares")
        .build();
    let tax = closed()
        .description(Some("One rate's tax over the basket."))
        .property("code", schemas::string())
        .property(
            "rate",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(RATE)),
        )
        .property("included", schemas::boolean())
        .property("taxable", int())
        .property("tax", int())
        .required("code")
        .required("rate")
        .required("included")
        .required("taxable")
        .required("tax")
        .build();
    let cash = closed()
        .property("increment", int())
        .property("total", int())
        .property("rounding", int())
        .required("increment")
        .required("total")
        .required("rounding")
        .build();
    let mut receipt = closed().description(Some(
        "A basket priced by the sale engine, every amount in whole minor units: its lines, \
         discounts, tax per rate and totals; `cash` is what paying it all in cash settles at, \
         `cashRounding` the rounding its cash payments settled with (at completion).",
    ));
    receipt = receipt
        .property("lines", ArrayBuilder::new().items(named("ReceiptLine")))
        .property("discounts", ArrayBuilder::new().items(named("ReceiptDiscount")))
        .property("taxes", ArrayBuilder::new().items(named("ReceiptTax")))
        .property("cash", named("ReceiptCash"));
    for field in [
        "lines",
        "discounts",
        "taxes",
        "subtotal",
        "discount",
        "tax",
        "taxAdded",
        "total",
        "cash",
        "cashRounding",
    ] {
        if !matches!(field, "lines" | "discounts" | "taxes" | "cash") {
            receipt = receipt.property(field, int());
        }
        receipt = receipt.required(field);
    }
    let body = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("baskets", keyed(named("BasketWrite")))
        .required("baskets")
        .build()
        .into();
    vec![
        ("Receipt", receipt.build().into()),
        ("ReceiptLine", line.into()),
        ("ReceiptDiscount", discount.into()),
        ("ReceiptTax", tax.into()),
        ("ReceiptCash", cash.into()),
        ("CalculateBody", body),
    ]
}

fn calculate() -> PathItem {
    let op = api_operation(
        &Method::POST,
        "/basket/calculate",
        "calculateBaskets".into(),
        "Price baskets without writing them".into(),
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
            .content("application/json", Content::new(Some(named("CalculateBody"))))
            .build(),
    ))
    .response(
        "200",
        ok(
            "Each basket's receipt, keyed by client key; baskets that could not be priced are \
             named in the messages.",
            envelope_with("receipts", keyed(named("Receipt"))),
            None,
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
