//! TLS for both sides: the certificate the proxy presents to clients, a
//! client configuration that trusts exactly one certificate (the next
//! hop's, from `--next-hop-ca`), and `Capture`, which hands the relay the
//! next hop's transport parameters (quinn keeps them to itself).

use std::any::Any;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use quinn::crypto::{self, ExportKeyingMaterialError, HeaderKey, KeyPair, Keys, PacketKey};
use quinn::{ConnectError, ConnectionId, Side};
use quinn_proto::transport_parameters::TransportParameters;
use quinn_proto::TransportError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use satbench_transport::cert;

/// The server side: `--cert` and `--key`, TLS 1.3 only (QUIC). ALPN is set
/// per connection by `with_alpn`.
pub fn server_tls(cert: &Path, key: &Path) -> Result<rustls::ServerConfig, String> {
    let (certs, key_der) = cert::load_cert_and_key(cert, key)?;
    cert::tls13_server(certs, key_der, key)
}

/// A QUIC server crypto configuration offering exactly `alpn`.
pub fn with_alpn(base: &rustls::ServerConfig, alpn: Vec<Vec<u8>>) -> Arc<QuicServerConfig> {
    let mut c = base.clone();
    c.alpn_protocols = alpn;
    // A TLS 1.3-only config with the ring provider always has an initial suite.
    Arc::new(QuicServerConfig::try_from(c).expect("TLS 1.3 with an AES-128-GCM suite"))
}

/// Reads the one certificate `--next-hop-ca` names.
pub fn load_pinned(path: &Path) -> Result<CertificateDer<'static>, String> {
    let mut certs = cert::read_certs(path, "--next-hop-ca")?;
    match certs.len() {
        1 => Ok(certs.remove(0)),
        n => Err(format!(
            "--next-hop-ca {}: {n} certificates; give exactly the next hop's",
            path.display()
        )),
    }
}

/// Trusts exactly one certificate: the end-entity certificate must be that
/// one (byte for byte), and it must also pass the usual checks (name,
/// validity period, signature) with itself as the only root.
#[derive(Debug)]
pub struct Pinned {
    cert: CertificateDer<'static>,
    inner: Arc<WebPkiServerVerifier>,
}

