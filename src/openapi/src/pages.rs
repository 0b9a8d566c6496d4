//! The HTML pages a person uses (no token): the OAuth sign-in and consent pages, their
//! stylesheet, the old client libraries' `/login`, and the connected-applications pages.

use utoipa::openapi::path::{HttpMethod, PathItem};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::Content;

use crate::common::{item, shared};
use crate::endpoints::{plain, public};
use crate::schemas;

/// A sign-in page's form: text fields.
fn form_fields(fields: &[&str]) -> Schema {
    let mut object = ObjectBuilder::new().schema_type(Type::Object);
    for field in fields {
        object = object.property(*field, schemas::string());
    }
    object.build().into()
}

/// The page shown while the database cannot be reached (`temporarily_unavailable`).
fn unavailable() -> Response {
    html("The database is unreachable: `temporarily_unavailable`, try again shortly.")
}

fn html(description: &str) -> Response {
    plain(description, "text/html", schemas::string())
}

/// The authorization pages a person signs in on, and their stylesheet.
pub(super) fn oauth_pages() -> Vec<(&'static str, PathItem)> {
    let redirect = || {
        ResponseBuilder::new()
            .description("Back to the application's redirect URI with a code or an error.")
            .build()
    };
    let authorize_get = public("authorize", "The sign-in page", "oauth")
        .response("200", html("The sign-in form."))
        .response("302", redirect())
        .response("400", html("A bad client or redirect URI (no redirect)."))
        .response("503", unavailable())
        .build();
    let authorize_post = public("authorizePost", "Sign in, then approve or deny", "oauth")
        .request_body(Some(
            RequestBodyBuilder::new()
                .content(
                    "application/x-www-form-urlencoded",
                    Content::new(Some(form_fields(&[
                        "response_type",
                        "client_id",
                        "redirect_uri",
                        "scope",
                        "state",
                        "code_challenge",
                        "code_challenge_method",
                        "csrf_token",
                        "email",
                        "password",
                        "decision",
                    ]))),
                )
                .build(),
        ))
        .response("200", html("The consent page, or the sign-in page again."))
        .response("302", redirect())
        .response("400", html("A bad request or CSRF token."))
        .response("401", html("A wrong email or password."))
        .response("429", html("Too many sign-in attempts."))
        .response(shared("413").0, shared("413").1)
        .response(shared("415").0, shared("415").1)
        .response("503", unavailable())
        .build();
    let legacy = |id: &str, summary: &str, first: &str| {
        public(id, summary, "oauth")
            .description(Some(format!(
                "For an application whose merchant turned `legacy_clients` on: {first}a redirect \
                 to `/oauth/authorize` with the same query. For any other, 404 (sign in at \
                 `/oauth/authorize`)."
            )))
            .deprecated(Some(utoipa::openapi::Deprecated::True))
            .response(
                "302",
                ResponseBuilder::new()
                    .description("To `/oauth/authorize` with the same query.")
                    .build(),
            )
            .response(shared("404").0, shared("404").1)
            .build()
    };
    let login = legacy(
        "legacyLogin",
        "Where old Shopwave client libraries send a person to sign in",
        "",
    );
    let logout = legacy(
        "legacyLogout",
        "Where old Shopwave client libraries send a person to sign out",
        "the browser's sign-in session cookie removed, then ",
    );
    let css = public("stylesheet", "The sign-in pages' stylesheet", "oauth")
        .response("200", plain("CSS.", "text/css", schemas::string()))
        .build();
    vec![
        (
            "/oauth/authorize",
            item(vec![
                (HttpMethod::Get, authorize_get),
                (HttpMethod::Post, authorize_post),
            ]),
        ),
        ("/oauth/style.css", item(vec![(HttpMethod::Get, css)])),
        ("/login", item(vec![(HttpMethod::Get, login)])),
        ("/logout", item(vec![(HttpMethod::Get, logout)])),
    ]
}

/// The connected-applications pages a merchant's employee signs in on (HTML, no token).
pub(super) fn account_pages() -> Vec<(&'static str, PathItem)> {
    let form = |fields: &[&str]| {
        RequestBodyBuilder::new()
            .content(
                "application/x-www-form-urlencoded",
                Content::new(Some(form_fields(fields))),
            )
            .build()
    };
    let back = || {
        ResponseBuilder::new()
            .description("See Other: back to `/account`.")
            .build()
    };
    // Every form is checked against its CSRF token; a body too large or not a form is refused
    // before the page sees it.
    let post = |id: &str, summary: &str, fields: &[&str]| {
        public(id, summary, "account")
            .request_body(Some(form(fields)))
            .response("303", back())
            .response("400", html("A CSRF token that does not match."))
            .response(shared("413").0, shared("413").1)
            .response(shared("415").0, shared("415").1)
            .response("503", unavailable())
    };
    let show = public(
        "account",
        "Connected applications, or the sign-in form",
        "account",
    )
    .response(
        "200",
        html("The signed-in employee's grants, or the sign-in form."),
    )
    .response("503", unavailable())
    .build();
    let sign_in = post(
        "accountSignIn",
        "Sign in to the connected-applications page",
        &["email", "password", "csrf_token"],
    )
    .response("401", html("A wrong email or password: the form again."))
    .response("429", html("Too many sign-in attempts."))
    .build();
    let revoke = post(
        "accountRevoke",
        "Revoke one connected application",
        &["family", "csrf_token"],
    )
    .response("401", html("No session: the sign-in form."))
    .response("404", html("No such grant the employee may revoke."))
    .build();
    let sign_out = post(
        "accountSignOut",
        "Sign out of the connected-applications page",
        &["csrf_token"],
    )
    .build();
    vec![
        (
            "/account",
            item(vec![(HttpMethod::Get, show), (HttpMethod::Post, sign_in)]),
        ),
        ("/account/revoke", item(vec![(HttpMethod::Post, revoke)])),
        (
            "/account/sign-out",
            item(vec![(HttpMethod::Post, sign_out)]),
        ),
    ]
}
