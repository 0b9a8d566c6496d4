//! `/uploader` and `GET /files/{fileName}` (api-reference.md Upload; examples §2.17, §3.8, §3.9).
//!
//! The multipart body is streamed: every chunk is counted before the parser sees it, and the
//! request is cut off with 413 as soon as the body passes `max_upload_bytes` (the same bound the
//! envelope layer applies to a declared `Content-Length`), so a chunked upload without a length
//! never makes the server hold more than the limit. The part in the field `file` is hashed
//! (SHA-256) as it arrives and its type is read from its first bytes, not from its name or its
//! declared type; anything but JPEG, PNG, GIF or WebP is a 415 as soon as that is known.
//! Files are content-addressed (`<sha256>.<ext>`), stored once in the database so every replica
//! serves them, and public: `GET /files/{fileName}` needs no token.

use actix_multipart::{Field, Multipart, MultipartError};
use actix_web::error::PayloadError;
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use futures_util::StreamExt;
use ring::digest;
use serde_json::json;

use crate::http::auth::Call;
use crate::http::envelope::{Messages, Reply};
use crate::http::error::ApiError;
use crate::http::messages::Message;
use crate::http::AppState;
use domain::crypto;
use domain::file::NewFile;
use domain::now_millis;

/// The uses a client may name in the `contentType` header.
const PURPOSES: [&str; 5] = [
    "product",
    "merchant",
    "user",
    "applicationLogo",
    "applicationImages",
];

/// Bytes needed to recognise every accepted type (WebP's "WEBP" ends at offset 12).
const SNIFF_LEN: usize = 12;

const NOT_AN_IMAGE: &str = "file: the content is not JPEG, PNG, GIF or WebP.";

/// API routes (behind the gate).
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/uploader")
            .route(web::post().to(upload))
            .route(web::put().to(upload)),
    );
}

/// The public `/files` scope: no token, as examples §0 says.
pub fn public_routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/files/{fileName}")
            .route(web::get().to(serve))
            .route(web::head().to(serve)),
    )
    // Deeper paths under /files are no file either (and need no token).
    .service(web::scope("/files").default_service(web::to(no_such_file)));
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ImageKind {
    Jpeg,
    Png,
    Gif,
    Webp,
}

impl ImageKind {
    const ALL: [ImageKind; 4] = [
        ImageKind::Jpeg,
        ImageKind::Png,
        ImageKind::Gif,
        ImageKind::Webp,
    ];

    /// The type of `bytes` from its signature; a prefix shorter than the signature is nothing.
    fn sniff(bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(ImageKind::Jpeg)
        } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(ImageKind::Png)
        } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            Some(ImageKind::Gif)
        } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
            Some(ImageKind::Webp)
        } else {
            None
        }
    }

    fn extension(self) -> &'static str {
        match self {
            ImageKind::Jpeg => "jpg",
            ImageKind::Png => "png",
            ImageKind::Gif => "gif",
            ImageKind::Webp => "webp",
        }
    }

    fn mime(self) -> &'static str {
        match self {
            ImageKind::Jpeg => "image/jpeg",
            ImageKind::Png => "image/png",
            ImageKind::Gif => "image/gif",
            ImageKind::Webp => "image/webp",
        }
    }

    fn from_extension(ext: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.extension() == ext)
    }
}

/// One received file.
struct Received {
    kind: ImageKind,
    data: Vec<u8>,
    sha256: String,
}

fn not_an_image() -> ApiError {
    ApiError::UnsupportedFileType {
        detail: NOT_AN_IMAGE.into(),
    }
}

fn too_large(limit: usize) -> ApiError {
    ApiError::PayloadTooLarge {
        detail: format!("The upload is over {limit} bytes; at most {limit} are allowed."),
    }
}

fn multipart_error(err: MultipartError, limit: usize) -> ApiError {
    match err {
        MultipartError::Payload(PayloadError::Overflow) => too_large(limit),
        MultipartError::ContentTypeMissing
        | MultipartError::ContentTypeParse
        | MultipartError::ContentTypeIncompatible => ApiError::UnsupportedMediaType {
            detail: "Content-Type: send multipart/form-data with the image in the field \"file\"."
                .into(),
        },
        MultipartError::BoundaryMissing => {
            ApiError::bad_header("Content-Type", "the multipart boundary is missing.")
        }
        MultipartError::Payload(e) => {
            ApiError::bad_body(format!("The upload could not be read: {e}."))
        }
        other => ApiError::bad_body(format!("The multipart body is not valid: {other}.")),
    }
}

