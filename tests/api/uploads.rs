//! `/uploader` and `GET /files/{fileName}` (api-reference.md Upload; examples §2.17, §3.8, §3.9):
//! images recognised by their bytes, everything else 415, 413 over the limit without reading
//! the whole body, content-addressed storage served back byte for byte without a token.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::contract::Checked;
use crate::helpers::TestApp;
use crate::{backend_tests, backend_tests_with};

/// A 1×1 PNG (69 bytes), as Pillow writes it.
pub(crate) const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x38, 0xd0, 0xe0, 0x00,
    0x00, 0x03, 0x84, 0x01, 0x81, 0x58, 0xa3, 0x32, 0xcd, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A 1×1 grey baseline JPEG (159 bytes), as Pillow writes it.
pub const JPEG: &[u8] = &[
    0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01,
    0x00, 0x01, 0x00, 0x00, 0xff, 0xdb, 0x00, 0x43, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xc0, 0x00, 0x0b, 0x08, 0x00, 0x01,
    0x00, 0x01, 0x01, 0x01, 0x11, 0x00, 0xff, 0xc4, 0x00, 0x14, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xc4, 0x00, 0x14,
    0x10, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3f, 0x00, 0x3f, 0xff, 0xd9,
];

const BOUNDARY: &str = "mcd7MA4YWxkTrZu0gW";

