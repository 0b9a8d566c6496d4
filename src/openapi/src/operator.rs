//! The operator API (docs/operator.md): its security scheme, its answers and its paths.

use utoipa::openapi::path::{HttpMethod, OperationBuilder, PathItem};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{RefOr, Required};

use crate::common::{ids_param, item, json_content, json_ok, shared, with};
use crate::schemas::{self, closed, fields_object, keyed, named};
use api::http::fleet::operator::MAX_CREATE;

/// The name of the operator's bearer scheme under `components.securitySchemes`.
pub const SCHEME: &str = "operator";

pub fn scheme() -> SecurityScheme {
    SecurityScheme::Http(
        HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .bearer_format("opaque")
            .description(Some(
                "An operator token (`mop_…`) from `merchantd operator token --name NAME`. It \
                 works on `/operator/...` only, and a merchant's token does not work there.",
            ))
            .build(),
    )
}

fn list(item: Schema) -> RefOr<Schema> {
    RefOr::T(
        ArrayBuilder::new()
            .items(utoipa::openapi::schema::ArrayItems::RefOrSchema(Box::new(
                item.into(),
            )))
            .build()
            .into(),
    )
}

pub fn schemas() -> Vec<(&'static str, Schema)> {
    let int = || RefOr::T(schemas::integer());
    let text = || RefOr::T(schemas::string());
    let ids = || RefOr::T(keyed(schemas::integer()));
    let counts = [
        "products",
        "sales",
        "fileBytes",
        "requests",
        "writes",
        "eventClients",
    ];
    let usage = fields_object(
        "What the merchant holds (live products, completed sales, uploaded bytes), and what it \
         did on the replica that answers since it started (requests, writes, event streams \
         open now).",
        counts.iter().map(|name| (*name, int())).collect(),
        &[],
    );
    let date = || RefOr::T(schemas::date(true));
    let merchant = fields_object(
        "A merchant of the operator's, with its usage.",
        vec![
            ("id", int()),
            ("key", text()),
            ("name", text()),
            ("createDate", date()),
            ("suspendDate", date()),
            ("deleteAfter", date()),
            ("usage", named("MerchantUsage")),
        ],
        &[],
    );
    let created = fields_object(
        "The new merchant's id, and its stores' (by key), users' (by email) and applications' \
         (by client id).",
        vec![
            ("id", int()),
            ("key", text()),
            ("stores", ids()),
            ("users", ids()),
            ("applications", ids()),
        ],
        &[],
    );
    let imported = fields_object(
        "The merchant an archive held, now stored here with every id it had, and how many \
         tables and rows it brought.",
        vec![
            ("id", int()),
            ("key", text()),
            ("tables", int()),
            ("rows", int()),
        ],
        &[],
    );
    vec![
        ("MerchantManifest", manifest()),
        ("ImportedMerchant", imported),
        ("MovedMerchant", moved()),
        ("MerchantUsage", usage),
        ("OperatorMerchant", merchant),
        ("CreatedMerchant", created),
    ]
}

/// A merchant's move between pods, as its answer shows it.
fn moved() -> Schema {
    let int = || RefOr::T(schemas::integer());
    let text = || RefOr::T(schemas::string());
    fields_object(
        "A merchant moved between pods: from and to which, the rows copied, how long its \
         writes waited (the hold) and how long the whole move took.",
        vec![
            ("id", int()),
            ("key", text()),
            ("from", text()),
            ("to", text()),
            ("rows", int()),
            ("heldMilliseconds", int()),
            ("milliseconds", int()),
        ],
        &[],
    )
}

