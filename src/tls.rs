//! Serving HTTPS directly (`tls_cert`, `tls_key`): rustls with the ring provider, HTTP/2 and
//! HTTP/1.1 offered by ALPN. The certificate is read again on SIGHUP (renewals need no
//! restart); a renewal that does not load keeps the certificate in use. Most deployments
//! terminate TLS in front (an Ingress); this is for those that do not.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use anyhow::{anyhow, Context};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// The certificate in use, and where it is read from.
#[derive(Debug)]
pub struct Certificates {
    cert: PathBuf,
    key: PathBuf,
    provider: Arc<CryptoProvider>,
    current: RwLock<Arc<CertifiedKey>>,
}

impl Certificates {
    /// Reads a PEM certificate chain and a PEM private key (PKCS#8, PKCS#1 or SEC1).
    pub fn load(cert: &Path, key: &Path) -> anyhow::Result<Arc<Self>> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let current = read(cert, key, &provider)?;
        Ok(Arc::new(Self {
            cert: cert.to_owned(),
            key: key.to_owned(),
            provider,
            current: RwLock::new(Arc::new(current)),
        }))
    }

    /// Reads the files again; on an error the certificate in use stays.
    pub fn reload(&self) -> anyhow::Result<()> {
        let fresh = read(&self.cert, &self.key, &self.provider)?;
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(fresh);
        Ok(())
    }

    /// The server configuration serving these certificates.
    pub fn server_config(self: &Arc<Self>) -> anyhow::Result<rustls::ServerConfig> {
        let mut config = rustls::ServerConfig::builder_with_provider(self.provider.clone())
            .with_safe_default_protocol_versions()
            .context("choosing TLS versions")?
            .with_no_client_auth()
            .with_cert_resolver(self.clone());
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(config)
    }
}

impl ResolvesServerCert for Certificates {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(
            self.current
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        )
    }
}

/// The files as a certified key. Errors name the files, never the key's content.
fn read(cert: &Path, key: &Path, provider: &CryptoProvider) -> anyhow::Result<CertifiedKey> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .with_context(|| format!("reading the certificate {}", cert.display()))?
        .collect::<Result<_, _>>()
        .with_context(|| format!("parsing the certificate {}", cert.display()))?;
    if chain.is_empty() {
        return Err(anyhow!("no certificate in {}", cert.display()));
    }
    let private = PrivateKeyDer::from_pem_file(key)
        .with_context(|| format!("reading the private key {}", key.display()))?;
    CertifiedKey::from_der(chain, private, provider).with_context(|| {
        format!(
            "the private key {} does not fit the certificate {}",
            key.display(),
            cert.display()
        )
    })
}

/// Reads the certificate again on every SIGHUP, for as long as the process runs.
pub fn reload_on_sighup(certificates: Arc<Certificates>) -> anyhow::Result<()> {
    let mut hangups = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        .context("listening for SIGHUP")?;
    actix_rt::spawn(async move {
        while hangups.recv().await.is_some() {
            match certificates.reload() {
                Ok(()) => tracing::info!("TLS certificate reloaded"),
                Err(e) => {
                    tracing::error!(error = %format!("{e:#}"), "TLS certificate reload failed; the certificate in use stays")
                }
            }
        }
    });
    Ok(())
}