/// A multipart body with one part per `(field, file name, declared type, bytes)`.
fn multipart(parts: &[(&str, &str, &str, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    for (field, file_name, content_type, bytes) in parts {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{field}\"; \
                 filename=\"{file_name}\"\r\nContent-Type: {content_type}\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

async fn upload_parts(
    app: &TestApp,
    method: Method,
    token: &str,
    parts: &[(&str, &str, &str, &[u8])],
) -> (StatusCode, Value) {
    let res = app
        .api(method, "/uploader", token)
        .header("contentType", "product")
        .header(
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .body(multipart(parts))
        .checked()
        .await
        .unwrap();
    let status = res.status();
    let text = res.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")),
    )
}

pub async fn upload(
    app: &TestApp,
    token: &str,
    name: &str,
    declared: &str,
    bytes: &[u8],
) -> (StatusCode, Value) {
    upload_parts(app, Method::POST, token, &[("file", name, declared, bytes)]).await
}

fn sha256_hex(bytes: &[u8]) -> String {
    merchantd::crypto::hex(ring::digest::digest(&ring::digest::SHA256, bytes).as_ref())
}

async fn stored_files(app: &TestApp) -> i64 {
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM files")
        .fetch_one(&app.sql)
        .await
        .unwrap();
    n
}

/// Checks a 415 for a file that is not an image, word for word as examples §3.9.
fn assert_not_an_image(status: StatusCode, body: &Value) {
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");
    assert_eq!(
        body["error"],
        json!({
            "code": 415, "message": "Unsupported file type.",
            "details": ["file: the content is not JPEG, PNG, GIF or WebP."]
        })
    );
    assert_eq!(
        body["api"]["message"]["error"]["106"],
        json!({
            "id": 106, "code": "unsupportedMediaType", "statusCode": 415, "title": "Unsupported media type",
            "details": "file: the content is not JPEG, PNG, GIF or WebP."
        })
    );
}

/// Reads one raw HTTP/1.1 answer (head and `Content-Length` body), raising `answered` as soon as
/// its first bytes arrive.
async fn read_answer(
    mut reader: tokio::net::tcp::OwnedReadHalf,
    answered: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> String {
    let mut answer = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = reader.read(&mut buf).await.unwrap_or(0);
        if n == 0 {
            break;
        }
        answered.store(true, std::sync::atomic::Ordering::SeqCst);
        answer.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&answer).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().to_owned())
                })
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
            if answer.len() >= end + 4 + length {
                break;
            }
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

backend_tests_with! {
    |s| s.public_base_url = Some("https://merchantd.example".into());
    async fn a_png_is_stored_by_its_hash_and_served_back_byte_for_byte(app) {
        let token = app.owner_token().await;
        let (status, body) = upload(&app, &token, "latte.png", "image/png", PNG).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let sha = sha256_hex(PNG);
        let name = format!("{sha}.png");
        assert_eq!(body["file"], json!({
            "fileName": name, "path": format!("https://merchantd.example/files/{name}"),
            "contentType": "image/png", "size": 69, "sha256": sha
        }));
        assert_eq!(body["api"]["message"]["success"]["200"], json!({
            "id": 200, "title": "Created", "details": "File stored (69 bytes).", "objectRef": name
        }));

        // Served without a token, with the long-lived cache header.
        let res = app.client.get(app.url(&format!("/files/{name}"))).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        let header = |n: &str| res.headers().get(n).map(|v| v.to_str().unwrap().to_owned());
        assert_eq!(header("content-type").as_deref(), Some("image/png"));
        assert_eq!(header("cache-control").as_deref(), Some("public, max-age=31536000, immutable"));
        assert_eq!(header("x-content-type-options").as_deref(), Some("nosniff"));
        let etag = header("etag").unwrap();
        assert_eq!(res.bytes().await.unwrap().as_ref(), PNG);

        let res = app.client.get(app.url(&format!("/files/{name}")))
            .header("if-none-match", etag).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::NOT_MODIFIED);
    }
}

backend_tests! {
    async fn a_jpeg_by_put_is_accepted_and_served_back(app) {
        let token = app.owner_token().await;
        // The declared type and name do not matter: the bytes do.
        let (status, body) = upload_parts(&app, Method::PUT, &token,
            &[("note", "n.txt", "text/plain", b"ignored"), ("file", "photo.bin", "application/octet-stream", JPEG)]).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let name = format!("{}.jpg", sha256_hex(JPEG));
        assert_eq!(body["file"]["fileName"], name.as_str());
        assert_eq!(body["file"]["contentType"], "image/jpeg");
        assert_eq!(body["file"]["size"], JPEG.len());
        assert!(body["file"]["path"].as_str().unwrap().ends_with(&format!("/files/{name}")));

        let res = app.client.get(app.url(&format!("/files/{name}"))).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(res.headers()["content-type"], "image/jpeg");
        assert_eq!(res.headers()["cache-control"], "public, max-age=31536000, immutable");
        assert_eq!(res.bytes().await.unwrap().as_ref(), JPEG);
    }

    async fn gif_and_webp_are_recognised_too(app) {
        let token = app.owner_token().await;
        let gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;";
        let webp = b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00";
        for (bytes, ext, mime) in [(&gif[..], "gif", "image/gif"), (&webp[..], "webp", "image/webp")] {
            let (status, body) = upload(&app, &token, "x", "application/octet-stream", bytes).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
            assert_eq!(body["file"]["contentType"], mime);
            let name = format!("{}.{ext}", sha256_hex(bytes));
            let res = app.client.get(app.url(&format!("/files/{name}"))).checked().await.unwrap();
            assert_eq!(res.headers()["content-type"], mime);
            assert_eq!(res.bytes().await.unwrap().as_ref(), bytes);
        }
    }

    async fn the_same_bytes_are_one_name_and_each_uploaders_own_row(app) {
        let demo = app.owner_token().await;
        let second = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let (_, first) = upload(&app, &demo, "a.png", "image/png", PNG).await;
        let (status, again) = upload(&app, &demo, "a.png", "image/png", PNG).await;
        assert_eq!(status, StatusCode::CREATED, "{again}");
        assert_eq!(first["file"], again["file"]);
        assert_eq!(stored_files(&app).await, 1, "the same merchant's bytes again add nothing");
        let (status, theirs) = upload(&app, &second, "b.png", "image/png", PNG).await;
        assert_eq!(status, StatusCode::CREATED, "{theirs}");
        assert_eq!(first["file"], theirs["file"]);
        let owners: Vec<(i64,)> = sqlx::query_as("SELECT merchant_id FROM files ORDER BY merchant_id")
            .fetch_all(&app.sql).await.unwrap();
        let mut expected = vec![(app.tenant("demo").id,), (app.tenant("second").id,)];
        expected.sort();
        assert_eq!(owners, expected, "each uploader's own row, so deleting one keeps the other's");
    }

    async fn anything_but_an_image_is_415_and_nothing_is_stored(app) {
        let token = app.owner_token().await;
        let pdf = b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n";
        let cases: [(&str, &str, &[u8]); 5] = [
            ("notes.txt", "text/plain", b"just some text"),
            ("x.png", "image/png", b"just some text"),
            ("empty.png", "image/png", b""),
            ("truncated.png", "image/png", &PNG[..4]),
            ("cover.png", "image/png", pdf),
        ];
        for (name, declared, bytes) in cases {
            let (status, body) = upload(&app, &token, name, declared, bytes).await;
            assert_not_an_image(status, &body);
        }
        // A large non-image is refused from its first bytes.
        let mut big = b"just some text ".repeat(40_000);
        big.truncate(500_000);
        let (status, body) = upload(&app, &token, "big.png", "image/png", &big).await;
        assert_not_an_image(status, &body);
        assert_eq!(stored_files(&app).await, 0);
    }

    async fn an_upload_needs_multipart_with_a_file_field_and_a_known_use(app) {
        let token = app.owner_token().await;
        let res = app.api(Method::POST, "/uploader", &token)
            .header("content-type", "application/json").body("{}").checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["api"]["message"]["error"]["106"]["code"], "unsupportedMediaType", "{body}");

        let (status, body) = upload_parts(&app, Method::POST, &token, &[("image", "a.png", "image/png", PNG)]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["error"]["details"], json!(["file: the multipart field is missing."]));

        let (status, body) = upload_parts(&app, Method::POST, &token,
            &[("file", "a.png", "image/png", PNG), ("file", "b.jpg", "image/jpeg", JPEG)]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

        let res = app.api(Method::POST, "/uploader", &token)
            .header("contentType", "wallpaper")
            .header("content-type", format!("multipart/form-data; boundary={BOUNDARY}"))
            .body(multipart(&[("file", "a.png", "image/png", PNG)])).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["api"]["message"]["error"]["101"]["objectRef"], "contentType", "{body}");
        assert_eq!(stored_files(&app).await, 0);

        // The fuzzer's find: a one-character boundary and a one-byte line panicked the parser.
        let res = app.api(Method::POST, "/uploader", &token)
            .header("content-type", "multipart/form-data; boundary=b")
            .body("\n\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\n\r\n\n\r\n--b--\r\n")
            .checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);
        let body: Value = res.json().await.unwrap();
        assert!(body.to_string().contains("the multipart boundary must be 4 to 70 characters"), "{body}");

        // Behind the gate: no token is a 401, a read-only token a 403.
        let res = app.client.post(app.url("/uploader")).header("x-accept-version", "2.0")
            .header("content-type", format!("multipart/form-data; boundary={BOUNDARY}"))
            .body(multipart(&[("file", "a.png", "image/png", PNG)])).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
        let reader = app.token_for("demo", "owner@demo.test", "read", 3600).await;
        let (status, _) = upload(&app, &reader, "a.png", "image/png", PNG).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert_eq!(stored_files(&app).await, 0);
    }

    async fn unknown_or_malformed_file_names_are_404_with_the_envelope(app) {
        let unknown = format!("{}.png", sha256_hex(b"never uploaded"));
        for path in [
            format!("/files/{unknown}"),
            format!("/files/{}", unknown.to_uppercase()),
            format!("/files/{}.exe", sha256_hex(b"x")),
            "/files/latte.png".to_owned(),
            "/files/a/b".to_owned(),
            "/files/".to_owned(),
        ] {
            let res = app.client.get(app.url(&path)).checked().await.unwrap();
            assert_eq!(res.status(), StatusCode::NOT_FOUND, "{path}");
            assert_eq!(res.headers()["x-api-version"], "2.0");
            let body: Value = res.json().await.unwrap();
            assert_eq!(body["error"]["code"], 404, "{path}: {body}");
            assert_eq!(body["api"]["message"]["error"]["104"]["code"], "notFound", "{path}: {body}");
        }
        // A stored file is public to every merchant and to no one in particular: its name is its
        // content's hash.
        let token = app.owner_token().await;
        let (_, body) = upload(&app, &token, "a.png", "image/png", PNG).await;
        let name = body["file"]["fileName"].as_str().unwrap().to_owned();
        let second = app.token_for("second", "owner@second.test", "read", 3600).await;
        let res = app.client.get(app.url(&format!("/files/{name}"))).bearer_auth(second).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        let res = app.client.post(app.url(&format!("/files/{name}"))).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::METHOD_NOT_ALLOWED);
    }
}

