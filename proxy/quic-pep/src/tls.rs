//! TLS for both sides: the certificate the proxy presents to clients (one,
//! or with `--transparent` one per name, `PerName`), a client
//! configuration that trusts exactly one certificate (the next hop's, from
//! `--next-hop-ca`) or one key (`--next-hop-spki`, `cert::SpkiPinned`), and
//! `Capture`, which hands the relay the next hop's transport parameters
//! (quinn keeps them to itself).

use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use quinn::crypto::{self, ExportKeyingMaterialError, HeaderKey, KeyPair, Keys, PacketKey};
use quinn::{ConnectError, ConnectionId, Side};
use quinn_proto::transport_parameters::TransportParameters;
use quinn_proto::TransportError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::{CertifiedKey, SigningKey};
use rustls::{DigitallySignedStruct, SignatureScheme};
use satbench_transport::cert;

use crate::cli::Trust;

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
    Ok(client_tls_with(Arc::new(Pinned::new(pinned)?)))
}

/// The client side towards the next hop, trusting what `trust` names.
pub fn client_tls_for(trust: &Trust) -> Result<rustls::ClientConfig, String> {
    match trust {
        Trust::Cert(path) => client_tls(load_pinned(path)?),
        // any certificate with that key, for the name dialled (`cert::SpkiPinned`)
        Trust::Spki(pin) => Ok(client_tls_with(Arc::new(cert::SpkiPinned::new(
            pin.clone(),
        )))),
    }
}

