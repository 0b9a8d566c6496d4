//! The named schemas of the answers that are not record collections (who am I, logs,
//! uploads, the report, webhook deliveries, the token endpoint, the metadata, the status), and
//! of the OAuth endpoints' bodies, under `components.schemas`.

use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

use crate::schemas::{self, closed, named};

/// A closed object whose every field is required.
fn all_required(fields: Vec<(&str, Schema)>) -> Schema {
    let fields = fields
        .into_iter()
        .map(|(name, schema)| (name, utoipa::openapi::RefOr::T(schema)))
        .collect();
    schemas::fields_object("", fields, &[])
}

/// The schemas of the answers described in this file, under `components.schemas`.
pub fn all() -> Vec<(&'static str, Schema)> {
    let mut all = account_schemas();
    all.extend(report_schemas());
    all.extend(webhook_schemas());
    all.extend(oauth_schemas());
    all
}

/// Who the token acts for, logs and uploads.
fn account_schemas() -> Vec<(&'static str, Schema)> {
    use schemas::{date, integer, nullable_string, string};
    let store_roles = || schemas::read_schema(schemas::Kind::StoreRoles, false);
    vec![
        (
            "User",
            all_required(vec![
                ("id", integer()),
                ("firstName", nullable_string()),
                ("lastName", nullable_string()),
                ("email", string()),
                (
                    "employee",
                    all_required(vec![
                        ("merchantId", integer()),
                        ("roleId", integer()),
                        ("stores", store_roles()),
                    ]),
                ),
            ]),
        ),
        (
            "Merchant",
            all_required(vec![("id", integer()), ("name", string())]),
        ),
        (
            "Log",
            all_required(vec![
                ("id", string()),
                ("tags", string()),
                ("object", string()),
                ("identifier", string()),
                ("data", schemas::any()),
                ("addedDate", date(false)),
                ("completeDate", date(true)),
            ]),
        ),
        (
            "UploadedFile",
            all_required(vec![
                ("fileName", string()),
                ("path", string()),
                ("contentType", string()),
                ("size", integer()),
                ("sha256", schemas::pattern("^[0-9a-f]{64}$")),
            ]),
        ),
    ]
}

/// `GET /report/basket`.
fn report_schemas() -> Vec<(&'static str, Schema)> {
    use schemas::{integer, money};
    // Whole minor units as text, like `tipTotal`.
    let minor = || schemas::pattern("^-?[0-9]{1,18}$");
    let totals = all_required(vec![
        ("basketCount", integer()),
        ("itemCount", integer()),
        ("grossTotal", money()),
        ("taxTotal", money()),
        ("netTotal", money()),
        ("tipTotal", minor()),
        ("refundTotal", money()),
        ("linkedRefundTotal", money()),
        ("unlinkedRefundTotal", money()),
        ("payments", schemas::keyed(minor())),
        ("refundPayments", schemas::keyed(minor())),
        ("discountTotal", minor()),
        ("cashRoundingTotal", minor()),
        (
            "taxes",
            schemas::keyed(all_required(vec![
                ("code", schemas::string()),
                ("rate", money()),
                ("included", schemas::boolean()),
                ("taxable", minor()),
                ("tax", minor()),
            ])),
        ),
        (
            "promotions",
            schemas::keyed(all_required(vec![
                ("basketCount", integer()),
                ("discount", minor()),
            ])),
        ),
    ]);
    vec![
        ("ReportTotals", totals),
        (
            "BasketReport",
            closed()
                .property("summary", named("ReportTotals"))
                .property("stores", schemas::keyed(named("ReportTotals")))
                .property(
                    "days",
                    schemas::keyed(schemas::keyed(named("ReportTotals"))),
                )
                .property(
                    "products",
                    schemas::keyed(all_required(vec![
                        ("quantity", integer()),
                        ("gross", money()),
                    ])),
                )
                .required("summary")
                .required("stores")
                .required("days")
                .required("products")
                .build()
                .into(),
        ),
    ]
}

