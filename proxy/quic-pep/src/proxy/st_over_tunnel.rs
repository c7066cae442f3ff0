//! Proxy-ST with `--tunnel`: each client connection is accepted at once
//! and carried over the standing tunnel (`tunnel::Tunnel::carry_client`),
//! held for a while if the tunnel is being dialled (`tunnel::keep_up`).
//! With `--transparent`, where the client meant to go
//! (`transparent::destination`) and the name it asked for go to Proxy-GW
//! in its Open.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Instant;

use quinn::Incoming;

use super::Proxy;
use crate::close::Ended;
use crate::tls;
use crate::transparent;
use crate::tunnel;
use crate::tunnel::frame::Target;

impl Proxy {
    /// Proxy-ST with `--tunnel`: the client is accepted at once and
    /// carried over the standing tunnel (held for a while if the tunnel is
    /// being dialled).
    pub(super) async fn over_tunnel(&self, id: u64, incoming: Incoming) -> String {
        let remote = incoming.remote_address();
        let started = Instant::now();
        // `--transparent`: where the client meant to go
        let dst = match &self.cfg.transparent {
            Some(tr) => {
                match transparent::destination(tr.to, incoming.local_ip(), self.cfg.listen) {
                    Ok(d) => Some(d),
                    Err(why) => {
                        self.stats.failed.fetch_add(1, Relaxed);
                        self.refuse(incoming);
                        return format!("conn {id} from {remote} refused: {why}");
                    }
                }
            }
            None => None,
        };
        let t = match tunnel::keep_up::wait_up(self.tunnel.subscribe()).await {
            Some(t) => t,
            None => {
                self.stats.failed.fetch_add(1, Relaxed);
                self.refuse(incoming);
                return format!("conn {id} from {remote} failed: the tunnel is down");
            }
        };
        // A client whose early data was accepted is carried at once, its
        // 0-RTT requests with it (and counted as such); the handshake's
        // line and Careful Resume's watch wait for the handshake's end.
        // Any other is carried once its handshake is done.
        let near = match self.server_config(id, self.cfg.alpn.clone(), None, &incoming) {
            Ok((cfg, watch, cr)) => match incoming.accept_with(Arc::new(cfg)) {
                Ok(c) if watch.early_accepted() => match c.into_0rtt() {
                    Ok((n, done)) => Ok((n, watch, cr, Some(done))),
                    Err(_) => Err("0-RTT keys gone".to_string()),
                },
                Ok(c) => c
                    .await
                    .map_err(|e| Ended::from(&e).describe())
                    .map(|n| (n, watch, cr, None)),
                Err(e) => Err(Ended::from(&e).describe()),
            },
            Err(e) => Err(e),
        };
        let (near, watch, handshake_done) = match near {
            Ok((n, watch, cr, None)) => {
                self.accept.watch(&n, cr);
                self.log_handshake(&n, &watch);
                (n, watch, None)
            }
            Ok((n, watch, cr, Some(done))) => {
                let n2 = n.clone();
                let w2 = watch.clone();
                let when_done = async move {
                    done.await;
                    if w2.done() {
                        self.accept.watch(&n2, cr);
                        self.log_handshake(&n2, &w2);
                    }
                };
                (n, watch, Some(when_done))
            }
            Err(why) => {
                self.stats.failed.fetch_add(1, Relaxed);
                return format!("conn {id} from {remote} failed: client side: {why}");
            }
        };
        let alpn = tls::negotiated_alpn(near.handshake_data()).unwrap_or_default();
        let to = dst.map(|addr| Target {
            addr,
            name: tls::server_name(near.handshake_data()).unwrap_or_default(),
        });
        self.stats.accepted.fetch_add(1, Relaxed);
        self.stats.relayed.fetch_add(1, Relaxed);
        if let Some(t) = &to {
            self.stats
                .destinations
                .count(std::net::SocketAddr::V4(t.addr), &t.name);
        }
        self.log.line(&format!(
            "conn {id} carried over the tunnel from {remote}{} alpn={} setup_ms={}",
            to.as_ref().map_or(String::new(), |t| format!(
                " to {} name={}",
                t.addr,
                tunnel::or_dash(&t.name)
            )),
            String::from_utf8_lossy(&alpn),
            started.elapsed().as_millis()
        ));
        let carried = t.carry_client(id, near, alpn, to, Some(watch));
        let out = match handshake_done {
            Some(done) => tokio::join!(carried, done).0,
            None => carried.await,
        };
        self.stats.closed.fetch_add(1, Relaxed);
        format!("conn {id} {}", out.describe())
    }
}