impl Pinned {
    pub fn new(cert: CertificateDer<'static>) -> Result<Pinned, String> {
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(cert.clone())
            .map_err(|e| format!("--next-hop-ca: unusable certificate: {e}"))?;
        let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), cert::provider())
            .build()
            .map_err(|e| format!("--next-hop-ca: {e}"))?;
        Ok(Pinned { cert, inner })
    }
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if end_entity.as_ref() != self.cert.as_ref() {
            return Err(rustls::Error::General(
                "the next hop's certificate is not the one --next-hop-ca names".into(),
            ));
        }
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// The client side towards the next hop: TLS 1.3, trusting only `pinned`.
/// ALPN is set per connection.
pub fn client_tls(pinned: CertificateDer<'static>) -> Result<rustls::ClientConfig, String> {
    Ok(
        rustls::ClientConfig::builder_with_provider(cert::provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| format!("TLS: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Pinned::new(pinned)?))
            .with_no_client_auth(),
    )
}

/// Where `Capture` puts the server's transport parameters (wire encoding).
pub type CapturedParams = Arc<OnceLock<Vec<u8>>>;

/// A client crypto configuration that records the server's transport
/// parameters (their wire encoding) once the handshake delivers them.
pub struct Capture {
    inner: Arc<QuicClientConfig>,
    params: CapturedParams,
}

impl Capture {
    pub fn new(tls: rustls::ClientConfig) -> Result<(Capture, CapturedParams), String> {
        let inner = QuicClientConfig::try_from(tls).map_err(|e| format!("TLS: {e}"))?;
        let params = Arc::new(OnceLock::new());
        Ok((
            Capture {
                inner: Arc::new(inner),
                params: params.clone(),
            },
            params,
        ))
    }
}

impl crypto::ClientConfig for Capture {
    fn start_session(
        self: Arc<Self>,
        version: u32,
        server_name: &str,
        params: &TransportParameters,
    ) -> Result<Box<dyn crypto::Session>, ConnectError> {
        let inner = self
            .inner
            .clone()
            .start_session(version, server_name, params)?;
        Ok(Box::new(CaptureSession {
            inner,
            params: self.params.clone(),
        }))
    }
}

struct CaptureSession {
    inner: Box<dyn crypto::Session>,
    params: CapturedParams,
}

impl crypto::Session for CaptureSession {
    fn transport_parameters(&self) -> Result<Option<TransportParameters>, TransportError> {
        let r = self.inner.transport_parameters();
        if let Ok(Some(p)) = &r {
            if self.params.get().is_none() {
                let mut buf = Vec::new();
                p.write(&mut buf);
                let _ = self.params.set(buf);
            }
        }
        r
    }

    fn initial_keys(&self, dst_cid: &ConnectionId, side: Side) -> Keys {
        self.inner.initial_keys(dst_cid, side)
    }
    fn handshake_data(&self) -> Option<Box<dyn Any>> {
        self.inner.handshake_data()
    }
    fn peer_identity(&self) -> Option<Box<dyn Any>> {
        self.inner.peer_identity()
    }
    fn early_crypto(&self) -> Option<(Box<dyn HeaderKey>, Box<dyn PacketKey>)> {
        self.inner.early_crypto()
    }
    fn early_data_accepted(&self) -> Option<bool> {
        self.inner.early_data_accepted()
    }
    fn is_handshaking(&self) -> bool {
        self.inner.is_handshaking()
    }
    fn read_handshake(&mut self, buf: &[u8]) -> Result<bool, TransportError> {
        self.inner.read_handshake(buf)
    }
    fn write_handshake(&mut self, buf: &mut Vec<u8>) -> Option<Keys> {
        self.inner.write_handshake(buf)
    }
    fn next_1rtt_keys(&mut self) -> Option<KeyPair<Box<dyn PacketKey>>> {
        self.inner.next_1rtt_keys()
    }
    fn is_valid_retry(&self, orig_dst_cid: &ConnectionId, header: &[u8], payload: &[u8]) -> bool {
        self.inner.is_valid_retry(orig_dst_cid, header, payload)
    }
    fn export_keying_material(
        &self,
        output: &mut [u8],
        label: &[u8],
        context: &[u8],
    ) -> Result<(), ExportKeyingMaterialError> {
        self.inner.export_keying_material(output, label, context)
    }
}

/// The ALPN a finished (or far enough) handshake agreed on.
pub fn negotiated_alpn(data: Option<Box<dyn Any>>) -> Option<Vec<u8>> {
    data?
        .downcast::<crypto::rustls::HandshakeData>()
        .ok()?
        .protocol
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("quic-pep-tls-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn pins_exactly_one_certificate() {
        let d = dir("pin");
        let a = cert::generate(&["a.test".into()], &[]).unwrap();
        let b = cert::generate(&["a.test".into()], &[]).unwrap();
        cert::write(&d, &a).unwrap();
        let pinned = load_pinned(&d.join("cert.pem")).unwrap();
        let v = Pinned::new(pinned).unwrap();
        let name = ServerName::try_from("a.test").unwrap();
        let now = UnixTime::now();
        let a_der = CertificateDer::from(a.cert_der.clone());
        let b_der = CertificateDer::from(b.cert_der.clone());
        assert!(v.verify_server_cert(&a_der, &[], &name, &[], now).is_ok());
        let e = v
            .verify_server_cert(&b_der, &[], &name, &[], now)
            .unwrap_err();
        assert!(
            e.to_string().contains("not the one --next-hop-ca names"),
            "{e}"
        );
        // the pinned certificate under another name still fails the name check
        let other = ServerName::try_from("b.test").unwrap();
        assert!(v.verify_server_cert(&a_der, &[], &other, &[], now).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn pinned_file_must_hold_one_certificate() {
        let d = dir("count");
        std::fs::create_dir_all(&d).unwrap();
        let a = cert::generate(&["a.test".into()], &[]).unwrap();
        std::fs::write(d.join("two.pem"), format!("{}{}", a.cert_pem, a.cert_pem)).unwrap();
        std::fs::write(d.join("none.pem"), "nothing").unwrap();
        assert!(load_pinned(&d.join("two.pem"))
            .unwrap_err()
            .contains("2 certificates"));
        assert!(load_pinned(&d.join("none.pem"))
            .unwrap_err()
            .contains("no certificate"));
        assert!(load_pinned(&d.join("missing.pem"))
            .unwrap_err()
            .starts_with("--next-hop-ca"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn server_config_from_files() {
        let d = dir("server");
        let a = cert::generate(&["a.test".into()], &[]).unwrap();
        cert::write(&d, &a).unwrap();
        let s = server_tls(&d.join("cert.pem"), &d.join("key.pem")).unwrap();
        let _quic = with_alpn(&s, vec![b"h3".to_vec()]);
        assert!(server_tls(&d.join("nope.pem"), &d.join("key.pem"))
            .unwrap_err()
            .starts_with("--cert"));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