backend_tests_with! {
    |s| s.max_upload_bytes = 1024;
    async fn an_upload_over_the_limit_is_413_declared_or_streamed(app) {
        let token = app.owner_token().await;
        // Declared: refused from Content-Length alone.
        let mut big = PNG.to_vec();
        big.resize(4096, 0);
        let (status, body) = upload(&app, &token, "big.png", "image/png", &big).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
        assert_eq!(body["error"]["message"], "The request is too large.");
        assert_eq!(body["api"]["message"]["error"]["107"]["code"], "payloadTooLarge");

        // Just under the limit passes.
        let mut fits = PNG.to_vec();
        fits.resize(800, 0);
        let (status, body) = upload(&app, &token, "fits.png", "image/png", &fits).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");

        // Streamed without a length: the server answers 413 once the body passes the limit,
        // while the client is still sending its 32 MiB, so it cannot be holding them.
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", app.port)).await.unwrap();
        let (reader, mut writer) = stream.into_split();
        let answered = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let answer = tokio::spawn(read_answer(reader, answered.clone()));
        let head = format!(
            "POST /uploader HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\
             x-accept-version: 2.0\r\nContent-Type: multipart/form-data; boundary={BOUNDARY}\r\n\
             Transfer-Encoding: chunked\r\n\r\n"
        );
        writer.write_all(head.as_bytes()).await.unwrap();
        let part_head = format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"huge.png\"\r\n\
             Content-Type: image/png\r\n\r\n"
        );
        let first = [part_head.as_bytes(), PNG].concat();
        let total = 32 << 20;
        let mut sent = 0usize;
        let mut chunks = std::iter::once(first).chain(std::iter::repeat(vec![0u8; 16 * 1024]));
        while sent < total && !answered.load(std::sync::atomic::Ordering::SeqCst) {
            let chunk = chunks.next().unwrap();
            let framed = [format!("{:x}\r\n", chunk.len()).as_bytes(), &chunk, b"\r\n"].concat();
            let wrote = tokio::time::timeout(std::time::Duration::from_secs(5), writer.write_all(&framed)).await;
            if !matches!(wrote, Ok(Ok(()))) {
                break;
            }
            sent += chunk.len();
            tokio::task::yield_now().await;
        }
        let text = tokio::time::timeout(std::time::Duration::from_secs(30), answer)
            .await.expect("the server answers").unwrap();
        assert!(text.starts_with("HTTP/1.1 413"), "{text}");
        assert!(text.to_ascii_lowercase().contains("x-api-version: 2.0"), "{text}");
        assert!(text.contains("\"payloadTooLarge\""), "{text}");
        assert!(text.contains("\"codeBaseVersion\":\"2.0\""), "{text}");
        assert!(sent < total, "the server answered only after all {sent} bytes were sent");
        assert_eq!(stored_files(&app).await, 1, "only the upload that fit is stored");
    }
}
