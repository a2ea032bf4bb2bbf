//! TLS for the team ledger: rustls (ring) behind tokio-postgres, through
//! `tokio-postgres-rustls`, with the certificate checks libpq's `sslmode` asks for.
//!
//! rustls links statically with the rest of the binary (no OpenSSL to find at run time), which
//! the static release build needs. What is verified:
//! - `verify-full`: the chain against the root certificate and the host name;
//! - `verify-ca`: the chain only;
//! - `allow`/`prefer`/`require`: the chain only when a root certificate is configured or
//!   `~/.postgresql/root.crt` exists (libpq's rule), else nothing: the link is encrypted but the
//!   server unauthenticated, as with libpq.
//!
//! This module owns the verifiers; the adaptor to tokio-postgres (the handshake, the stream) is
//! the crate's. It also offers channel binding (SCRAM-SHA-256-PLUS, `tls-server-end-point`)
//! where the server's certificate is signed with a SHA-2 digest: a server that asks for SCRAM
//! then proves it holds the certificate the handshake saw, even when nothing else about it was
//! verified.

use std::path::Path;
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

/// How much of the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// Encrypt, check nothing (libpq's `require` without a root certificate).
    Nothing,
    /// The chain up to the root certificate, not the name (`verify-ca`).
    Chain,
    /// The chain and the host name (`verify-full`).
    Full,
}

/// Why TLS could not be set up before connecting.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SetupError {
    #[error("cannot read the root certificate {path}: {reason}")]
    RootCert { path: String, reason: String },
    #[error("TLS setup failed: {0}")]
    Rustls(String),
}

/// The connector handed to `postgres::Config::connect`. tokio-postgres asks it for a
/// handshake before every connection, TLS or not (over a unix socket with an empty host name
/// too): a name that is no server name fails only if a handshake is attempted with it.
pub(crate) type Connector = MakeRustlsConnect;

/// A connector that checks `check` against the certificates in `root` (a PEM file).
pub(crate) fn connector(check: Check, root: Option<&Path>) -> Result<Connector, SetupError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier: Arc<dyn ServerCertVerifier> = match (check, root) {
        (Check::Nothing, _) => Arc::new(Unverified(provider.signature_verification_algorithms)),
        // A check with nothing to check against would accept any certificate: refused here
        // too, not only by the caller's plan (`connect::plan` asks for a root first).
        (_, None) => {
            return Err(SetupError::Rustls(
                "verifying the server's certificate needs a root certificate".into(),
            ));
        }
        (check, Some(root)) => {
            let roots = Arc::new(load_roots(root)?);
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
                .build()
                .map_err(|e| SetupError::Rustls(e.to_string()))?;
            match check {
                Check::Full => webpki,
                _ => Arc::new(ChainOnly(webpki)),
            }
        }
    };
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| SetupError::Rustls(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

fn load_roots(path: &Path) -> Result<RootCertStore, SetupError> {
    let fail = |reason: String| SetupError::RootCert {
        path: path.display().to_string(),
        reason,
    };
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path).map_err(|e| fail(e.to_string()))? {
        let cert = cert.map_err(|e| fail(e.to_string()))?;
        roots.add(cert).map_err(|e| fail(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(fail("no certificate in it".into()));
    }
    Ok(roots)
}

/// Accepts any certificate but still checks the handshake's signatures with it.
#[derive(Debug)]
struct Unverified(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// webpki's verification with a name mismatch forgiven (`verify-ca`).
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_without_a_root_certificate_is_refused_not_turned_into_none() {
        assert!(connector(Check::Nothing, None).is_ok());
        for check in [Check::Chain, Check::Full] {
            assert!(
                connector(check, None).is_err(),
                "a check that accepts any certificate"
            );
        }
    }
}
