//! Serving HTTPS directly (`tls_cert`, `tls_key`): rustls with the ring provider, HTTP/2 and
//! HTTP/1.1 offered by ALPN. Most deployments terminate TLS in front (an Ingress); this is for
//! those that do not.

use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, Context};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The server configuration for a PEM certificate chain and a PEM private key (PKCS#8, PKCS#1
/// or SEC1).
pub fn server_config(cert: &Path, key: &Path) -> anyhow::Result<rustls::ServerConfig> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .with_context(|| format!("reading the certificate {}", cert.display()))?
        .collect::<Result<_, _>>()
        .with_context(|| format!("parsing the certificate {}", cert.display()))?;
    if chain.is_empty() {
        return Err(anyhow!("no certificate in {}", cert.display()));
    }
    // The key's file is named in errors, never its content.
    let private = PrivateKeyDer::from_pem_file(key)
        .with_context(|| format!("reading the private key {}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("choosing TLS versions")?
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .with_context(|| {
            format!(
                "the private key {} does not fit the certificate {}",
                key.display(),
                cert.display()
            )
        })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}
