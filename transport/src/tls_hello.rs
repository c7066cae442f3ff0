//! What a TLS 1.3 handshake's hellos say about resumption, read with
//! tls-parser: whether the client's ClientHello offered a session ticket
//! (`pre_shared_key`) and early data (`early_data`), and whether the
//! server's ServerHello took the ticket (resumed). rustls decides these but
//! shows none of them to a QUIC server (quinn hides its session) nor the
//! client's offer to a TCP one.

use tls_parser::{
    parse_tls_extension_unknown, parse_tls_message_handshake, parse_tls_raw_record,
    parse_tls_record_header, TlsExtension, TlsExtensionType, TlsHandshakeType, TlsMessage,
    TlsMessageHandshake, TlsRecordType,
};

/// What a ClientHello offered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offer {
    /// A ticket to resume with (`pre_shared_key`).
    pub psk: bool,
    /// Early data (0-RTT) under that ticket (`early_data`).
    pub early_data: bool,
}

/// The answer of a parse over bytes that may still be arriving.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parsed<T> {
    Done(T),
    /// The message is not whole yet.
    NeedMore,
    /// Not the message asked for (or not TLS).
    Not,
}

/// The extension types of a hello's extensions block, in order (each
/// extension read as opaque: one whose contents tls-parser would reject
/// still counts).
fn extension_types(mut ext: &[u8]) -> Vec<TlsExtensionType> {
    let mut out = Vec::new();
    while let Ok((rest, TlsExtension::Unknown(t, _))) = parse_tls_extension_unknown(ext) {
        out.push(t);
        ext = rest;
    }
    out
}

/// The ClientHello at the start of `msgs`, handshake messages as a QUIC
/// client's Initial CRYPTO stream carries them.
pub fn client_hello(msgs: &[u8]) -> Parsed<Offer> {
    // what starts otherwise is no ClientHello, however much more comes
    if msgs
        .first()
        .is_some_and(|&t| t != TlsHandshakeType::ClientHello.0)
    {
        return Parsed::Not;
    }
    match parse_tls_message_handshake(msgs) {
        Ok((_, TlsMessage::Handshake(TlsMessageHandshake::ClientHello(ch)))) => {
            let types = extension_types(ch.ext.unwrap_or_default());
            Parsed::Done(Offer {
                psk: types.contains(&TlsExtensionType::PreSharedKey),
                early_data: types.contains(&TlsExtensionType::EarlyData),
            })
        }
        Err(tls_parser::Err::Incomplete(_)) => Parsed::NeedMore,
        _ => Parsed::Not,
    }
}

/// The ClientHello at the start of `bytes`, TLS records as a TCP client
/// sends them (a hello may span several handshake records).
pub fn client_hello_in_records(mut bytes: &[u8]) -> Parsed<Offer> {
    let mut msgs = Vec::new();
    loop {
        match parse_tls_record_header(bytes) {
            Ok((_, h)) if h.record_type != TlsRecordType::Handshake => return Parsed::Not,
            Ok(_) => {}
            Err(tls_parser::Err::Incomplete(_)) => return Parsed::NeedMore,
            Err(_) => return Parsed::Not,
        }
        match parse_tls_raw_record(bytes) {
            Ok((rest, r)) => {
                msgs.extend_from_slice(r.data);
                match client_hello(&msgs) {
                    Parsed::NeedMore => bytes = rest,
                    done => return done,
                }
            }
            Err(tls_parser::Err::Incomplete(_)) => return Parsed::NeedMore,
            Err(_) => return Parsed::Not,
        }
    }
}

