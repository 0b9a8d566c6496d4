//! The connected-applications pages, in the frame of the authorization pages (their CSP,
//! headers and stylesheet). Every value shown is escaped.

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use chrono::{DateTime, SecondsFormat, Utc};

use crate::http::oauth::pages::{document, esc, page};
use domain::oauth::token::ConnectedGrant;

fn csrf_input(csrf: &str) -> String {
    format!(
        "<input type=\"hidden\" name=\"csrf_token\" value=\"{}\">",
        esc(csrf)
    )
}

/// The sign-in form of `/account`.
pub fn sign_in(status: StatusCode, csrf: &str, error: Option<&str>, email: &str) -> HttpResponse {
    let error = error
        .map(|e| format!("<p class=\"error\" role=\"alert\">{}</p>", esc(e)))
        .unwrap_or_default();
    let body = format!(
        "<h1>Connected applications</h1><p>Sign in to see the applications that act for you, \
         and to revoke their access.</p>{error}\
         <form method=\"post\" action=\"/account\">{csrf}\
         <label for=\"email\">Email</label>\
         <input id=\"email\" type=\"email\" name=\"email\" value=\"{email}\" autocomplete=\"username\" required>\
         <label for=\"password\">Password</label>\
         <input id=\"password\" type=\"password\" name=\"password\" autocomplete=\"current-password\" required>\
         <button type=\"submit\">Sign in</button></form>",
        csrf = csrf_input(csrf),
        email = esc(email),
    );
    page(status, None).body(document("Connected applications", &body))
}

pub struct Listing<'a> {
    pub email: &'a str,
    pub merchant_name: &'a str,
    /// The signed-in employee's own grants.
    pub own: Vec<ConnectedGrant>,
    /// Other employees' grants: shown to owners only (`None` for everyone else).
    pub others: Option<Vec<ConnectedGrant>>,
    pub csrf: &'a str,
    pub notice: Option<&'a str>,
}

/// The signed-in page: the grants, each with a revoke button, and sign-out.
pub fn listing(p: Listing<'_>) -> HttpResponse {
    let notice = p
        .notice
        .map(|n| format!("<p class=\"note\" role=\"status\">{}</p>", esc(n)))
        .unwrap_or_default();
    let own = grant_list(&p.own, p.csrf, false, "No application acts for you.");
    let others = p
        .others
        .as_deref()
        .map(|others| {
            format!(
                "<h2>Other employees' applications</h2>{}",
                grant_list(
                    others,
                    p.csrf,
                    true,
                    "No application acts for another employee."
                )
            )
        })
        .unwrap_or_default();
    let body = format!(
        "<h1>Connected applications</h1>\
         <p>Signed in as <strong>{email}</strong> of <strong>{merchant}</strong>.</p>{notice}\
         <h2>Your applications</h2>{own}{others}\
         <form method=\"post\" action=\"/account/sign-out\">{csrf}\
         <button type=\"submit\">Sign out</button></form>",
        email = esc(p.email),
        merchant = esc(p.merchant_name),
        csrf = csrf_input(p.csrf),
    );
    page(StatusCode::OK, None).body(document("Connected applications", &body))
}

fn grant_list(grants: &[ConnectedGrant], csrf: &str, show_employee: bool, empty: &str) -> String {
    if grants.is_empty() {
        return format!("<p class=\"note\">{}</p>", esc(empty));
    }
    let items: String = grants
        .iter()
        .map(|g| grant_item(g, csrf, show_employee))
        .collect();
    format!("<ul class=\"grants\">{items}</ul>")
}

fn grant_item(g: &ConnectedGrant, csrf: &str, show_employee: bool) -> String {
    let app = esc(&g.application_name);
    let employee = if show_employee {
        let who = match &g.employee_name {
            Some(name) => format!("{} ({})", esc(name), esc(&g.employee_email)),
            None => esc(&g.employee_email),
        };
        format!("<dt>For</dt><dd>{who}</dd>")
    } else {
        String::new()
    };
    let scopes: Vec<String> = g
        .scope
        .split_whitespace()
        .map(|s| format!("<code>{}</code>", esc(s)))
        .collect();
    let last_used = g.last_used_at.map_or_else(|| "never".to_owned(), time);
    format!(
        "<li class=\"grant\"><strong class=\"application\">{app}</strong><dl>{employee}\
         <dt>Scopes</dt><dd class=\"scopes\">{scopes}</dd>\
         <dt>Authorized</dt><dd class=\"authorized\">{authorized}</dd>\
         <dt>Last used</dt><dd class=\"last-used\">{last_used}</dd></dl>\
         <form method=\"post\" action=\"/account/revoke\">{csrf}\
         <input type=\"hidden\" name=\"family\" value=\"{family}\">\
         <button type=\"submit\" aria-label=\"Revoke the access of {app}\">Revoke access</button>\
         </form></li>",
        scopes = scopes.join(" "),
        authorized = time(g.authorized_at),
        csrf = csrf_input(csrf),
        family = esc(&g.family_id),
    )
}

/// A time to the minute, in UTC, with the exact instant in `datetime`.
fn time(millis: i64) -> String {
    match DateTime::<Utc>::from_timestamp_millis(millis) {
        Some(t) => format!(
            "<time datetime=\"{}\">{}</time>",
            t.to_rfc3339_opts(SecondsFormat::Secs, true),
            t.format("%Y-%m-%d %H:%M UTC")
        ),
        None => "unknown".to_owned(),
    }
}

/// The answer to a revocation naming no grant the employee may manage: the same whether the
/// id is unknown, another merchant's, another employee's or already revoked.
pub fn not_found() -> HttpResponse {
    let body = "<h1>Not found</h1><p class=\"error\">There is no such connected application \
                to revoke. It may have been revoked already.</p>\
                <p><a href=\"/account\">Back to your connected applications</a></p>";
    page(StatusCode::NOT_FOUND, None).body(document("Not found", body))
}

/// The answer to a form post whose CSRF token does not match its cookie.
pub fn forged() -> HttpResponse {
    let body = "<h1>Request refused</h1><p class=\"error\">The form's CSRF token does not \
                match. Open the page again and retry.</p>\
                <p><a href=\"/account\">Connected applications</a></p>";
    page(StatusCode::BAD_REQUEST, None).body(document("Request refused", body))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant() -> ConnectedGrant {
        ConnectedGrant {
            family_id: "f\"1".into(),
            application_id: 7,
            application_name: "<script>POS</script>".into(),
            employee_id: 3,
            employee_email: "a&b@example.test".into(),
            employee_name: None,
            scope: "read write".into(),
            authorized_at: 1_774_706_280_000,
            last_used_at: None,
        }
    }

    #[test]
    fn a_grant_escapes_what_it_shows_and_says_never_before_a_use() {
        let html = grant_item(&grant(), "c", true);
        assert!(html.contains("&lt;script&gt;POS&lt;/script&gt;"), "{html}");
        assert!(html.contains("value=\"f&quot;1\""), "{html}");
        assert!(html.contains("a&amp;b@example.test"), "{html}");
        assert!(
            html.contains("<code>read</code> <code>write</code>"),
            "{html}"
        );
        assert!(html.contains(">never<"), "{html}");
        assert!(html.contains("2026-03-28 13:58 UTC"), "{html}");
    }
}
