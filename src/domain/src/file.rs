//! Uploaded files, content-addressed by SHA-256.

/// A file to store. `file_name` is `<sha256>.<ext>`.
#[derive(Clone, Debug)]
pub struct NewFile<'a> {
    pub sha256: &'a str,
    pub file_name: &'a str,
    pub content_type: &'a str,
    pub data: &'a [u8],
    pub merchant_id: i64,
    /// The use the uploader named (`contentType` header), if any.
    pub purpose: Option<&'a str>,
}

/// A stored file as served.
#[derive(Clone, Debug)]
pub struct StoredFile {
    pub content_type: String,
    pub data: Vec<u8>,
}
