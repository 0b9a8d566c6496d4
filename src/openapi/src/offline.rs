//! `POST /basket/sync` and the warnings an offline sale is recorded with (docs/offline.md).

use actix_web::http::Method;
use utoipa::openapi::path::{HttpMethod, PathItem};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::{Content, RefOr, Required};

use crate::common::{api_operation, header_param, ids_param, ids_param_within, item, ok, with};
use crate::endpoints::envelope_with;
use crate::schemas::{self, keyed, named};

/// A closed object of `fields`, `required` those a client must send.
fn object(description: &str, fields: Vec<(&str, RefOr<Schema>)>, required: &[&str]) -> Schema {
    let optional: Vec<&str> = fields
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !required.contains(name))
        .collect();
    schemas::fields_object(description, fields, &optional)
}

pub fn schemas() -> Vec<(&'static str, Schema)> {
    let int = || RefOr::T(schemas::integer());
    let text = || RefOr::T(schemas::string());
    let warning = object(
        "Something that changed while the till was offline, recorded with the sale instead of \
         refusing it: `priceChanged`, `productDeleted`, `promotionNotApplied`, \
         `stockShortfall`, `sessionClosed`, `underpaid`; `key` is the line's client key.",
        vec![("code", text()), ("key", text()), ("detail", text())],
        &["code", "detail"],
    );
    let warnings = ArrayBuilder::new()
        .items(named("SyncWarning"))
        .description(Some(
            "The warnings an offline sale was recorded with.".to_owned(),
        ))
        .build()
        .into();
    let line = object(
        "A line as the till sold it; `price` (minor units) is the unit price it charged, the \
         instance's price when left out.",
        vec![
            ("productId", int()),
            ("productInstanceId", int()),
            ("quantity", int()),
            ("price", RefOr::T(schemas::money_write())),
            ("note", text()),
        ],
        &["productId", "quantity"],
    );
    let payment = object(
        "A payment the till took, in minor units.",
        vec![
            (
                "type",
                RefOr::T(schemas::choice(&domain::sales::payment::PAYMENT_TYPES)),
            ),
            ("amount", int()),
            ("tip", int()),
        ],
        &["type", "amount"],
    );
    let sale =
        object(
            "A completed sale a till made offline: its UUID (`clientId`, unique per merchant) and \
         time of sale (`occurredAt`), where and by whom, its lines and payments.",
            vec![
            ("clientId", RefOr::T(schemas::pattern(
                "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
            ))),
            ("occurredAt", RefOr::T(schemas::date(false))),
            ("storeId", int()),
            ("registerId", int()),
            ("sessionId", int()),
            ("employeeId", int()),
            ("customerId", int()),
            ("note", text()),
            ("promotionIds", RefOr::T(schemas::integers())),
            ("basketProducts", RefOr::T(keyed(named("OfflineLine")))),
            ("payments", RefOr::T(keyed(named("OfflinePayment")))),
        ],
            &["clientId", "occurredAt", "storeId", "basketProducts"],
        );
    let body = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("sales", keyed(named("OfflineSale")))
        .required("sales")
        .build()
        .into();
    let mut all = ledger_schemas();
    all.extend([
        ("SyncWarning", warning),
        ("SyncWarnings", warnings),
        ("OfflineLine", line),
        ("OfflinePayment", payment),
        ("OfflineSale", sale),
        ("SyncBody", body),
    ]);
    all
}

/// `GET /digest`'s and `GET /stock/movement`'s answers.
fn ledger_schemas() -> Vec<(&'static str, Schema)> {
    let int = || RefOr::T(schemas::integer());
    let text = || RefOr::T(schemas::string());
    let bucket = object(
        "How many records a bucket holds, and Σ of their hashes (16 hexadecimal digits).",
        vec![
            ("count", int()),
            ("hash", RefOr::T(schemas::pattern("^[0-9a-f]{16}$"))),
        ],
        &["count", "hash"],
    );
    let digest = object(
        "A resource's digest: its buckets of ids and the total.",
        vec![
            ("resource", text()),
            ("bucketSize", int()),
            ("buckets", RefOr::T(keyed(named("DigestBucket")))),
            ("total", named("DigestBucket")),
        ],
        &["resource", "bucketSize", "buckets", "total"],
    );
    let movement = object(
        "One movement: when it happened and arrived, why (`sale`, `return`, `receipt`, \
         `count`, `opening`), the basket, invoice or count that made it, and the units it \
         changes the level by.",
        vec![
            ("occurredAt", RefOr::T(schemas::date(true))),
            ("arrivedAt", RefOr::T(schemas::date(true))),
            ("reason", text()),
            ("sourceId", int()),
            ("quantity", int()),
        ],
        &["occurredAt", "arrivedAt", "reason", "sourceId", "quantity"],
    );
    let ledger = object(
        "A product's stock at a store over the range asked.",
        vec![
            ("levelFrom", int()),
            ("levelTo", int()),
            (
                "movements",
                RefOr::T(
                    ArrayBuilder::new()
                        .items(named("StockMovement"))
                        .build()
                        .into(),
                ),
            ),
        ],
        &["levelFrom", "levelTo", "movements"],
    );
    vec![
        ("StockMovement", movement),
        ("StockLedger", ledger),
        ("DigestBucket", bucket),
        ("Digest", digest),
    ]
}

