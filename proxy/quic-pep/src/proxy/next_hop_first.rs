//! `--h3`: the next hop first. The client's connection attempt (quinn's
//! `Incoming`) is held, unanswered, while the proxy connects to the next
//! hop offering `--alpn`; the client is then accepted with exactly the ALPN
//! the next hop chose and the next hop's stream limits
//! (initial_max_streams_bidi/uni), so HTTP/3's control and QPACK streams,
//! relayed unchanged, see the same limits end to end. quinn 0.11 does not
//! show a client's ClientHello before it is accepted (quinn issue #2024),
//! so the next hop is offered `--alpn` rather than the client's own list.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use quinn::{Incoming, VarInt};

use super::Proxy;
use crate::close::{self, Ended};
use crate::hop::Upstream;
use crate::streams::Side;

impl Proxy {
    /// `--h3`: the next hop first, then the client with its ALPN and limits.
    pub(super) async fn next_hop_first(
        &self,
        id: u64,
        incoming: Incoming,
    ) -> Result<(quinn::Connection, Upstream), String> {
        let far = match self.hop.connect(self.cfg.alpn.clone(), id).await {
            Ok(f) => f,
            Err(ended) => {
                // The client has had no answer yet: refusing tells it at once.
                self.refuse(incoming);
                return Err(format!("next hop: {}", ended.describe()));
            }
        };
        let alpn = far
            .alpn
            .clone()
            .map_or_else(|| self.cfg.alpn.clone(), |a| vec![a]);
        let (cfg, watch, cr) = self.server_config(id, alpn, Some(&far), &incoming)?;
        let near = match incoming.accept_with(Arc::new(cfg)) {
            Ok(c) => c.await,
            Err(e) => Err(e),
        };
        if let Ok(n) = &near {
            self.accept.watch(n, cr);
        }
        match near {
            Ok(n) => {
                self.stats.accepted.fetch_add(1, Relaxed);
                self.log_handshake(&n, &watch);
                Ok((n, far))
            }
            Err(e) => {
                let ended = Ended::from(&e);
                match close::relay_close(&ended, Side::Near.name()) {
                    Some(c) => far
                        .conn
                        .close(VarInt::from_u64(c.code).unwrap_or(VarInt::MAX), &c.reason),
                    None => far.conn.close(0u32.into(), b""),
                }
                Err(format!("client side: {}", ended.describe()))
            }
        }
    }
}