/// A tenant manifest as JSON: the file's sections and fields.
fn manifest() -> Schema {
    let text = || RefOr::T(schemas::string());
    let merchant = fields_object(
        "",
        vec![
            ("key", text()),
            ("name", text()),
            ("legacy_clients", RefOr::T(schemas::boolean())),
        ],
        &["legacy_clients"],
    );
    let store = fields_object("", vec![("key", text()), ("name", text())], &[]);
    let user = fields_object(
        "",
        vec![
            ("email", text()),
            ("password", text()),
            ("password_hash", text()),
            ("role", text()),
            ("first_name", text()),
            ("last_name", text()),
        ],
        &["password", "password_hash", "first_name", "last_name"],
    );
    let application = fields_object(
        "",
        vec![
            ("name", text()),
            ("client_id", text()),
            ("client_secret", text()),
            ("redirect_uris", RefOr::T(schemas::strings())),
            ("description", text()),
        ],
        &["client_secret", "description"],
    );
    fields_object(
        "A tenant manifest (DESIGN §3) as JSON: the same sections and fields as the file.",
        vec![
            ("merchant", RefOr::T(merchant)),
            ("sales", RefOr::T(schemas::object())),
            ("stores", list(store)),
            ("users", list(user)),
            ("applications", list(application)),
        ],
        &["sales", "stores", "users", "applications"],
    )
}

fn operation(id: &str, summary: &str) -> OperationBuilder {
    let mut op = OperationBuilder::new()
        .operation_id(Some(id))
        .summary(Some(summary))
        .tag("operator")
        .security(SecurityRequirement::new(SCHEME, Vec::<String>::new()));
    for status in ["400", "401", "500", "503"] {
        let (code, response) = shared(status);
        op = op.response(code, response);
    }
    op
}

fn merchants() -> PathItem {
    let list = operation(
        "listOperatorMerchants",
        "Merchants and their usage (operator)",
    )
    .parameter(ids_param("merchantIds", false))
    .parameter(crate::common::header_param(
        "afterId",
        schemas::pattern("^[0-9]{1,19}$"),
        false,
        "Merchants whose id is greater: the previous page's `nextAfterId`.",
    ))
    .parameter(crate::common::count_param(
        "limit",
        (
            1,
            api::http::fleet::operator::DEFAULT_PAGE,
            api::http::fleet::operator::MAX_PAGE,
        ),
        "At most this many",
    ))
    .response(
        "200",
        json_ok(
            "A page of merchants (those `merchantIds` names, when sent), by id, and \
             `nextAfterId`: the `afterId` of the next page, or null when this one was the last.",
            schemas::envelope(vec![
                ("merchants", RefOr::T(keyed(named("OperatorMerchant")))),
                ("nextAfterId", RefOr::T(schemas::nullable_integer())),
            ]),
        ),
    );
    let request = closed()
        .property(
            "merchants",
            crate::common::limit(
                ObjectBuilder::new()
                    .schema_type(Type::Object)
                    .additional_properties(Some(named("MerchantManifest")))
                    .max_properties(Some(MAX_CREATE)),
                "objects",
                MAX_CREATE as i64,
            ),
        )
        .required("merchants")
        .build();
    let create = with(
        operation(
            "createMerchants",
            "Create merchants from manifests (operator)",
        )
        .request_body(Some(
            RequestBodyBuilder::new()
                .required(Some(Required::True))
                .content("application/json", json_content(Schema::Object(request)))
                .build(),
        ))
        .response(
            "201",
            json_ok(
                "The merchants created, under their client keys, and a message per object \
                     (one whose key is taken is refused with 113, an invalid one with 110).",
                schemas::envelope(vec![(
                    "merchants",
                    RefOr::T(keyed(named("CreatedMerchant"))),
                )]),
            ),
        ),
        &["413", "415", "422"],
    );
    item(vec![
        (HttpMethod::Get, list.build()),
        (HttpMethod::Post, create.build()),
    ])
}

fn suspension(id: &str, summary: &str, done: &str) -> PathItem {
    let op = with(
        operation(id, summary)
            .parameter(ids_param("merchantIds", true))
            .response(
                "200",
                json_ok(
                    &format!("A message per id: the merchant is {done}, or does not exist."),
                    named("Envelope"),
                ),
            ),
        &["404"],
    );
    item(vec![(HttpMethod::Post, op.build())])
}

/// The archive's format, as the export and import operations describe it.
const ARCHIVE: &str = "Newline-delimited JSON: a header line (`format`, `version`, `schema`, \
    `merchantId`, `key`, `exportDate`), then per table a line `{\"table\", \"columns\"}` followed \
    by one JSON array per row, then `{\"end\": {\"tables\", \"rows\"}}`. Sign-ins and tokens in \
    flight are left out: applications authorize again. See docs/operator.md.";

