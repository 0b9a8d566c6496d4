//! The server-rendered pages of `/oauth/authorize` (and the frame `/account` shares): no
//! JavaScript, a strict CSP, no framing.

use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, HttpResponseBuilder};

pub const CSRF_COOKIE: &str = "mcd_csrf";
pub const SESSION_COOKIE: &str = "mcd_session";
pub const SESSION_MAX_AGE_SECS: i64 = 600;

const BASE_CSP: &str =
    "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

pub const STYLESHEET: &str =
    "body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;\
padding:0 1rem;color:#222}h1{font-size:1.4rem}label{display:block;margin:.8rem 0 .2rem}\
input[type=email],input[type=password]{width:100%;padding:.5rem;box-sizing:border-box}\
button{margin:1rem .5rem 0 0;padding:.5rem 1.2rem}.error{color:#a00}.note{color:#555}\
ul{padding-left:1.2rem}ul.grants{list-style:none;padding:0}\
.grants li{border-top:1px solid #ddd;padding:.6rem 0}dl{margin:.4rem 0}\
dt{float:left;clear:left;width:7rem;color:#555}dd{margin-left:7rem}";

/// Escapes text for HTML element content and double-quoted attributes.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

pub fn document(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><link rel=\"stylesheet\" href=\"/oauth/style.css\"></head>\
         <body>{body}</body></html>",
        esc(title)
    )
}

/// Headers every page carries. `form_action_extra` widens `form-action` to the redirect origin
/// on the consent page, because browsers apply it to the redirect that follows the post.
pub fn page(status: StatusCode, form_action_extra: Option<&str>) -> HttpResponseBuilder {
    let csp = match form_action_extra {
        Some(origin) => BASE_CSP.replace(
            "form-action 'self'",
            &format!("form-action 'self' {origin}"),
        ),
        None => BASE_CSP.to_owned(),
    };
    let mut builder = HttpResponse::build(status);
    builder
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .insert_header((header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")))
        .insert_header((
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
        .insert_header((
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .insert_header(("content-security-policy", csp));
    builder
}

/// A cookie of the authorization pages: sent to `/oauth` only. Lax, because the consent page
/// is reached by a top-level navigation from the application's site.
pub fn cookie(
    name: &'static str,
    value: String,
    secure: bool,
    max_age: Option<i64>,
) -> Cookie<'static> {
    scoped_cookie(name, value, "/oauth", SameSite::Lax, secure, max_age)
}

/// An HttpOnly cookie sent to `path` only; `max_age` `None` for a browser-session cookie,
/// `Some(0)` to remove it.
pub fn scoped_cookie(
    name: &'static str,
    value: String,
    path: &'static str,
    same_site: SameSite,
    secure: bool,
    max_age: Option<i64>,
) -> Cookie<'static> {
    let mut c = Cookie::build(name, value)
        .path(path)
        .http_only(true)
        .secure(secure)
        .same_site(same_site)
        .finish();
    if let Some(secs) = max_age {
        c.set_max_age(actix_web::cookie::time::Duration::seconds(secs));
    }
    c
}

/// An error page for the cases where redirecting would be unsafe (unknown client, redirect URI
/// mismatch, a forged form).
pub fn error_page(status: StatusCode, error: &str, description: &str) -> HttpResponse {
    let body = format!(
        "<h1>Authorization failed</h1><p class=\"error\"><code>{}</code></p><p>{}</p>",
        esc(error),
        esc(description)
    );
    page(status, None).body(document("Authorization failed", &body))
}

/// The page for a store that cannot be reached.
pub fn unavailable() -> HttpResponse {
    error_page(
        StatusCode::SERVICE_UNAVAILABLE,
        "temporarily_unavailable",
        "Try again shortly.",
    )
}

fn hidden_inputs(fields: &[(String, String)], csrf: &str) -> String {
    let mut out: String = fields
        .iter()
        .map(|(k, v)| {
            format!(
                "<input type=\"hidden\" name=\"{}\" value=\"{}\">",
                esc(k),
                esc(v)
            )
        })
        .collect();
    out.push_str(&format!(
        "<input type=\"hidden\" name=\"csrf_token\" value=\"{}\">",
        esc(csrf)
    ));
    out
}

pub struct SignIn<'a> {
    pub app_name: &'a str,
    pub fields: &'a [(String, String)],
    pub csrf: &'a str,
    pub error: Option<&'a str>,
    pub email: &'a str,
}

/// The sign-in page with its body.
pub fn sign_in(status: StatusCode, p: SignIn<'_>) -> (HttpResponseBuilder, String) {
    let error = p
        .error
        .map(|e| format!("<p class=\"error\" role=\"alert\">{}</p>", esc(e)))
        .unwrap_or_default();
    let body = format!(
        "<h1>Sign in</h1><p><strong>{app}</strong> wants to act for your merchant account.</p>{error}\
         <form method=\"post\" action=\"/oauth/authorize\">{hidden}\
         <label for=\"email\">Email</label>\
         <input id=\"email\" type=\"email\" name=\"email\" value=\"{email}\" autocomplete=\"username\" required>\
         <label for=\"password\">Password</label>\
         <input id=\"password\" type=\"password\" name=\"password\" autocomplete=\"current-password\" required>\
         <button type=\"submit\">Sign in</button></form>",
        app = esc(p.app_name),
        hidden = hidden_inputs(p.fields, p.csrf),
        email = esc(p.email),
    );
    (page(status, None), document("Sign in", &body))
}

pub struct Consent<'a> {
    pub app_name: &'a str,
    pub merchant_name: &'a str,
    pub email: &'a str,
    pub granted: &'a [&'a str],
    /// The scope asked for, when the role narrowed it.
    pub narrowed_from: Option<&'a str>,
    pub fields: &'a [(String, String)],
    pub csrf: &'a str,
    pub redirect_origin: &'a str,
}

pub fn consent(p: Consent<'_>) -> (HttpResponseBuilder, String) {
    let scopes: String = p
        .granted
        .iter()
        .map(|s| format!("<li><code>{}</code> — {}</li>", esc(s), describe(s)))
        .collect();
    let narrowed = p
        .narrowed_from
        .map(|asked| {
            format!(
                "<p class=\"note\">It asked for <code>{}</code>; your role allows only what is listed.</p>",
                esc(asked)
            )
        })
        .unwrap_or_default();
    let body = format!(
        "<h1>Allow {app}?</h1><p>Signed in as <strong>{email}</strong> of <strong>{merchant}</strong>.</p>\
         <p><strong>{app}</strong> will be granted:</p><ul>{scopes}</ul>{narrowed}\
         <form method=\"post\" action=\"/oauth/authorize\">{hidden}\
         <button type=\"submit\" name=\"decision\" value=\"approve\">Approve</button>\
         <button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>",
        app = esc(p.app_name),
        email = esc(p.email),
        merchant = esc(p.merchant_name),
        hidden = hidden_inputs(p.fields, p.csrf),
    );
    (
        page(StatusCode::OK, Some(p.redirect_origin)),
        document("Allow access", &body),
    )
}

fn describe(scope: &str) -> &'static str {
    match scope {
        "read" => "read every resource of the merchant",
        "write" => "create and update resources",
        "admin" => "delete resources and manage applications",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn escaping_covers_attribute_breakers() {
        assert_eq!(esc("\"><script>&'"), "&quot;&gt;&lt;script&gt;&amp;&#39;");
    }
}
