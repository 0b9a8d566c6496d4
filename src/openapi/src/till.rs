//! Till sessions' figures and `GET /register/session/report` (docs/tills.md); the sales
//! running totals of `GET /report/sales` (docs/sales-report.md).

use actix_web::http::Method;
use utoipa::openapi::path::{HttpMethod, PathItem};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;

use crate::common::{api_operation, header_param, ids_param, item, ok, with};
use crate::endpoints::envelope_with;
use crate::schemas::{self, keyed, named};

/// A closed object of `fields`, all required.
fn object(description: &str, fields: Vec<(&str, RefOr<Schema>)>) -> Schema {
    schemas::fields_object(description, fields, &[])
}

pub fn schemas() -> Vec<(&'static str, Schema)> {
    let int = || RefOr::T(schemas::integer());
    let maybe_int = || RefOr::T(schemas::nullable_integer());
    let tally = object(
        "How many, and how much (minor units), of one kind of thing a session saw.",
        vec![
            ("count", int()),
            ("quantity", int()),
            ("amount", int()),
            ("tax", int()),
        ],
    );
    let book = || RefOr::T(keyed(named("TillTally")));
    let figures = object(
        "A till session's figures: sales and returns (count, units, total, tax), discounts, \
         cash rounding, payments and refunds by type, tax by code (`amount` is the taxable \
         amount), baskets by employee, units and net amount by category (0: none), cash paid \
         in and out. Amounts are minor units.",
        vec![
            ("sales", named("TillTally")),
            ("returns", named("TillTally")),
            ("discounts", int()),
            ("cashRounding", int()),
            ("payments", book()),
            ("refunds", book()),
            ("taxes", book()),
            ("employees", book()),
            ("categories", book()),
            ("paidIn", named("TillTally")),
            ("paidOut", named("TillTally")),
        ],
    );
    let denominations = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(
            "The counted cash by denomination: a coin or note's minor units → how many.",
        ))
        .additional_properties(Some(schemas::integer()))
        .build()
        .into();
    let drawer = object(
        "The drawer: float + cash sales − cash refunds + paid in − paid out is expected.",
        vec![
            ("openingFloat", int()),
            ("cashSales", int()),
            ("cashRefunds", int()),
            ("paidIn", int()),
            ("paidOut", int()),
            ("expected", int()),
            ("counted", maybe_int()),
            ("difference", maybe_int()),
        ],
    );
    let report = object(
        "A session's X-report (open) or Z-report (closed, never changing), with the text a \
         42-column receipt printer prints.",
        vec![
            ("sessionId", int()),
            ("kind", RefOr::T(schemas::choice(&["X", "Z"]))),
            ("registerId", int()),
            ("storeId", int()),
            ("openDate", RefOr::T(schemas::date(true))),
            ("closeDate", RefOr::T(schemas::date(true))),
            ("openedBy", maybe_int()),
            ("closedBy", maybe_int()),
            ("firstReceiptNumber", maybe_int()),
            ("lastReceiptNumber", maybe_int()),
            ("figures", named("TillFigures")),
            ("cash", named("TillDrawer")),
            ("text", RefOr::T(schemas::string())),
        ],
    );
    // Present only on a closed session that took offline sales after its close.
    let report = match report {
        Schema::Object(mut o) => {
            o.properties
                .insert("supplementary".into(), named("TillSupplementary"));
            Schema::Object(o)
        }
        other => other,
    };
    let supplementary = object(
        "Offline sales synced into a closed session after its close (docs/offline.md): the          baskets and their figures, beside a Z-report that never changes.",
        vec![
            ("basketIds", RefOr::T(schemas::integers())),
            ("figures", named("TillFigures")),
        ],
    );
    let mut all = sales_schemas();
    all.extend([
        ("TillTally", tally),
        ("TillFigures", figures),
        ("TillDrawer", drawer),
        ("Denominations", denominations),
        ("SessionReport", report),
        ("TillSupplementary", supplementary),
    ]);
    all
}

/// `GET /report/sales`'s answer.
fn sales_schemas() -> Vec<(&'static str, Schema)> {
    let int = || RefOr::T(schemas::integer());
    let totals = object(
        "Summed rows: count (baskets, lines, payments or tax rates), quantity (units; returns \
         negative), amount (minor units: totals, line totals, payments less refunds, or the \
         taxable amount), tax and discount.",
        vec![
            ("count", int()),
            ("quantity", int()),
            ("amount", int()),
            ("tax", int()),
            ("discount", int()),
        ],
    );
    let by_key = || RefOr::T(keyed(named("SalesTotals")));
    let sales = object(
        "The running totals by bucket (local day `2026-11-27` or hour `2026-11-27T14`) and key \
         (a store, register or employee id, 0 for none; a category or product id; a payment \
         type; a tax code), and over the whole range.",
        vec![
            ("buckets", RefOr::T(keyed(keyed(named("SalesTotals"))))),
            ("totals", by_key()),
        ],
    );
    vec![("SalesTotals", totals), ("SalesReport", sales)]
}

fn report() -> PathItem {
    let op = api_operation(
        &Method::GET,
        "/register/session/report",
        "sessionReports",
        "X- and Z-reports of till sessions",
    )
    .description(Some(
        "The report of each session `sessionIds` names: an open session's X-report (its \
         figures so far), a closed session's Z-report (the figures frozen at its close). \
         Sessions of other merchants are not found."
            .to_owned(),
    ))
    .parameter(ids_param("sessionIds", true))
    .response(
        "200",
        ok(
            "Each session's report, keyed by its id.",
            envelope_with("sessionReports", keyed(named("SessionReport"))),
        ),
    );
    item(vec![(HttpMethod::Get, with(op, &["400"]).build())])
}

fn sales_report() -> PathItem {
    let local = || {
        RefOr::T(schemas::pattern(
            r"^[0-9]{4}-[0-9]{2}-[0-9]{2}( [0-9]{2}:00:00)?$",
        ))
    };
    let op = api_operation(
        &Method::GET,
        "/report/sales",
        "salesReport",
        "Sales by day or hour, from running totals",
    )
    .description(Some(
        "Completed sale baskets summed from the running totals their completion updated: by \
         each store's local day or hour and by store, register, employee, category, product, \
         payment type or tax code. The range is local wall-clock time (from inclusive, to \
         exclusive, at most 366 days); a daily report's range is whole days."
            .to_owned(),
    ))
    .parameter(header_param(
        "reportFrom",
        local(),
        true,
        "Local date or whole hour.",
    ))
    .parameter(header_param(
        "reportTo",
        local(),
        true,
        "Local date or whole hour.",
    ))
    .parameter(ids_param("storeIds", false))
    .parameter(header_param(
        "period",
        RefOr::T(schemas::choice(&["day", "hour"])),
        false,
        "Buckets of local days (default) or hours.",
    ))
    .parameter(header_param(
        "groupBy",
        RefOr::T(schemas::choice(&api::views::sales::report::GroupBy::NAMES)),
        false,
        "The key within each bucket (default store).",
    ))
    .response(
        "200",
        ok(
            "The totals by bucket and key.",
            envelope_with("salesReport", named("SalesReport")),
        ),
    );
    item(vec![(HttpMethod::Get, with(op, &["400"]).build())])
}

pub fn items() -> Vec<(&'static str, PathItem)> {
    vec![
        ("/register/session/report", report()),
        ("/report/sales", sales_report()),
    ]
}
