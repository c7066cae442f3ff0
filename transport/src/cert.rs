//! Certificates: the testbed's self-signed ECDSA P-256 certificate (small,
//! so the server's QUIC handshake flight stays small; or one for a key
//! already made), the SPKI pin Chromium takes and a client verifier that
//! trusts a pin as Chromium is told to (`SpkiPinned`), reading PEM files,
//! and the TLS 1.3 server configuration every QUIC server of the workspace
//! starts from.

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use rcgen::{CertificateParams, DnType, KeyPair, PublicKeyData, SanType, PKCS_ECDSA_P256_SHA256};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{DigitallySignedStruct, SignatureScheme};

pub struct Generated {
    pub cert_pem: String,
    pub cert_der: Vec<u8>,
    pub key_pem: String,
    /// DER SubjectPublicKeyInfo of the key.
    pub spki_der: Vec<u8>,
    /// base64(SHA-256(SPKI DER)): `--ignore-certificate-errors-spki-list`.
    pub spki_pin: String,
}

/// base64 of the SHA-256 of a DER SubjectPublicKeyInfo.
pub fn spki_pin(spki_der: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, spki_der);
    base64::engine::general_purpose::STANDARD.encode(digest.as_ref())
}

pub fn generate(names: &[String], ips: &[IpAddr]) -> Result<Generated, String> {
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)
        .map_err(|e| format!("key generation: {e}"))?;
    self_signed(names, ips, &key)
}

/// A self-signed certificate for `names` and `ips` carrying the key in
/// `key_pem` (PKCS#8 PEM) instead of a new one: every certificate made with
/// one key has the same SPKI pin. Errors name what failed, not the file.
pub fn generate_with_key(
    names: &[String],
    ips: &[IpAddr],
    key_pem: &str,
) -> Result<Generated, String> {
    let key = KeyPair::from_pem(key_pem).map_err(|e| format!("not a usable key: {e}"))?;
    self_signed(names, ips, &key)
}

fn self_signed(names: &[String], ips: &[IpAddr], key: &KeyPair) -> Result<Generated, String> {
    // names that are IP addresses become IP SANs (rcgen does that)
    let mut params = CertificateParams::new(names.to_vec()).map_err(|e| format!("--name: {e}"))?;
    for ip in ips {
        let san = SanType::IpAddress(*ip);
        if !params.subject_alt_names.contains(&san) {
            params.subject_alt_names.push(san);
        }
    }
    let cn = names.first().cloned().unwrap_or_else(|| ips[0].to_string());
    params.distinguished_name.push(DnType::CommonName, cn);
    params
        .distinguished_name
        .push(DnType::OrganizationName, "satbench testbed");
    let cert = params
        .self_signed(key)
        .map_err(|e| format!("certificate: {e}"))?;
    let spki_der = key.subject_public_key_info();
    Ok(Generated {
        cert_pem: cert.pem(),
        cert_der: cert.der().to_vec(),
        key_pem: key.serialize_pem(),
        spki_pin: spki_pin(&spki_der),
        spki_der,
    })
}

/// Write `cert.pem`, `key.pem` (mode 0600) and `spki.txt` (the pin and a
/// newline) into `out`, creating it.
pub fn write(out: &Path, g: &Generated) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let err = |p: &Path, e: std::io::Error| format!("--out {}: {e}", p.display());
    std::fs::create_dir_all(out).map_err(|e| err(out, e))?;
    std::fs::write(out.join("cert.pem"), &g.cert_pem).map_err(|e| err(&out.join("cert.pem"), e))?;
    let key_path = out.join("key.pem");
    let _ = std::fs::remove_file(&key_path);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&key_path)
        .and_then(|mut f| f.write_all(g.key_pem.as_bytes()))
        .map_err(|e| err(&key_path, e))?;
    std::fs::write(out.join("spki.txt"), format!("{}\n", g.spki_pin))
        .map_err(|e| err(&out.join("spki.txt"), e))?;
    Ok(())
}

/// The crypto provider every tool uses (ring), so none depends on a
/// process-wide default being installed.
pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Every certificate in the PEM file `path`, at least one; errors start
/// with `flag path`.
pub fn read_certs(path: &Path, flag: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let err = |e: &dyn std::fmt::Display| format!("{flag} {}: {e}", path.display());
    let pem = std::fs::read(path).map_err(|e| err(&e))?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| err(&e))?;
    if certs.is_empty() {
        return Err(err(&"no certificate in the file"));
    }
    Ok(certs)
}

/// `--cert` (a chain) and `--key` (a private key), as PEM files.
pub fn load_cert_and_key(
    cert: &Path,
    key: &Path,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), String> {
    let certs = read_certs(cert, "--cert")?;
    let key_pem = std::fs::read(key).map_err(|e| format!("--key {}: {e}", key.display()))?;
    let key_der = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| format!("--key {}: {e}", key.display()))?;
    Ok((certs, key_der))
}

/// A TLS 1.3-only server configuration (what QUIC needs) presenting
/// `certs`; the caller sets its ALPN. `key_path` names the key in errors.
pub fn tls13_server(
    certs: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    key_path: &Path,
) -> Result<rustls::ServerConfig, String> {
    let err = |e: rustls::Error| format!("--key {}: {e}", key_path.display());
    rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(err)?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(err)
}

/// A client's trust in one key: the server's end-entity certificate must
/// carry the key whose SPKI pin is `pin` (what Chromium's
/// `--ignore-certificate-errors-spki-list` takes), be made for the name
/// dialled when that is a DNS name (no name, no check: an IP address
/// sends no SNI), and the handshake must be signed with that key. No
/// chain, no validity dates: a replayed site's origins present a
/// certificate per host, all with one key, made at start-up.
#[derive(Debug)]
pub struct SpkiPinned {
    pin: String,
    algs: WebPkiSupportedAlgorithms,
}