/// `GET /webhook/delivery`.
fn webhook_schemas() -> Vec<(&'static str, Schema)> {
    use schemas::{date, integer, nullable_integer, nullable_string, string};
    vec![
        (
            "WebhookDeliveryAttempt",
            all_required(vec![
                ("attempt", integer()),
                ("attemptDate", date(true)),
                ("statusCode", nullable_integer()),
                ("durationMs", nullable_integer()),
                ("response", nullable_string()),
                ("error", nullable_string()),
            ]),
        ),
        (
            "WebhookDelivery",
            all_required(vec![
                ("webhookId", integer()),
                ("sequence", integer()),
                ("messageId", string()),
                ("eventType", string()),
                (
                    "status",
                    schemas::choice(&["pending", "succeeded", "failed"]),
                ),
                ("attemptCount", integer()),
                ("createDate", date(true)),
                ("nextAttemptDate", date(true)),
                ("completeDate", date(true)),
                (
                    "attempts",
                    schemas::array_of_named("WebhookDeliveryAttempt"),
                ),
            ]),
        ),
    ]
}

/// The token endpoint's answers, the metadata, and the status pages.
fn oauth_schemas() -> Vec<(&'static str, Schema)> {
    use schemas::{date, integer, string, strings};
    let endpoints = string;
    vec![
        ("TokenRequest", token_request()),
        ("TokenBody", token_body_schema()),
        (
            "TokenResponse",
            schemas::envelope(vec![
                ("access_token", string().into()),
                ("token_type", schemas::choice(&["Bearer"]).into()),
                ("expires_in", integer().into()),
                ("refresh_token", string().into()),
                ("scope", string().into()),
            ]),
        ),
        (
            "Introspection",
            schemas::envelope_with(
                vec![("active", schemas::boolean().into())],
                &[
                    ("scope", string().into()),
                    ("client_id", string().into()),
                    (
                        "token_type",
                        schemas::choice(&["Bearer", "refresh_token"]).into(),
                    ),
                    ("exp", integer().into()),
                    ("iat", integer().into()),
                    ("sub", string().into()),
                    ("merchant_id", integer().into()),
                ],
            ),
        ),
        (
            "AuthorizationServerMetadata",
            schemas::envelope(vec![
                ("issuer", string().into()),
                ("authorization_endpoint", endpoints().into()),
                ("token_endpoint", endpoints().into()),
                ("revocation_endpoint", endpoints().into()),
                ("introspection_endpoint", endpoints().into()),
                ("response_types_supported", strings().into()),
                ("grant_types_supported", strings().into()),
                ("code_challenge_methods_supported", strings().into()),
                ("scopes_supported", strings().into()),
                ("token_endpoint_auth_methods_supported", strings().into()),
                (
                    "revocation_endpoint_auth_methods_supported",
                    strings().into(),
                ),
                (
                    "introspection_endpoint_auth_methods_supported",
                    strings().into(),
                ),
            ]),
        ),
        (
            "Status",
            schemas::envelope(vec![
                ("status", string().into()),
                ("serverTimestamp", date(false).into()),
            ]),
        ),
        (
            "Health",
            schemas::envelope(vec![("status", string().into())]),
        ),
    ]
}

fn token_request() -> Schema {
    let text = schemas::string;
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property(
            "grant_type",
            schemas::choice(&["authorization_code", "refresh_token"]),
        )
        .property("code", text())
        .property("redirect_uri", text())
        .property("code_verifier", text())
        .property("refresh_token", text())
        .property("scope", text())
        .property("client_id", text())
        .property("client_secret", text())
        .required("grant_type")
        .build()
        .into()
}

/// What revoke and introspect read: the token, and the client when not in `Authorization`.
fn token_body_schema() -> Schema {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("token", schemas::string())
        .property("token_type_hint", schemas::string())
        .property("client_id", schemas::string())
        .property("client_secret", schemas::string())
        .required("token")
        .build()
        .into()
}
