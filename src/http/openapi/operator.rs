//! The operator API (docs/operator.md): its security scheme, its answers and its paths.

use utoipa::openapi::path::{HttpMethod, OperationBuilder, PathItem};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{RefOr, Required};

use super::paths::{ids_param, item, json_content, json_ok, shared, with};
use super::schemas::{self, closed, keyed, named};

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

fn object(fields: Vec<(&str, RefOr<Schema>)>, required: &[&str]) -> ObjectBuilder {
    let mut o = closed();
    for (name, schema) in fields {
        o = o.property(name, schema);
        if required.contains(&name) {
            o = o.required(name);
        }
    }
    o
}

fn list(item: ObjectBuilder) -> RefOr<Schema> {
    RefOr::T(ArrayBuilder::new().items(item).build().into())
}

pub fn schemas() -> Vec<(&'static str, Schema)> {
    let int = || RefOr::T(schemas::integer());
    let text = || RefOr::T(schemas::string());
    let ids = || RefOr::T(keyed(schemas::integer()));
    let manifest = manifest();
    let usage = object(
        vec![
            ("products", int()),
            ("sales", int()),
            ("fileBytes", int()),
            ("requests", int()),
            ("writes", int()),
            ("eventClients", int()),
        ],
        &[
            "products",
            "sales",
            "fileBytes",
            "requests",
            "writes",
            "eventClients",
        ],
    )
    .description(Some(
        "What the merchant holds (live products, completed sales, uploaded bytes), and what it \
         did on the replica that answers since it started (requests, writes, event streams \
         open now).",
    ))
    .build()
    .into();
    let merchant = object(
        vec![
            ("id", int()),
            ("key", text()),
            ("name", text()),
            ("createDate", RefOr::T(schemas::date(true))),
            ("suspendDate", RefOr::T(schemas::date(true))),
            ("usage", named("MerchantUsage")),
        ],
        &["id", "key", "name", "createDate", "suspendDate", "usage"],
    )
    .build()
    .into();
    let created = object(
        vec![
            ("id", int()),
            ("key", text()),
            ("stores", ids()),
            ("users", ids()),
            ("applications", ids()),
        ],
        &["id", "key", "stores", "users", "applications"],
    )
    .description(Some(
        "The new merchant's id, and its stores' (by key), users' (by email) and applications' \
         (by client id).",
    ))
    .build()
    .into();
    vec![
        ("MerchantManifest", manifest),
        ("MerchantUsage", usage),
        ("OperatorMerchant", merchant),
        ("CreatedMerchant", created),
    ]
}

/// A tenant manifest as JSON: the file's sections and fields.
fn manifest() -> Schema {
    let text = || RefOr::T(schemas::string());
    object(
        vec![
            (
                "merchant",
                object(
                    vec![
                        ("key", text()),
                        ("name", text()),
                        ("legacy_clients", RefOr::T(schemas::boolean())),
                    ],
                    &["key", "name"],
                )
                .build()
                .into(),
            ),
            ("sales", RefOr::T(schemas::object())),
            (
                "stores",
                list(object(
                    vec![("key", text()), ("name", text())],
                    &["key", "name"],
                )),
            ),
            (
                "users",
                list(object(
                    vec![
                        ("email", text()),
                        ("password", text()),
                        ("password_hash", text()),
                        ("role", text()),
                        ("first_name", text()),
                        ("last_name", text()),
                    ],
                    &["email", "role"],
                )),
            ),
            (
                "applications",
                list(object(
                    vec![
                        ("name", text()),
                        ("client_id", text()),
                        ("client_secret", text()),
                        ("redirect_uris", RefOr::T(schemas::strings())),
                        ("description", text()),
                    ],
                    &["name", "client_id", "redirect_uris"],
                )),
            ),
        ],
        &["merchant"],
    )
    .description(Some(
        "A tenant manifest (DESIGN §3) as JSON: the same sections and fields as the file.",
    ))
    .build()
    .into()
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
    .response(
        "200",
        json_ok(
            "Every merchant, or those `merchantIds` names, by id.",
            schemas::envelope(vec![(
                "merchants",
                RefOr::T(keyed(named("OperatorMerchant"))),
            )]),
            None,
        ),
    );
    let request = closed()
        .property("merchants", keyed(named("MerchantManifest")))
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
                .content(
                    "application/json",
                    json_content(Schema::Object(request), None),
                )
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
                None,
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
                    None,
                ),
            ),
        &["404"],
    );
    item(vec![(HttpMethod::Post, op.build())])
}

pub fn items() -> Vec<(&'static str, PathItem)> {
    vec![
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
                "Resume suspended merchants (operator)",
                "resumed",
            ),
        ),
    ]
}