fn sync() -> PathItem {
    let op = api_operation(
        &Method::POST,
        "/basket/sync",
        "syncBaskets",
        "Record sales a till made offline",
    )
    .description(Some(
        "Each sale is recorded once per `clientId`: sent again with the same body it answers \
         the basket it made (nothing new is written), with another body it is refused (422). \
         A sale is completed at its `occurredAt`, at the till's prices, with its payments, in \
         its till session (closed or not). It is never refused for what changed while the till \
         was offline; each such change is a warning in the basket's `syncWarnings`, and stock \
         may go negative (a `stock.shortfall` event). Another merchant's ids and a session of \
         another register are refused. `Idempotency-Key` is not taken: `clientId` is the \
         idempotency."
            .to_owned(),
    ))
    .request_body(Some(
        RequestBodyBuilder::new()
            .required(Some(Required::True))
            .content("application/json", Content::new(Some(named("SyncBody"))))
            .build(),
    ))
    .response(
        "201",
        ok(
            "The basket each sale made (or made before), keyed by the sale's client key.",
            envelope_with("baskets", keyed(named("Basket"))),
        ),
    );
    item(vec![(
        HttpMethod::Post,
        with(op, &["400", "413", "415", "422"]).build(),
    )])
}

fn digest() -> PathItem {
    use domain::offline::digest::{BUCKET_SIZES, RESOURCES};
    let sizes = ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(BUCKET_SIZES.iter().map(|n| n.to_string())))
        .build();
    let op = api_operation(
        &Method::GET,
        "/digest",
        "digest",
        "Reconciliation digest of one resource",
    )
    .description(Some(
        "Per bucket of ids (`[first, first + bucketSize)`) holding records of the resource: \
         how many, and the sum of each record's hash of (resource, id, last change sequence), \
         as 16 hexadecimal digits. Compute the same over a local copy built from the change \
         events (docs/digest.md has the exact definition and a Python reference), compare, and \
         read again only the buckets that differ. A record enters at its first change after \
         the feature landed."
            .to_owned(),
    ))
    .parameter(header_param(
        "resource",
        schemas::choice(RESOURCES),
        true,
        "The resource, by its change events' object name (`basket`, `product`, …).",
    ))
    .parameter(header_param(
        "bucketSize",
        sizes,
        false,
        "Ids per bucket (default 10000).",
    ))
    .response(
        "200",
        ok(
            "The buckets holding records, keyed by their first id, and the total.",
            envelope_with("digest", named("Digest")),
        ),
    );
    item(vec![(HttpMethod::Get, with(op, &["400"]).build())])
}

fn ledger() -> PathItem {
    let when = |name: &str, what: &str| {
        header_param(
            name,
            schemas::pattern("^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$"),
            false,
            what,
        )
    };
    let op = api_operation(
        &Method::GET,
        "/stock/movement",
        "stockMovements",
        "The stock ledger of some products",
    )
    .description(Some(
        "Every movement of the products' stock (a sale, a return, goods received, a stock \
         count, or the `opening` level the ledger began with), in the order they happened \
         (`occurredAt`: a sale's time of sale), with when each arrived. Per store and product: \
         the level at `movementFrom` (`levelFrom`), the movements until `movementTo`, and the \
         level then (`levelTo`). Ask `movementTo` alone for the level at a past time."
            .to_owned(),
    ))
    .parameter(ids_param_within(
        "productIds",
        true,
        api::http::stock::ledger::MAX_PRODUCTS,
    ))
    .parameter(ids_param("storeIds", false))
    .parameter(when(
        "movementFrom",
        "From this time (UTC, inclusive); the ledger's start when left out.",
    ))
    .parameter(when(
        "movementTo",
        "Until this time (UTC, exclusive); now when left out.",
    ))
    .response(
        "200",
        ok(
            "Per store id, per product id: levels and movements.",
            envelope_with("stockMovements", keyed(keyed(named("StockLedger")))),
        ),
    );
    item(vec![(HttpMethod::Get, with(op, &["400"]).build())])
}

pub fn items() -> Vec<(&'static str, PathItem)> {
    vec![
        ("/basket/sync", sync()),
        ("/digest", digest()),
        ("/stock/movement", ledger()),
    ]
}
