//! The hop towards the next proxy or the origin: it owns the client-side
//! endpoint (its own UDP socket), the TLS that trusts only the next hop's
//! certificate, and the connect-side transport, and hands the relay an
//! `Upstream` per client connection.
//!
//! Today each client connection gets its own QUIC connection to the next
//! hop (what Kosek et al. measured). This module is where a later change
//! can keep one long-lived connection to the next hop and hand out a
//! share of it instead; `relay` sees only the `Upstream`.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use quinn::Connection;

use crate::close::Ended;
use crate::fec::socket::{endpoint as fec_endpoint, FecOnHop, FecSocket};
use crate::tls::{self, Capture};
use crate::tparams::{self, PeerLimits};
use crate::transport::{Conn, SideTransport};

/// The far side of one relayed connection.
pub struct Upstream {
    pub conn: Connection,
    /// The ALPN the next hop chose.
    pub alpn: Option<Vec<u8>>,
    /// The next hop's stream limits and windows (its transport parameters).
    pub limits: Option<PeerLimits>,
}

pub struct NextHop {
    endpoint: quinn::Endpoint,
    /// The one next hop and the name its certificate carries; None at a
    /// `--transparent` Proxy-GW, which dials each client connection's own
    /// destination (`connect_to`).
    pub fixed: Option<(SocketAddr, String)>,
    tls: rustls::ClientConfig,
    pub transport: SideTransport,
}

impl NextHop {
    /// Binds an ephemeral UDP port (any address of the family of the fixed
    /// next hop, else IPv4); the endpoint has no server configuration, so
    /// it accepts nothing. With `fec`, the code runs under it (Proxy-ST's
    /// side of the satellite hop); the FEC socket comes back for its
    /// counters.
    pub fn new(
        fixed: Option<(SocketAddr, String)>,
        tls: rustls::ClientConfig,
        transport: SideTransport,
        fec: Option<FecOnHop>,
    ) -> Result<(NextHop, Option<Arc<FecSocket>>), String> {
        let bind: SocketAddr = match &fixed {
            Some((a, _)) if a.is_ipv6() => (Ipv6Addr::UNSPECIFIED, 0).into(),
            _ => (Ipv4Addr::UNSPECIFIED, 0).into(),
        };
        let to = fixed
            .as_ref()
            .map_or("next hop".into(), |(a, _)| format!("next hop {a}"));
        let (endpoint, fec) = match fec {
            None => (quinn::Endpoint::client(bind), None),
            Some(on_hop) => {
                let socket = std::net::UdpSocket::bind(bind)
                    .map_err(|e| format!("{to}: cannot bind a UDP socket: {e}"))?;
                let (e, f) = fec_endpoint(socket, None, on_hop)?;
                (Ok(e), Some(f))
            }
        };
        let endpoint = endpoint.map_err(|e| format!("{to}: cannot bind a UDP socket: {e}"))?;
        Ok((
            NextHop {
                endpoint,
                fixed,
                tls,
                transport,
            },
            fec,
        ))
    }

    fn fixed(&self) -> Result<(SocketAddr, &str), Ended> {
        self.fixed
            .as_ref()
            .map(|(a, n)| (*a, n.as_str()))
            .ok_or_else(|| Ended::Failed("no --next-hop".into()))
    }

    /// A connection to the next hop for client connection `conn`, offering
    /// `alpn`. Errors are how the attempt ended.
    pub async fn connect(&self, alpn: Vec<Vec<u8>>, conn: u64) -> Result<Upstream, Ended> {
        let (addr, name) = self.fixed()?;
        self.connect_to(addr, name, alpn, conn).await
    }

    /// As `connect`, to `addr` with the server name `name` (an IP address:
    /// no SNI).
    pub async fn connect_to(
        &self,
        addr: SocketAddr,
        name: &str,
        alpn: Vec<Vec<u8>>,
        conn: u64,
    ) -> Result<Upstream, Ended> {
        let t = self
            .transport
            .config(Conn::Client(conn))
            .map_err(Ended::Failed)?;
        self.connect_with(addr, name, alpn, t).await
    }

    /// The standing tunnel to Proxy-GW (`--tunnel`), its `dial`th dial:
    /// the tunnel's ALPN and transport (`tunnel::transport`).
    pub async fn connect_tunnel(&self, dial: u64) -> Result<Connection, Ended> {
        let (addr, name) = self.fixed()?;
        let (t, _) =
            crate::tunnel::transport(&self.transport, true, dial, None).map_err(Ended::Failed)?;
        Ok(self
            .connect_with(addr, name, vec![crate::tunnel::ALPN.to_vec()], t)
            .await?
            .conn)
    }

    async fn connect_with(
        &self,
        addr: SocketAddr,
        name: &str,
        alpn: Vec<Vec<u8>>,
        transport: quinn::TransportConfig,
    ) -> Result<Upstream, Ended> {
        let mut tls = self.tls.clone();
        tls.alpn_protocols = alpn;
        let (capture, params) = Capture::new(tls).map_err(Ended::Failed)?;
        let mut cfg = quinn::ClientConfig::new(Arc::new(capture));
        cfg.transport_config(Arc::new(transport));
        let connecting = self
            .endpoint
            .connect_with(cfg, addr, name)
            .map_err(|e| Ended::Failed(format!("connect: {e}")))?;
        let c = connecting.await.map_err(|e| Ended::from(&e))?;
        Ok(Upstream {
            alpn: tls::negotiated_alpn(c.handshake_data()),
            limits: params.get().and_then(|b| tparams::parse(b).ok()),
            conn: c,
        })
    }

    /// Closes every connection to the next hop.
    pub fn close(&self, code: u32, reason: &[u8]) {
        self.endpoint.close(code.into(), reason);
    }

    pub async fn wait_idle(&self) {
        self.endpoint.wait_idle().await;
    }
}
