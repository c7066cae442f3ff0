//! Proxy-GW with `--tunnel`: a tunnel from Proxy-ST, served until it
//! closes. Each client connection it carries gets its own connection to the
//! origin (`tunnel::origin`, with `--spare`); each TCP stream of QPEP's,
//! its own TCP connection (`qpep::Gw`, with `--qpep-spares`).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use quinn::Incoming;

use super::Proxy;
use crate::close::Ended;
use crate::qpep;
use crate::spares::Spares;
use crate::tls;
use crate::tunnel::origin::Origins;
use crate::tunnel::{self, Tunnel};

impl Proxy {
    /// Proxy-GW with `--tunnel`: a tunnel from Proxy-ST (the `n`th attempt
    /// this proxy takes), served until it closes; each client connection it
    /// carries gets its own origin connection.
    pub(super) async fn tunnel_from(self: &Arc<Self>, n: u64, incoming: Incoming) -> String {
        let remote = incoming.remote_address();
        let started = Instant::now();
        let mut cfg = quinn::ServerConfig::with_crypto(tls::with_alpn(
            &self.server_tls,
            vec![tunnel::ALPN.to_vec()],
        ));
        // a re-dialled tunnel resumes from the last one's path (careful-resume=on)
        let peer = (remote, incoming.local_ip());
        let cr = match tunnel::transport(&self.accept, false, n, Some(peer)) {
            Ok((t, cr)) => {
                cfg.transport_config(Arc::new(t));
                cr
            }
            Err(e) => return format!("tunnel from {remote} failed: {e}"),
        };
        let conn = match incoming.accept_with(Arc::new(cfg)) {
            Ok(c) => c.await,
            Err(e) => Err(e),
        };
        if let Ok(c) = &conn {
            self.accept.watch(c, cr);
        }
        let conn = match conn {
            Ok(c) => c,
            Err(e) => {
                self.stats.failed.fetch_add(1, Relaxed);
                return format!(
                    "tunnel from {remote} failed: {}",
                    Ended::from(&e).describe()
                );
            }
        };
        self.stats.accepted.fetch_add(1, Relaxed);
        let t = match Tunnel::new(
            conn.clone(),
            tunnel::End::Gw,
            self.stats.clone(),
            self.log.clone(),
        )
        .await
        {
            Ok(t) => t,
            Err(e) => return format!("tunnel from {remote} failed: {e}"),
        };
        self.stats.tunnel.up(&conn, started.elapsed());
        self.log.line(&format!("tunnel from {remote} up"));
        // each client connection's way to the origin (with `--spare`, the first
        // spare is dialled now)
        let origins = Origins::new(
            self.hop.clone(),
            &self.cfg,
            self.admission.clone(),
            self.stats.clone(),
        );
        let gw = Arc::new(qpep::Gw {
            allow: self.cfg.qpep.allow.clone(),
            connect_cc: self.cfg.qpep.connect_cc.clone(),
            spares: Mutex::new(Spares::new(qpep::spare_policy(self.cfg.qpep.spares))),
            stats: self.stats.clone(),
            log: self.log.clone(),
        });
        let tcp: tunnel::TcpHandler = Arc::new(move |dst, send, recv| {
            let gw = gw.clone();
            Box::pin(async move { gw.carry(dst, send, recv).await })
        });
        t.serve(tunnel::Handlers {
            origins: Some(Arc::new(origins)),
            tcp: Some(tcp),
        })
        .await;
        self.stats.tunnel.down();
        format!(
            "tunnel from {remote} closed ({})",
            conn.close_reason()
                .map_or("-".into(), |e| Ended::from(&e).describe())
        )
    }
}
