//! `/product/import` and `/product/export`: the catalogue file (docs/catalogue.md).

use actix_web::http::Method;
use utoipa::openapi::path::{HttpMethod, PathItem};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::{ArrayBuilder, Schema};
use utoipa::openapi::{Content, Required};

use crate::common::{api_operation, bool_param, item, ok, with};
use crate::endpoints::{envelope_with, plain};
use crate::schemas::{self, closed, named};
use domain::catalogue::file::COLUMNS;

/// What an import answers under `import` (201, and 422 when nothing was imported), and the
/// 422's whole answer.
pub fn schemas() -> Vec<(&'static str, Schema)> {
    let problem = closed()
        .property("row", schemas::integer())
        .property("column", schemas::string())
        .property("message", schemas::string())
        .required("row")
        .required("column")
        .required("message")
        .build();
    let report = closed()
        .property("written", schemas::boolean())
        .property("products", schemas::integer())
        .property("instances", schemas::integer())
        .property("categories", schemas::integer())
        .property("stockCounts", schemas::integers())
        .property("skippedRows", schemas::integers())
        .property("problems", ArrayBuilder::new().items(problem))
        .required("written")
        .required("products")
        .required("instances")
        .required("categories")
        .required("stockCounts")
        .required("skippedRows")
        .required("problems")
        .build()
        .into();
    let refused = schemas::envelope(vec![
        ("import", named("CatalogueImport")),
        ("error", named("ErrorObject")),
    ]);
    vec![
        ("CatalogueImport", report),
        ("CatalogueImportRefused", refused),
    ]
}

fn header_line() -> String {
    format!("{},stock:<store name>...", COLUMNS.join(","))
}

fn import() -> PathItem {
    let csv = Content::new(Some(schemas::string()));
    let op = api_operation(
        &Method::POST,
        "/product/import",
        "importCatalogue",
        "Import products, categories and opening stock from CSV",
    )
    .description(Some(format!(
        "A catalogue file (`text/csv`, UTF-8) with the header `{}`: a row per price instance, \
         a row whose product cell is empty adds an instance to the product above. Every \
         product passes the rules of `POST /product`; categories are found by path (`Drinks > \
         Hot`, several split by `|`) or created; opening stock is booked by a completed stock \
         count a store. All or nothing: a file with a refused row imports nothing and names \
         every such row (422), unless `skipInvalid: true`.",
        header_line()
    )))
    .parameter(bool_param(
        "skipInvalid",
        false,
        "`true` imports the valid rows and names the refused ones.",
    ))
    .request_body(Some(
        RequestBodyBuilder::new()
            .required(Some(Required::True))
            .content("text/csv", csv)
            .build(),
    ))
    .response(
        "201",
        ok(
            "What was imported (with `skipInvalid`, the rows left out and why).",
            envelope_with("import", named("CatalogueImport")),
        ),
    )
    .response(
        "200",
        ok(
            "The file held no product.",
            envelope_with("import", named("CatalogueImport")),
        ),
    )
    .response(
        "422",
        ResponseBuilder::new()
            .description(
                "Rows were refused and nothing was imported: every problem, by row (110); \
                 or an Idempotency-Key reused (114).",
            )
            .content(
                "application/json",
                Content::new(Some(schemas::one_of(vec![
                    named("CatalogueImportRefused"),
                    named("ErrorEnvelope"),
                ]))),
            )
            .build(),
    );
    item(vec![(HttpMethod::Post, with(op, &["413", "415"]).build())])
}

fn export() -> PathItem {
    let op = api_operation(
        &Method::GET,
        "/product/export",
        "exportCatalogue",
        "The catalogue as CSV",
    )
    .description(Some(format!(
        "The merchant's live products as the file `POST /product/import` reads (header `{}`, \
         stores in name order, the stock left at each).",
        header_line()
    )))
    .response(
        "200",
        plain("The catalogue file.", "text/csv", schemas::string()),
    );
    item(vec![(HttpMethod::Get, op.build())])
}

pub fn items() -> Vec<(&'static str, PathItem)> {
    vec![("/product/import", import()), ("/product/export", export())]
}
