//! The reference page at `/docs/`: Swagger UI's files, read once from the zip archive
//! `utoipa-swagger-ui-vendored` carries (so a server serves them offline), with an initializer
//! that opens this server's `/openapi.json`. Reading the archive here, rather than through
//! `utoipa-swagger-ui`, spares every build that crate's procedural macros and build script.

use std::collections::HashMap;
use std::io::Read;
use std::sync::LazyLock;

use actix_web::http::header;
use actix_web::{web, HttpResponse};

/// The initializer: the archive's own, pointed at this document.
const INITIALIZER: &str = r##"window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: "StandaloneLayout",
  });
};
"##;

/// The files of the archive's `dist/` folder by name.
static FILES: LazyLock<HashMap<String, Vec<u8>>> = LazyLock::new(|| {
    let mut files = unzip(utoipa_swagger_ui_vendored::SWAGGER_UI_VENDORED, "/dist/");
    files.insert(
        "swagger-initializer.js".into(),
        INITIALIZER.as_bytes().to_vec(),
    );
    files
});

/// The entries of a zip archive whose path holds `folder`, named by what follows it. An entry
/// stored or deflated is read; anything else in the archive (none is) is left out.
fn unzip(archive: &[u8], folder: &str) -> HashMap<String, Vec<u8>> {
    let u16_at = |at: usize| {
        archive
            .get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u32_at = |at: usize| {
        archive
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let mut files = HashMap::new();
    // The end of central directory record: the last `PK\x05\x06`.
    let Some(end) = (0..archive.len().saturating_sub(21))
        .rev()
        .find(|&at| u32_at(at) == Some(0x0605_4b50))
    else {
        return files;
    };
    let (Some(count), Some(mut at)) = (u16_at(end + 10), u32_at(end + 16)) else {
        return files;
    };
    for _ in 0..count {
        let at_entry = at as usize;
        let field = |offset: usize| u16_at(at_entry + offset).unwrap_or(0) as usize;
        if u32_at(at_entry) != Some(0x0201_4b50) {
            break;
        }
        let (method, size) = (field(10), u32_at(at_entry + 20).unwrap_or(0) as usize);
        let (name_len, extra_len, comment_len) = (field(28), field(30), field(32));
        let local = u32_at(at_entry + 42).unwrap_or(0) as usize;
        let name = archive
            .get(at_entry + 46..at_entry + 46 + name_len)
            .map(String::from_utf8_lossy)
            .unwrap_or_default()
            .into_owned();
        at += (46 + name_len + extra_len + comment_len) as u32;
        let Some(short) = name.split_once(folder).map(|(_, rest)| rest.to_owned()) else {
            continue;
        };
        let local_name = u16_at(local + 26).unwrap_or(0) as usize;
        let local_extra = u16_at(local + 28).unwrap_or(0) as usize;
        let start = local + 30 + local_name + local_extra;
        let Some(data) = archive.get(start..start + size) else {
            continue;
        };
        let content = match method {
            0 => Some(data.to_vec()),
            8 => {
                let mut out = Vec::new();
                flate2::read::DeflateDecoder::new(data)
                    .read_to_end(&mut out)
                    .ok()
                    .map(|_| out)
            }
            _ => None,
        };
        if let (false, Some(content)) = (short.is_empty() || short.ends_with('/'), content) {
            files.insert(short, content);
        }
    }
    files
}

fn media_type(name: &str) -> &'static str {
    match name.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("png") => "image/png",
        Some("json" | "map") => "application/json",
        _ => "application/octet-stream",
    }
}

/// `/docs/`: the page.
pub async fn page() -> HttpResponse {
    file_named("index.html")
}

/// `/docs/{file}`: its scripts, styles and images.
pub async fn file(name: web::Path<String>) -> HttpResponse {
    file_named(&name)
}

fn file_named(name: &str) -> HttpResponse {
    match FILES.get(name) {
        Some(content) => HttpResponse::Ok()
            .content_type(media_type(name))
            .insert_header((header::CACHE_CONTROL, "public, max-age=3600"))
            .body(content.clone()),
        None => HttpResponse::NotFound().finish(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_archive_holds_the_page_and_its_scripts() {
        for name in ["index.html", "swagger-ui-bundle.js", "swagger-ui.css"] {
            assert!(FILES.get(name).is_some_and(|f| !f.is_empty()), "{name}");
        }
        let page = String::from_utf8_lossy(&FILES["index.html"]);
        assert!(page.contains("swagger-initializer.js"), "{page}");
    }
}