/// `merchantIds` naming exactly one merchant (an export, a move).
fn one_merchant() -> utoipa::openapi::path::Parameter {
    crate::common::header_param(
        "merchantIds",
        schemas::pattern("^ ?[0-9]{1,19} ?$"),
        true,
        "The merchant (exactly one id).",
    )
}

fn export() -> PathItem {
    let op = with(
        operation(
            "exportMerchant",
            "A merchant's archive: every row it has (operator)",
        )
        .description(Some(ARCHIVE))
        .parameter(one_merchant())
        .response(
            "200",
            crate::endpoints::plain(
                "The archive, read in one transaction and streamed.",
                "application/x-ndjson",
                schemas::string(),
            ),
        ),
        &["404"],
    );
    item(vec![(HttpMethod::Get, op.build())])
}

fn import() -> PathItem {
    let op = with(
        operation(
            "importMerchant",
            "Load a merchant's archive into this database (operator)",
        )
        .description(Some(format!(
            "{ARCHIVE} Whole or not at all; refused (113) when the merchant's id or key, one \
             of its unique keys, or one of its ids is taken here: import into an empty \
             database. In a fleet (`pods`), into the pod named by `pod`, else the pod whose id \
             range holds the merchant's id; its id and key must be free in every pod."
        )))
        .parameter(crate::common::header_param(
            "pod",
            schemas::string(),
            false,
            "The pod the merchant goes to (`home`, or one of `pods`).",
        ))
        .request_body(Some(
            RequestBodyBuilder::new()
                .required(Some(Required::True))
                .content(
                    "application/x-ndjson",
                    utoipa::openapi::content::Content::new(Some(schemas::string())),
                )
                .build(),
        ))
        .response(
            "201",
            json_ok(
                "The merchant imported, under its id.",
                schemas::envelope(vec![(
                    "merchants",
                    RefOr::T(keyed(named("ImportedMerchant"))),
                )]),
            ),
        ),
        &["413", "415", "422"],
    );
    item(vec![(HttpMethod::Post, op.build())])
}

fn move_between_pods() -> PathItem {
    let op = with(
        operation(
            "moveMerchant",
            "Move a merchant to another pod while every replica serves it (operator)",
        )
        .description(Some(
            "Its writes wait during the switch (they do not fail); the copy is verified table \
             by table before the old pod's rows are removed. Refused (113) for a pod that is \
             not configured or already holds it. See docs/operations.md, \"Pods\".",
        ))
        .parameter(one_merchant())
        .parameter(crate::common::header_param(
            "pod",
            schemas::string(),
            true,
            "The name of the pod the merchant moves to (`home`, or one of `pods`).",
        ))
        .response(
            "200",
            json_ok(
                "The merchant moved, with the move's figures.",
                schemas::envelope(vec![("merchants", RefOr::T(keyed(named("MovedMerchant"))))]),
            ),
        ),
        &["404", "422"],
    );
    item(vec![(HttpMethod::Post, op.build())])
}

pub fn items() -> Vec<(&'static str, PathItem)> {
    vec![
        ("/operator/merchant/move", move_between_pods()),
        ("/operator/merchant/export", export()),
        ("/operator/merchant/import", import()),
        ("/operator/merchant", merchants()),
        (
            "/operator/merchant/suspend",
            suspension(
                "suspendMerchants",
                "Suspend merchants: every token refused with 403 (109), data kept, webhooks \
                 paused (operator)",
                "suspended",
            ),
        ),
        (
            "/operator/merchant/resume",
            suspension(
                "resumeMerchants",
                "Resume suspended merchants, cancelling a deletion not yet carried out (operator)",
                "resumed",
            ),
        ),
        (
            "/operator/merchant/delete",
            suspension(
                "deleteMerchants",
                "Delete merchants: suspended now, every row removed after \
                 merchant_delete_grace_secs unless resumed before (operator)",
                "suspended and due for deletion",
            ),
        ),
    ]
}
