//! Which certificate a TLS handshake gets (h1s, h2 and h3 alike): by the
//! client's SNI.
//!
//! A site directory has one certificate (`--cert`) for every name. An
//! archive has one per host, made in memory at start-up for that host
//! alone (its only subject alternative name) and all carrying the one key
//! of `--key`, so the single SPKI pin Chromium is given
//! (`--ignore-certificate-errors-spki-list`) covers every host and nothing
//! goes into a trust store. A handshake naming no host of the archive, or
//! none (an IP address), gets the page's host's certificate.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use satbench_transport::cert;

#[derive(Debug)]
pub struct HostCerts {
    by_host: HashMap<String, Arc<CertifiedKey>>,
    /// for any other name, and for no name
    fallback: Arc<CertifiedKey>,
}

impl HostCerts {
    /// One chain for every name (`--cert`, `--key`); errors name `--key`
    /// when the key is not the certificate's.
    pub fn single(
        certs: Vec<CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
        key_path: &Path,
    ) -> Result<HostCerts, String> {
        let ck = CertifiedKey::from_der(certs, key, &cert::provider())
            .map_err(|e| format!("--key {}: {e}", key_path.display()))?;
        Ok(HostCerts {
            by_host: HashMap::new(),
            fallback: Arc::new(ck),
        })
    }

    /// A self-signed certificate for each of `hosts` (DNS names or IP
    /// addresses, an IPv6 one in brackets or not) with the key in the PEM
    /// file `key_path`; the first host's answers unknown names.
    pub fn per_host(hosts: &[String], key_path: &Path) -> Result<HostCerts, String> {
        let err = |e: &dyn std::fmt::Display| format!("--key {}: {e}", key_path.display());
        let pem = std::fs::read_to_string(key_path).map_err(|e| err(&e))?;
        let key_der = PrivateKeyDer::from_pem_slice(pem.as_bytes()).map_err(|e| err(&e))?;
        let key = cert::provider()
            .key_provider
            .load_private_key(key_der)
            .map_err(|e| err(&e))?;
        let mut by_host = HashMap::new();
        for host in hosts.iter().map(|h| h.to_ascii_lowercase()) {
            let name = host.trim_start_matches('[').trim_end_matches(']');
            let g = cert::generate_with_key(&[name.to_string()], &[], &pem)
                .map_err(|e| err(&format!("certificate for {host}: {e}")))?;
            let ck = CertifiedKey::new(vec![CertificateDer::from(g.cert_der)], key.clone());
            by_host.insert(host, Arc::new(ck));
        }
        let fallback = hosts
            .first()
            .and_then(|h| by_host.get(&h.to_ascii_lowercase()).cloned())
            .ok_or_else(|| err(&"no host to make a certificate for"))?;
        Ok(HostCerts { by_host, fallback })
    }

    /// The certificate chain a handshake naming `sni` gets.
    pub fn for_name(&self, sni: Option<&str>) -> Arc<CertifiedKey> {
        sni.and_then(|n| self.by_host.get(&n.to_ascii_lowercase()))
            .unwrap_or(&self.fallback)
            .clone()
    }
}

impl ResolvesServerCert for HostCerts {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.for_name(hello.server_name()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use satbench_transport::testkit::temp_dir;

    fn der(ck: &CertifiedKey) -> Vec<u8> {
        ck.cert[0].as_ref().to_vec()
    }

    fn has(bytes: &[u8], needle: impl AsRef<[u8]>) -> bool {
        let n = needle.as_ref();
        bytes.windows(n.len()).any(|w| w == n)
    }

    #[test]
    fn a_certificate_per_host_all_with_one_key() {
        let dir = temp_dir("vhost");
        let g = cert::generate(&["gen.test".into()], &[]).unwrap();
        cert::write(&dir, &g).unwrap();
        let hosts: Vec<String> = ["www.a.test", "CDN.a.test", "[::1]", "10.0.0.1"]
            .map(String::from)
            .to_vec();
        let c = HostCerts::per_host(&hosts, &dir.join("key.pem")).unwrap();
        let www = c.for_name(Some("www.a.test"));
        let cdn = c.for_name(Some("cdn.A.test"));
        assert!(has(&der(&www), "www.a.test") && !has(&der(&www), "cdn.a.test"));
        assert!(has(&der(&cdn), "cdn.a.test") && !has(&der(&cdn), "www.a.test"));
        // unknown names and none: the first host's
        assert_eq!(der(&c.for_name(Some("x.test"))), der(&www));
        assert_eq!(der(&c.for_name(None)), der(&www));
        // every one carries the key of key.pem: one pin
        for ck in [&www, &cdn, &c.for_name(Some("[::1]"))] {
            assert!(has(&der(ck), &g.spki_der));
            ck.keys_match().unwrap();
        }
        let e = HostCerts::per_host(&hosts, &dir.join("nope.pem")).unwrap_err();
        assert!(e.starts_with("--key ") && e.contains("nope.pem: "), "{e}");
        let e = HostCerts::per_host(&[], &dir.join("key.pem")).unwrap_err();
        assert!(e.ends_with("no host to make a certificate for"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