/// Whether the ServerHello at the start of `msgs` (a server's first
/// handshake messages) took a ticket: it carries `pre_shared_key` only
/// then. None if `msgs` does not start with a whole ServerHello.
pub fn server_hello_resumed(msgs: &[u8]) -> Option<bool> {
    match parse_tls_message_handshake(msgs) {
        Ok((_, TlsMessage::Handshake(TlsMessageHandshake::ServerHello(sh)))) => Some(
            extension_types(sh.ext.unwrap_or_default()).contains(&TlsExtensionType::PreSharedKey),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::pem::PemObject;
    use std::sync::Arc;

    /// The first flight of a rustls client (TLS records, as over TCP) and,
    /// when the server answered, the server's first records.
    struct Flights {
        client: Vec<u8>,
        server: Vec<u8>,
    }

    fn configs() -> (Arc<rustls::ServerConfig>, Arc<rustls::ClientConfig>) {
        let g = crate::cert::generate(&["a.test".into()], &[]).unwrap();
        let certs = vec![rustls::pki_types::CertificateDer::from(g.cert_der.clone())];
        let key = rustls::pki_types::PrivateKeyDer::from_pem_slice(g.key_pem.as_bytes()).unwrap();
        let mut server = crate::cert::tls13_server(certs, key, std::path::Path::new("k")).unwrap();
        server.max_early_data_size = 1024;
        let mut client = rustls::ClientConfig::builder_with_provider(crate::cert::provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(crate::cert::SpkiPinned::new(g.spki_pin)))
            .with_no_client_auth();
        client.enable_early_data = true;
        (Arc::new(server), Arc::new(client))
    }

    /// One connection run to its end in memory, a request sent as early
    /// data when the client has a ticket that allows it. Returns the first
    /// flight of each side.
    fn connect(server: &Arc<rustls::ServerConfig>, client: &Arc<rustls::ClientConfig>) -> Flights {
        let name = rustls::pki_types::ServerName::try_from("a.test").unwrap();
        let mut c = rustls::ClientConnection::new(client.clone(), name).unwrap();
        if let Some(mut e) = c.early_data() {
            std::io::Write::write_all(&mut e, b"GET / HTTP/1.1\r\n\r\n").unwrap();
        }
        let mut s = rustls::ServerConnection::new(server.clone()).unwrap();
        let mut flights = Flights {
            client: Vec::new(),
            server: Vec::new(),
        };
        // until both are done and the tickets are across
        for round in 0..4 {
            let mut there = Vec::new();
            while c.wants_write() {
                c.write_tls(&mut there).unwrap();
            }
            if !there.is_empty() {
                s.read_tls(&mut there.as_slice()).unwrap();
                s.process_new_packets().unwrap();
            }
            let mut back = Vec::new();
            while s.wants_write() {
                s.write_tls(&mut back).unwrap();
            }
            if !back.is_empty() {
                c.read_tls(&mut back.as_slice()).unwrap();
                c.process_new_packets().unwrap();
            }
            if round == 0 {
                (flights.client, flights.server) = (there, back);
            }
        }
        assert!(!c.is_handshaking() && !s.is_handshaking());
        flights
    }

    /// The handshake messages of the first record of `records`.
    fn first_record(records: &[u8]) -> &[u8] {
        parse_tls_raw_record(records).unwrap().1.data
    }

    #[test]
    fn a_first_connection_offers_nothing_and_is_not_resumed_the_second_offers_both_and_is() {
        let (server, client) = configs();
        let first = connect(&server, &client);
        assert_eq!(
            client_hello_in_records(&first.client),
            Parsed::Done(Offer::default())
        );
        assert_eq!(
            server_hello_resumed(first_record(&first.server)),
            Some(false)
        );
        let second = connect(&server, &client);
        assert_eq!(
            client_hello_in_records(&second.client),
            Parsed::Done(Offer {
                psk: true,
                early_data: true
            })
        );
        assert_eq!(
            client_hello(first_record(&second.client)),
            Parsed::Done(Offer {
                psk: true,
                early_data: true
            })
        );
        assert_eq!(
            server_hello_resumed(first_record(&second.server)),
            Some(true)
        );
    }

    #[test]
    fn partial_and_foreign_bytes() {
        let (server, client) = configs();
        let first = connect(&server, &client);
        let hello = first_record(&first.client);
        assert_eq!(client_hello(&hello[..hello.len() - 1]), Parsed::NeedMore);
        assert_eq!(client_hello(&hello[..3]), Parsed::NeedMore);
        assert_eq!(
            client_hello_in_records(&first.client[..10]),
            Parsed::NeedMore
        );
        assert_eq!(client_hello(b"GET / HTTP/1.1\r\n"), Parsed::Not);
        assert_eq!(client_hello_in_records(b"GET / HTTP/1.1\r\n"), Parsed::Not);
        // a ServerHello is not a ClientHello, nor the other way round
        assert_eq!(client_hello(first_record(&first.server)), Parsed::Not);
        assert_eq!(server_hello_resumed(hello), None);
    }

    #[test]
    fn a_hello_split_over_records_is_put_together() {
        let (server, client) = configs();
        let hello = first_record(&connect(&server, &client).client).to_vec();
        let record = |part: &[u8]| {
            let mut r = vec![22, 3, 3];
            r.extend_from_slice(&(part.len() as u16).to_be_bytes());
            r.extend_from_slice(part);
            r
        };
        let (a, b) = hello.split_at(40);
        let split = [record(a), record(b)].concat();
        assert_eq!(
            client_hello_in_records(&split),
            Parsed::Done(Offer::default())
        );
        assert_eq!(client_hello_in_records(&record(a)), Parsed::NeedMore);
    }
}