/// The optional `contentType` header: what the file is for.
fn purpose(req: &HttpRequest) -> Result<Option<&'static str>, ApiError> {
    let Some(value) = req.headers().get("contentType") else {
        return Ok(None);
    };
    let text = value
        .to_str()
        .map_err(|_| ApiError::bad_header("contentType", "the value is not text."))?
        .trim();
    PURPOSES
        .into_iter()
        .find(|p| *p == text)
        .map(Some)
        .ok_or_else(|| {
            ApiError::bad_header(
                "contentType",
                format!("\"{text}\" is not one of {}.", PURPOSES.join(", ")),
            )
        })
}

/// Reads the `file` part, hashing as it arrives and refusing it as soon as its first bytes are
/// not an accepted image.
async fn receive(field: &mut Field, limit: usize) -> Result<Received, ApiError> {
    let mut data = Vec::new();
    let mut hash = digest::Context::new(&digest::SHA256);
    let mut kind = None;
    while let Some(chunk) = field.next().await {
        let chunk = chunk.map_err(|e| multipart_error(e, limit))?;
        hash.update(&chunk);
        data.extend_from_slice(&chunk);
        if kind.is_none() && data.len() >= SNIFF_LEN {
            kind = Some(ImageKind::sniff(&data).ok_or_else(not_an_image)?);
        }
    }
    let kind = match kind {
        Some(kind) => kind,
        None => ImageKind::sniff(&data).ok_or_else(not_an_image)?,
    };
    Ok(Received {
        kind,
        data,
        sha256: crypto::hex(hash.finish().as_ref()),
    })
}

/// The upload's one multipart field `file`.
async fn the_file(mut multipart: Multipart, limit: usize) -> Result<Received, ApiError> {
    let mut file = None;
    while let Some(field) = multipart.next().await {
        let mut field = field.map_err(|e| multipart_error(e, limit))?;
        if field.name() == Some("file") {
            if file.is_some() {
                return Err(ApiError::BadRequest {
                    message: "The request body is not valid.".into(),
                    details: vec!["file: send one file per request.".into()],
                    object_ref: Some("file".into()),
                });
            }
            file = Some(receive(&mut field, limit).await?);
        } else {
            // Other fields are read and dropped (they count against the limit).
            while let Some(chunk) = field.next().await {
                chunk.map_err(|e| multipart_error(e, limit))?;
            }
        }
    }
    file.ok_or_else(|| ApiError::BadRequest {
        message: "The request body is not valid.".into(),
        details: vec!["file: the multipart field is missing.".into()],
        object_ref: Some("file".into()),
    })
}

/// The shortest multipart boundary taken. RFC 2046 allows 1 to 70 characters, but the
/// multipart parser (actix-multipart 0.7) slices a line by the boundary's length and panics on
/// boundaries under four characters (the fuzzer's `whole_request` found `boundary=b`); no
/// client library makes one that short.
const MIN_BOUNDARY: usize = 4;

/// Refuses a multipart boundary the parser cannot read safely.
fn short_boundary(req: &HttpRequest) -> Result<(), ApiError> {
    let boundary = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<actix_web::mime::Mime>().ok())
        .and_then(|m| {
            m.get_param(actix_web::mime::BOUNDARY)
                .map(|b| b.as_str().len())
        });
    match boundary {
        Some(len) if len < MIN_BOUNDARY => Err(ApiError::bad_header(
            "Content-Type",
            format!("the multipart boundary must be {MIN_BOUNDARY} to 70 characters."),
        )),
        _ => Ok(()),
    }
}

