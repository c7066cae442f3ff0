//! A QUIC server's handshakes watched one connection at a time: each
//! incoming connection is accepted with its own copy of the endpoint's
//! server configuration (`watch`), whose crypto session hands everything
//! to quinn's rustls session and notes on the way what the ClientHello
//! offered and whether the ServerHello resumed (`tls_hello`), whether
//! 0-RTT keys were installed (rustls gives a server early keys only when
//! it accepts early data) and when the handshake completed. A request the
//! server counts before then (`Watch::request`) rode in 0-RTT.

use std::any::Any;
use std::sync::{Arc, Mutex, MutexGuard};

use quinn::crypto::{self, ExportKeyingMaterialError, HeaderKey, KeyPair, Keys, PacketKey};
use quinn::{ConnectionId, Side};
use quinn_proto::transport_parameters::TransportParameters;
use quinn_proto::TransportError;

use crate::conn_log::Handshake;
use crate::tls_hello::{self, Offer, Parsed};

/// A ClientHello longer than this is not waited for (no real one is).
const MAX_HELLO: usize = 64 * 1024;

#[derive(Debug, Default)]
struct Seen {
    offer: Offer,
    resumed: bool,
    early_accepted: bool,
    done: bool,
    early_requests: u64,
}

/// What one connection's handshake showed, shared by its crypto session
/// and the server that accepted it.
#[derive(Clone, Debug, Default)]
pub struct Watch(Arc<Mutex<Seen>>);

impl Watch {
    fn seen(&self) -> MutexGuard<'_, Seen> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A request (a stream the client opened) reached the server: it came
    /// in 0-RTT if the handshake is not done yet (only 0-RTT packets carry
    /// streams before it is, and only once early data was accepted).
    pub fn request(&self) {
        let mut s = self.seen();
        if !s.done && s.early_accepted {
            s.early_requests += 1;
        }
    }

    /// Whether the server accepted the client's early data (known once the
    /// ClientHello has been processed, i.e. when `accept_with` returns).
    pub fn early_accepted(&self) -> bool {
        self.seen().early_accepted
    }

    /// Whether the handshake has completed.
    pub fn done(&self) -> bool {
        self.seen().done
    }

    /// The connection's line, `protocol` its ALPN.
    pub fn handshake(&self, protocol: &str) -> Handshake {
        let s = self.seen();
        Handshake {
            early_requests: s.early_requests,
            ..Handshake::new(protocol, s.offer, s.resumed, s.early_accepted)
        }
    }
}

/// `base` (an endpoint's server configuration) for one incoming
/// connection (`Incoming::accept_with`), its handshake watched. Everything
/// else, the token key for address validation included, is `base`'s.
pub fn watch(base: &quinn::ServerConfig) -> (quinn::ServerConfig, Watch) {
    let w = Watch::default();
    let mut c = base.clone();
    c.crypto = Arc::new(Watched {
        inner: base.crypto.clone(),
        watch: w.clone(),
    });
    (c, w)
}

struct Watched {
    inner: Arc<dyn crypto::ServerConfig>,
    watch: Watch,
}

impl crypto::ServerConfig for Watched {
    fn initial_keys(
        &self,
        version: u32,
        dst_cid: &ConnectionId,
    ) -> Result<Keys, crypto::UnsupportedVersion> {
        self.inner.initial_keys(version, dst_cid)
    }

    fn retry_tag(&self, version: u32, orig_dst_cid: &ConnectionId, packet: &[u8]) -> [u8; 16] {
        self.inner.retry_tag(version, orig_dst_cid, packet)
    }

    fn start_session(
        self: Arc<Self>,
        version: u32,
        params: &TransportParameters,
    ) -> Box<dyn crypto::Session> {
        Box::new(WatchedSession {
            inner: self.inner.clone().start_session(version, params),
            watch: self.watch.clone(),
            hello: Some(Vec::new()),
            server_hello: false,
        })
    }
}

struct WatchedSession {
    inner: Box<dyn crypto::Session>,
    watch: Watch,
    /// The client's first handshake bytes until they make a ClientHello.
    hello: Option<Vec<u8>>,
    /// The server's ServerHello has been read.
    server_hello: bool,
}

impl WatchedSession {
    fn read_client_hello(&mut self, buf: &[u8]) {
        let Some(hello) = &mut self.hello else { return };
        hello.extend_from_slice(buf);
        match tls_hello::client_hello(hello) {
            Parsed::Done(offer) => {
                self.watch.seen().offer = offer;
                self.hello = None;
            }
            Parsed::NeedMore if hello.len() < MAX_HELLO => {}
            _ => self.hello = None,
        }
    }
}

impl crypto::Session for WatchedSession {
    fn read_handshake(&mut self, buf: &[u8]) -> Result<bool, TransportError> {
        self.read_client_hello(buf);
        let r = self.inner.read_handshake(buf);
        if !self.inner.is_handshaking() {
            self.watch.seen().done = true;
        }
        r
    }

    fn write_handshake(&mut self, buf: &mut Vec<u8>) -> Option<Keys> {
        let start = buf.len();
        let keys = self.inner.write_handshake(buf);
        if !self.server_hello && buf.len() > start {
            self.server_hello = true;
            if let Some(resumed) = tls_hello::server_hello_resumed(&buf[start..]) {
                self.watch.seen().resumed = resumed;
            }
        }
        keys
    }

    fn early_crypto(&self) -> Option<(Box<dyn HeaderKey>, Box<dyn PacketKey>)> {
        let keys = self.inner.early_crypto();
        if keys.is_some() {
            self.watch.seen().early_accepted = true;
        }
        keys
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
    fn early_data_accepted(&self) -> Option<bool> {
        self.inner.early_data_accepted()
    }
    fn is_handshaking(&self) -> bool {
        self.inner.is_handshaking()
    }
    fn transport_parameters(&self) -> Result<Option<TransportParameters>, TransportError> {
        self.inner.transport_parameters()
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

/// A rustls configuration for a QUIC server that issues session tickets
/// and, with `early_data`, accepts 0-RTT under them: rustls's in-memory
/// session store (rustls takes early data only with its stateful tickets:
/// each is used once, its anti-replay) and quinn's required
/// max_early_data_size of u32::MAX (QUIC allows only that or 0).
pub fn accept_0rtt(mut c: rustls::ServerConfig, early_data: bool) -> rustls::ServerConfig {
    c.max_early_data_size = if early_data { u32::MAX } else { 0 };
    c
}
