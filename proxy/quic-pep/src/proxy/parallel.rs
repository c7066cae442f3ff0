//! The default handshake mode: the client is accepted at once; as soon as
//! its ClientHello has been processed (quinn's `handshake_data`, which
//! carries the ALPN the proxy chose from `--alpn`), the next hop is dialled
//! with that ALPN, and both handshakes run side by side. Streams the client
//! opens meanwhile wait in quinn's buffers (within flow control).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use quinn::{Connecting, Incoming, VarInt};

use super::Proxy;
use crate::close::{self, Ended};
use crate::hop::Upstream;
use crate::streams::Side;
use crate::tls;

impl Proxy {
    /// Default mode: both handshakes at once.
    pub(super) async fn parallel(
        &self,
        id: u64,
        incoming: Incoming,
    ) -> Result<(quinn::Connection, Upstream), String> {
        let (cfg, watch, cr) = self.server_config(id, self.cfg.alpn.clone(), None, &incoming)?;
        let mut connecting: Connecting = incoming
            .accept_with(Arc::new(cfg))
            .map_err(|e| format!("client side: {e}"))?;
        // Ready once the ClientHello is processed, long before the handshake ends.
        let hd = connecting
            .handshake_data()
            .await
            .map_err(|e| format!("client side: {}", Ended::from(&e).describe()))?;
        let alpn =
            tls::negotiated_alpn(Some(hd)).map_or_else(|| self.cfg.alpn.clone(), |a| vec![a]);
        let (near, far) = tokio::join!(connecting, self.hop.connect(alpn, id));
        if let Ok(n) = &near {
            self.accept.watch(n, cr);
        }
        match (near, far) {
            (Ok(n), Ok(f)) => {
                self.stats.accepted.fetch_add(1, Relaxed);
                self.log_handshake(&n, &watch);
                Ok((n, f))
            }
            (Ok(n), Err(ended)) => {
                self.stats.accepted.fetch_add(1, Relaxed);
                self.log_handshake(&n, &watch);
                self.refuse_near(&n, &ended);
                Err(format!("next hop: {}", ended.describe()))
            }
            (Err(e), far) => {
                let ended = Ended::from(&e);
                if let Ok(f) = far {
                    if let Some(c) = close::relay_close(&ended, Side::Near.name()) {
                        f.conn
                            .close(VarInt::from_u64(c.code).unwrap_or(VarInt::MAX), &c.reason);
                    }
                }
                Err(format!("client side: {}", ended.describe()))
            }
        }
    }

    fn refuse_near(&self, near: &quinn::Connection, ended: &Ended) {
        let c = close::relay_close(ended, Side::Far.name()).unwrap_or(close::Close {
            code: close::PEP_ERROR,
            reason: b"quic-pep: next hop unavailable".to_vec(),
        });
        near.close(VarInt::from_u64(c.code).unwrap_or(VarInt::MAX), &c.reason);
    }
}