/// The client side towards origins when none is trusted (a Proxy-GW with
/// only `--masque-listen`): every certificate fails, for want of a root.
pub fn client_tls_trusting_nothing() -> rustls::ClientConfig {
    rustls::ClientConfig::builder_with_provider(cert::provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("the ring provider supports TLS 1.3")
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth()
}

fn client_tls_with(verifier: Arc<dyn ServerCertVerifier>) -> rustls::ClientConfig {
    rustls::ClientConfig::builder_with_provider(cert::provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("the ring provider supports TLS 1.3")
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth()
}

/// Certificates by name, made once each: at most `cap` names are kept,
/// the oldest made forgotten first (a client names what it likes).
pub struct Issued<V> {
    cap: usize,
    by_name: HashMap<String, V>,
    order: VecDeque<String>,
    /// How many were made (a name forgotten and asked for again counts twice).
    pub made: u64,
}

impl<V: Clone> Issued<V> {
    pub fn new(cap: usize) -> Issued<V> {
        Issued {
            cap: cap.max(1),
            by_name: HashMap::new(),
            order: VecDeque::new(),
            made: 0,
        }
    }

    /// The value kept for `name`, else what `make` gives (kept if Some).
    pub fn get_or_make(&mut self, name: &str, make: impl FnOnce() -> Option<V>) -> Option<V> {
        if let Some(v) = self.by_name.get(name) {
            return Some(v.clone());
        }
        let v = make()?;
        self.made += 1;
        if self.order.len() >= self.cap {
            if let Some(old) = self.order.pop_front() {
                self.by_name.remove(&old);
            }
        }
        self.order.push_back(name.to_string());
        self.by_name.insert(name.to_string(), v.clone());
        Some(v)
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

/// Names whose certificates Proxy-ST keeps (`--transparent`).
pub const ISSUED_NAMES: usize = 4096;

/// Proxy-ST with `--transparent`: presents, for the name each client asks
/// for (SNI), a self-signed certificate made with `--key` (so one SPKI pin
/// covers them all), made once per name; `--cert` to a client that names
/// none.
pub struct PerName {
    key_pem: String,
    key: Arc<dyn SigningKey>,
    fallback: Arc<CertifiedKey>,
    issued: Mutex<Issued<Arc<CertifiedKey>>>,
}

impl std::fmt::Debug for PerName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PerName")
    }
}

impl PerName {
    /// From `--cert` and `--key`; fails now if the key cannot make
    /// certificates.
    pub fn new(cert_path: &Path, key_path: &Path) -> Result<PerName, String> {
        let (certs, key_der) = cert::load_cert_and_key(cert_path, key_path)?;
        let err = |e: &dyn std::fmt::Display| format!("--key {}: {e}", key_path.display());
        let key_pem = std::fs::read_to_string(key_path).map_err(|e| err(&e))?;
        let key = cert::provider()
            .key_provider
            .load_private_key(key_der)
            .map_err(|e| err(&e))?;
        let p = PerName {
            fallback: Arc::new(CertifiedKey::new(certs, key.clone())),
            key_pem,
            key,
            issued: Mutex::new(Issued::new(ISSUED_NAMES)),
        };
        p.make("quic-pep.invalid")
            .map_err(|e| err(&format!("cannot make certificates with it: {e}")))?;
        Ok(p)
    }

    fn make(&self, name: &str) -> Result<Arc<CertifiedKey>, String> {
        let g = cert::generate_with_key(&[name.to_string()], &[], &self.key_pem)?;
        Ok(Arc::new(CertifiedKey::new(
            vec![CertificateDer::from(g.cert_der)],
            self.key.clone(),
        )))
    }

    /// The certificate for `name`, made now or kept from before.
    pub fn for_name(&self, name: &str) -> Arc<CertifiedKey> {
        let name = name.to_ascii_lowercase();
        let mut issued = self.issued.lock().unwrap_or_else(|p| p.into_inner());
        issued
            .get_or_make(&name, || self.make(&name).ok())
            .unwrap_or_else(|| self.fallback.clone())
    }

    /// Certificates made so far.
    pub fn made(&self) -> u64 {
        self.issued.lock().map_or(0, |i| i.made)
    }
}

impl ResolvesServerCert for PerName {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(match hello.server_name() {
            Some(name) => self.for_name(name),
            None => self.fallback.clone(),
        })
    }
}

/// The server side with `--transparent`: TLS 1.3, a certificate per name
/// (`PerName`). ALPN is set per connection by `with_alpn`.
pub fn server_tls_per_name(resolver: Arc<PerName>) -> rustls::ServerConfig {
    rustls::ServerConfig::builder_with_provider(cert::provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("the ring provider supports TLS 1.3")
        .with_no_client_auth()
        .with_cert_resolver(resolver)
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

/// The name (SNI) a client asked for in its handshake.
pub fn server_name(data: Option<Box<dyn Any>>) -> Option<String> {
    data?
        .downcast::<crypto::rustls::HandshakeData>()
        .ok()?
        .server_name
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::server::ParsedCertificate;

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
    fn issued_names_are_made_once_and_the_oldest_forgotten_first() {
        let mut made = Vec::new();
        let mut c = Issued::new(2);
        let mut get = |c: &mut Issued<String>, n: &str| {
            c.get_or_make(n, || {
                made.push(n.to_string());
                Some(format!("cert-{n}"))
            })
        };
        assert_eq!(get(&mut c, "a.test").as_deref(), Some("cert-a.test"));
        assert_eq!(get(&mut c, "a.test").as_deref(), Some("cert-a.test"));
        get(&mut c, "b.test");
        get(&mut c, "c.test"); // a.test goes
        assert_eq!(c.len(), 2);
        get(&mut c, "b.test");
        get(&mut c, "a.test"); // made again; b.test goes
        assert_eq!(made, ["a.test", "b.test", "c.test", "a.test"]);
        assert_eq!(c.made, 4);
        // nothing made, nothing kept
        assert_eq!(c.get_or_make("d.test", || None), None);
        assert_eq!((c.len(), c.made), (2, 4));
    }

    /// The certificate a server resolver presents for `name`, parsed.
    fn presented(p: &PerName, name: &str) -> (CertificateDer<'static>, String) {
        let ck = p.for_name(name);
        let der = ck.cert[0].clone();
        let pin = {
            let parsed = ParsedCertificate::try_from(&der).unwrap();
            cert::spki_pin(parsed.subject_public_key_info().as_ref())
        };
        (der, pin)
    }

    #[test]
    fn per_name_certificates_carry_the_one_key_and_are_kept() {
        let d = dir("per-name");
        let st = cert::generate(&["st.test".into()], &[]).unwrap();
        cert::write(&d, &st).unwrap();
        let p = PerName::new(&d.join("cert.pem"), &d.join("key.pem")).unwrap();
        let made = p.made();
        let (a, pin_a) = presented(&p, "a.test");
        let (b, pin_b) = presented(&p, "cdn.b.test");
        assert_eq!(
            (pin_a.as_str(), pin_b.as_str()),
            (st.spki_pin.as_str(), st.spki_pin.as_str())
        );
        assert_ne!(a, b);
        // each is made for its own name, and only that
        let now = UnixTime::now();
        let v = cert::SpkiPinned::new(st.spki_pin.clone());
        let name = |n: &'static str| ServerName::try_from(n).unwrap();
        assert!(v
            .verify_server_cert(&a, &[], &name("a.test"), &[], now)
            .is_ok());
        assert!(v
            .verify_server_cert(&b, &[], &name("cdn.b.test"), &[], now)
            .is_ok());
        assert!(v
            .verify_server_cert(&a, &[], &name("cdn.b.test"), &[], now)
            .is_err());
        // asked again: the same certificate, not a new one
        assert_eq!(presented(&p, "a.test").0, a);
        assert_eq!(p.made(), made + 2);
        // a key that cannot make certificates fails at start, naming --key
        std::fs::write(
            d.join("bad.pem"),
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        )
        .unwrap();
        let e = PerName::new(&d.join("cert.pem"), &d.join("bad.pem")).unwrap_err();
        assert!(e.starts_with("--key "), "{e}");
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