impl SpkiPinned {
    pub fn new(pin: String) -> SpkiPinned {
        SpkiPinned {
            pin,
            algs: provider().signature_verification_algorithms,
        }
    }
}

impl ServerCertVerifier for SpkiPinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let parsed = ParsedCertificate::try_from(end_entity)?;
        if spki_pin(parsed.subject_public_key_info().as_ref()) != self.pin {
            return Err(rustls::Error::General(format!(
                "the server's key is not the pinned one ({})",
                self.pin
            )));
        }
        if let ServerName::DnsName(_) = server_name {
            rustls::client::verify_server_name(&parsed, server_name)?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_is_base64_sha256() {
        // SHA-256("") = e3b0c442…; `printf "" | openssl dgst -sha256 -binary | base64`
        assert_eq!(
            spki_pin(b""),
            "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        );
    }

    #[test]
    fn generates_p256_cert_with_names_and_ips() {
        let g = generate(
            &["origin.test".into(), "127.0.0.1".into()],
            &["198.18.3.2".parse().unwrap(), "127.0.0.1".parse().unwrap()],
        )
        .unwrap();
        assert!(g.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(g.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        // the SPKI we pin is the one inside the certificate
        assert!(g
            .cert_der
            .windows(g.spki_der.len())
            .any(|w| w == g.spki_der.as_slice()));
        // id-ecPublicKey + prime256v1
        let oid_p256 = [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
        assert!(g.spki_der.windows(oid_p256.len()).any(|w| w == oid_p256));
        assert_eq!(g.spki_pin.len(), 44);
        // SANs: the DNS name, and each IP once (198.18.3.2 = c6 12 03 02)
        assert!(g.cert_der.windows(11).any(|w| w == b"origin.test"));
        assert!(g.cert_der.windows(6).any(|w| w == [0x87, 4, 198, 18, 3, 2]));
        let localhost = [0x87, 4, 127, 0, 0, 1];
        assert_eq!(g.cert_der.windows(6).filter(|w| *w == localhost).count(), 1);
        // a small certificate keeps the QUIC server flight small
        assert!(g.cert_der.len() < 600, "{} bytes", g.cert_der.len());
    }

    #[test]
    fn certificates_made_with_one_key_share_its_pin() {
        let first = generate(&["a.test".into()], &[]).unwrap();
        let other = generate_with_key(&["b.test".into()], &[], &first.key_pem).unwrap();
        assert_eq!(other.spki_pin, first.spki_pin);
        assert!(other.cert_der.windows(6).any(|w| w == b"b.test"));
        assert!(!other.cert_der.windows(6).any(|w| w == b"a.test"));
        let bad = generate_with_key(&["b.test".into()], &[], "nothing").err();
        assert!(bad.unwrap().starts_with("not a usable key: "));
    }

    #[test]
    fn spki_pinned_trusts_the_key_for_its_names() {
        let g = generate(&["a.test".into()], &[]).unwrap();
        let cert = CertificateDer::from(g.cert_der.clone());
        let verify = |pin: &str, name: &str| {
            let name = ServerName::try_from(name.to_string()).unwrap();
            SpkiPinned::new(pin.to_string())
                .verify_server_cert(&cert, &[], &name, &[], UnixTime::now())
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        assert_eq!(verify(&g.spki_pin, "a.test"), Ok(()));
        assert_eq!(verify(&g.spki_pin, "127.0.0.1"), Ok(()), "no name to check");
        assert!(verify(&g.spki_pin, "b.test").is_err());
        let other = generate(&["a.test".into()], &[]).unwrap().spki_pin;
        assert!(verify(&other, "a.test")
            .unwrap_err()
            .contains("not the pinned one"));
    }

    #[test]
    fn writes_three_files() {
        let dir = std::env::temp_dir().join(format!("transport-cert-{}", std::process::id()));
        let g = generate(&["a.test".into()], &[]).unwrap();
        write(&dir, &g).unwrap();
        write(&dir, &g).unwrap(); // overwrites
        assert_eq!(
            std::fs::read_to_string(dir.join("spki.txt")).unwrap(),
            format!("{}\n", g.spki_pin)
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("cert.pem")).unwrap(),
            g.cert_pem
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("key.pem"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reads_what_it_wrote_and_names_the_flag_on_errors() {
        let dir = std::env::temp_dir().join(format!("transport-read-{}", std::process::id()));
        let g = generate(&["a.test".into()], &[]).unwrap();
        write(&dir, &g).unwrap();
        let (certs, key) = load_cert_and_key(&dir.join("cert.pem"), &dir.join("key.pem")).unwrap();
        assert_eq!(certs[0].as_ref(), g.cert_der.as_slice());
        tls13_server(certs, key, &dir.join("key.pem")).unwrap();
        std::fs::write(dir.join("empty.pem"), "nothing").unwrap();
        assert_eq!(
            read_certs(&dir.join("empty.pem"), "--ca").unwrap_err(),
            format!(
                "--ca {}: no certificate in the file",
                dir.join("empty.pem").display()
            )
        );
        assert!(
            load_cert_and_key(&dir.join("nope.pem"), &dir.join("key.pem"))
                .unwrap_err()
                .starts_with("--cert ")
        );
        assert!(
            load_cert_and_key(&dir.join("cert.pem"), &dir.join("cert.pem"))
                .unwrap_err()
                .starts_with("--key ")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
