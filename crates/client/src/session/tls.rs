//! Client TLS: the options and the rustls client configuration they make.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

use crate::error::{LoadError, LoadErrorKind};

/// Client TLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsOptions {
    /// PEM file of the certificate authorities to trust; `None` trusts the system's roots.
    pub ca_file: Option<PathBuf>,
    /// PEM files of a client certificate (chain) and its private key, for servers that require one.
    pub client_cert: Option<(PathBuf, PathBuf)>,
    /// Check that the server's certificate names the node's IP address (on by default). The driver
    /// connects to nodes by address, so the certificate needs an IP subject alternative name.
    pub verify_host: bool,
}

impl Default for TlsOptions {
    /// System roots, no client certificate, host verification on.
    fn default() -> Self {
        TlsOptions {
            ca_file: None,
            client_cert: None,
            verify_host: true,
        }
    }
}

fn tls_error(what: impl std::fmt::Display) -> LoadError {
    LoadError::new(LoadErrorKind::Tls, what.to_string())
}

/// The largest PEM file read (a CA file, a client certificate or its key): 16 MiB, some thirty
/// times a system's whole CA bundle.
const MAX_PEM_BYTES: u64 = 16 << 20;

/// The bytes of a PEM file, refused past [`MAX_PEM_BYTES`] (so `/dev/zero` is not read whole).
fn read_pem(path: &Path) -> Result<Vec<u8>, LoadError> {
    let in_context =
        |error: &dyn std::fmt::Display| tls_error(format_args!("{}: {error}", path.display()));
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_PEM_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|error| in_context(&error))?;
    if bytes.len() as u64 > MAX_PEM_BYTES {
        return Err(in_context(&format_args!(
            "larger than {MAX_PEM_BYTES} bytes, the most read of a PEM file"
        )));
    }
    Ok(bytes)
}

fn read_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, LoadError> {
    let certificates = CertificateDer::pem_slice_iter(&read_pem(path)?)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| tls_error(format_args!("{}: {error}", path.display())))?;
    if certificates.is_empty() {
        return Err(tls_error(format_args!(
            "{}: no PEM certificate in the file",
            path.display()
        )));
    }
    Ok(certificates)
}

fn trusted_roots(options: &TlsOptions) -> Result<RootCertStore, LoadError> {
    let mut roots = RootCertStore::empty();
    match &options.ca_file {
        Some(path) => {
            for certificate in read_certificates(path)? {
                roots
                    .add(certificate)
                    .map_err(|error| tls_error(format_args!("{}: {error}", path.display())))?;
            }
        }
        None => {
            let native = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(native.certs);
            if roots.is_empty() {
                return Err(tls_error(
                    "no trusted certificate authority: the system has none; give a CA file",
                ));
            }
        }
    }
    Ok(roots)
}

/// The client configuration: trusted roots, optional client certificate, host verification.
/// Uses the aws-lc-rs provider, the one the driver's rustls build brings along.
pub(crate) fn client_config(options: &TlsOptions) -> Result<Arc<ClientConfig>, LoadError> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verifier = WebPkiServerVerifier::builder_with_provider(
        Arc::new(trusted_roots(options)?),
        provider.clone(),
    )
    .build()
    .map_err(tls_error)?;
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls_error)?;
    let builder = if options.verify_host {
        builder.with_webpki_verifier(verifier)
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyHostName(verifier)))
    };
    let config = match &options.client_cert {
        Some((cert_path, key_path)) => {
            let key = PrivateKeyDer::from_pem_slice(&read_pem(key_path)?)
                .map_err(|error| tls_error(format_args!("{}: {error}", key_path.display())))?;
            builder
                .with_client_auth_cert(read_certificates(cert_path)?, key)
                .map_err(|error| tls_error(format_args!("client certificate: {error}")))?
        }
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

/// Checks the server's chain against the trusted roots like the standard verifier, but accepts a
/// certificate that names another host.
#[derive(Debug)]
struct AnyHostName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyHostName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        // The chain and validity are checked before the name: a name error means all else passed.
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
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
    fn a_missing_or_empty_ca_file_is_a_tls_error_naming_the_file() {
        let dir = std::env::temp_dir().join(format!("cqlwire-client-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        for path in [dir.join("absent.pem"), empty] {
            let options = TlsOptions {
                ca_file: Some(path.clone()),
                ..TlsOptions::default()
            };
            let error = client_config(&options).unwrap_err();
            assert_eq!(error.kind(), LoadErrorKind::Tls);
            assert!(
                error.message().contains(&path.display().to_string()),
                "{error}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_endless_pem_file_is_refused_after_the_cap() {
        let endless = std::path::PathBuf::from("/dev/zero");
        let message = "/dev/zero: larger than 16777216 bytes, the most read of a PEM file";
        // The CA file; the client certificate and key are read by the same function.
        let options = TlsOptions {
            ca_file: Some(endless.clone()),
            ..TlsOptions::default()
        };
        let error = client_config(&options).unwrap_err();
        assert_eq!(
            (error.kind(), error.message()),
            (LoadErrorKind::Tls, message)
        );
        assert_eq!(read_pem(&endless).unwrap_err().message(), message);
    }
}