/// POST or PUT `/uploader`: one image in the multipart field `file` → 201.
pub async fn upload(call: Call, payload: web::Payload) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let purpose = purpose(&req)?;
    let limit = state.settings.max_upload_bytes;
    let mut received_bytes = 0usize;
    let bounded = payload.map(move |chunk| {
        let chunk = chunk?;
        received_bytes = received_bytes.saturating_add(chunk.len());
        if received_bytes > limit {
            Err(PayloadError::Overflow)
        } else {
            Ok(chunk)
        }
    });
    short_boundary(&req)?;
    let file = the_file(Multipart::new(req.headers(), bounded), limit).await?;
    let file_name = format!("{}.{}", file.sha256, file.kind.extension());
    let quota = state.settings.quota_storage_bytes;
    let size = file.data.len();
    let stored = state
        .services
        .put_file_within(
            &NewFile {
                sha256: &file.sha256,
                file_name: &file_name,
                content_type: file.kind.mime(),
                data: &file.data,
                merchant_id: caller.merchant_id,
                purpose,
            },
            now_millis(),
            quota,
        )
        .await?;
    if let Err(held) = stored {
        return Err(ApiError::QuotaExceeded {
            detail: format!(
                "The merchant's files hold {held} bytes; this file ({size} bytes) would take them \
                 past the quota of {quota} bytes. Nothing was stored."
            ),
        });
    }
    let mut messages = Messages::default();
    messages.add_with_ref(
        Message::Created,
        &file_name,
        format!("File stored ({size} bytes)."),
    );
    Ok(Reply::new(StatusCode::CREATED)
        .field(
            "file",
            json!({
                "fileName": file_name,
                "path": format!("{}/files/{file_name}", state.settings.public_base_url()),
                "contentType": file.kind.mime(),
                "size": size,
                "sha256": file.sha256,
            }),
        )
        .messages(messages))
}

/// A well-formed file name: 64 lowercase hex digits, a dot and an accepted extension.
fn well_formed(name: &str) -> bool {
    let Some((hash, ext)) = name.split_once('.') else {
        return false;
    };
    hash.len() == 64
        && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        && ImageKind::from_extension(ext).is_some()
}

fn not_found(name: &str) -> ApiError {
    let shown: String = name.chars().take(80).collect();
    ApiError::NotFound {
        detail: format!("No file {shown}."),
    }
}

async fn no_such_file(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotFound {
        detail: format!("No route {} {}.", req.method(), req.path()),
    })
}

/// `GET /files/{fileName}`: the stored bytes, cacheable for a year (the name is the content).
pub async fn serve(
    req: HttpRequest,
    name: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let name = name.into_inner();
    if !well_formed(&name) {
        return Err(not_found(&name));
    }
    let Some(file) = state.services.file(&name).await? else {
        return Err(not_found(&name));
    };
    let etag = format!("\"{}\"", &name[..64]);
    let unchanged = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut response = if unchanged {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    response
        .insert_header((
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=31536000, immutable"),
        ))
        .insert_header((header::ETAG, etag))
        .insert_header((
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ));
    if unchanged {
        return Ok(response.finish());
    }
    Ok(response.content_type(file.content_type).body(file.data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_come_from_the_signature_only() {
        assert_eq!(
            ImageKind::sniff(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
            Some(ImageKind::Png)
        );
        assert_eq!(
            ImageKind::sniff(&[0xFF, 0xD8, 0xFF, 0xE0]),
            Some(ImageKind::Jpeg)
        );
        assert_eq!(ImageKind::sniff(b"GIF89a\x01\0"), Some(ImageKind::Gif));
        assert_eq!(
            ImageKind::sniff(b"RIFF\x24\0\0\0WEBPVP8 "),
            Some(ImageKind::Webp)
        );
        for bad in [
            &b""[..],
            b"\x89PNG",
            b"RIFF\x24\0\0\0WAVE",
            b"RIFF",
            b"%PDF-1.7",
            b"just some text",
        ] {
            assert_eq!(ImageKind::sniff(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn only_content_addressed_names_are_looked_up() {
        let hash = "11118c79fb894bf3a1b20969ee702127cd6d454c59ea5dcae17f2f3fd418bc9e";
        assert!(well_formed(&format!("{hash}.png")));
        assert!(well_formed(&format!("{hash}.webp")));
        assert!(!well_formed(&format!("{hash}.exe")));
        assert!(!well_formed(&format!("{}.png", hash.to_uppercase())));
        assert!(!well_formed(&format!("{hash}png")));
        assert!(!well_formed("../etc/passwd"));
    }
}

#[cfg(test)]
mod props {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn sniffing_any_bytes_never_panics_and_signatures_decide(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let kind = ImageKind::sniff(&bytes);
            let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
            png.extend(&bytes);
            prop_assert_eq!(ImageKind::sniff(&png), Some(ImageKind::Png));
            if let Some(kind) = kind {
                prop_assert!(ImageKind::ALL.contains(&kind));
            }
        }
    }
}
