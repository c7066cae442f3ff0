//! Proxy-GW's connection to the origin for each client connection the
//! tunnel carries. On Proxy-ST's Open it takes the spare if one suits
//! (`--spare`), else dials `--next-hop`, or with `--transparent` the
//! destination the Open names (`transparent::dial_target`); then it relays
//! (`Tunnel::carry`) and logs the connection, as `proxy` does without the
//! tunnel.
//!
//! The spare is one origin connection dialled ahead of need, that the next
//! client connection takes if its ALPN matches and it is still open, so its
//! requests do not wait for the ground hop's handshake: first with the
//! first `--alpn` when the tunnel comes up, then again each time one is
//! taken (`crate::spares`, as for QPEP's TCP spares). A spare carries
//! nothing until it is taken, so stream IDs and HTTP/3's one control
//! stream per connection stay as they are; an origin connection is never
//! shared by two client connections.
//!
//! Each client connection takes one of the proxy's `--max-connections`
//! places (`limits::Admission`, shared with the tunnels themselves) before
//! its origin connection is dialled; beyond the cap it is refused as the
//! listener refuses a connection: counted in `refused`, one `cap:` line,
//! and its Close goes back to Proxy-ST. The spare takes no place: it
//! carries nothing until a client connection that has one takes it.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use quinn::Connection;
use tokio::task::JoinHandle;

use super::frame::{Message, Target};
use super::{or_dash, Client, Tunnel};
use crate::cli::{Config, Transparent};
use crate::close::{self, Close, Ended, PEP_ERROR};
use crate::hop::NextHop;
use crate::limits::Admission;
use crate::spares::{Policy, Spares};
use crate::stats::Stats;
use crate::streams::Side;
use crate::transparent;

/// Spares are numbered apart from client connections in qlog names.
pub const FIRST_SPARE: u64 = 1_000_001;

/// `--spare`: one spare, for the ALPN the last client connection asked
/// for (another ALPN's gives way), of any age.
const SPARE: Policy = Policy {
    per_key: 1,
    max_keys: 1,
    max_age: None,
};

/// Where Proxy-GW's origin connections go.
struct Dial {
    hop: Arc<NextHop>,
    transparent: Option<Transparent>,
    /// Proxy-GW's own address, which it never dials.
    own: SocketAddr,
}

impl Dial {
    /// The origin connection of one client connection: the destination it
    /// names with `--transparent`, else `--next-hop`.
    async fn connect(
        &self,
        id: u64,
        alpn: Vec<u8>,
        to: Option<Target>,
    ) -> Result<Connection, Ended> {
        let target = transparent::dial_target(self.transparent.as_ref(), to.as_ref(), self.own)
            .map_err(Ended::Failed)?;
        let up = match target {
            Some((addr, name)) => self.hop.connect_to(addr, &name, vec![alpn], id).await,
            None => self.hop.connect(vec![alpn], id).await,
        };
        up.map(|u| u.conn)
    }
}

/// A spare being dialled (or dialled): dropping it gives it up.
struct Dialling(JoinHandle<Result<Connection, Ended>>);

impl Drop for Dialling {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Proxy-GW's way to the origin, for one tunnel.
pub struct Origins {
    dial: Arc<Dial>,
    /// `--spare`, keyed by ALPN.
    spare: Option<Mutex<Spares<Vec<u8>, Dialling>>>,
    /// Spares dialled, numbered from FIRST_SPARE (their qlog names).
    next_spare: AtomicU64,
    /// The proxy's `--max-connections` places.
    admission: Arc<Admission>,
    stats: Arc<Stats>,
}

impl Origins {
    /// With `--spare`, starts dialling the first spare, with the ALPN
    /// clients are most likely to agree on. Must run inside a tokio runtime.
    pub fn new(
        hop: Arc<NextHop>,
        cfg: &Config,
        admission: Arc<Admission>,
        stats: Arc<Stats>,
    ) -> Origins {
        let first = cfg.alpn.first().filter(|_| cfg.spare);
        let o = Origins {
            dial: Arc::new(Dial {
                hop,
                transparent: cfg.transparent.clone(),
                own: cfg.listen,
            }),
            spare: first.map(|_| Mutex::new(Spares::new(SPARE))),
            next_spare: AtomicU64::new(FIRST_SPARE),
            admission,
            stats,
        };
        if let Some(alpn) = first {
            o.prepare(alpn.clone());
        }
        o
    }

    /// Dials a spare for `alpn` unless one is there, replacing any other.
    fn prepare(&self, alpn: Vec<u8>) {
        let Some(spare) = &self.spare else { return };
        let mut spare = spare.lock().unwrap();
        let now = Instant::now();
        for _ in 0..spare.to_dial(&alpn, now) {
            let n = self.next_spare.fetch_add(1, Relaxed);
            let (dial, a) = (self.dial.clone(), alpn.clone());
            let h = tokio::spawn(async move { dial.connect(n, a, None).await });
            spare.dialled(&alpn, Some(Dialling(h)), now);
        }
    }

    /// An origin connection for client connection `id`: the spare if it
    /// suits (same ALPN, still open), else a fresh one. With `--spare`, the
    /// next spare is being dialled when this returns.
    pub async fn connect(
        &self,
        id: u64,
        alpn: Vec<u8>,
        to: Option<Target>,
    ) -> Result<Connection, Ended> {
        let spare = match (&self.spare, &to) {
            (Some(spare), None) => spare,
            // no `--spare`; or a destination, which `Dial::connect` refuses
            // then: the spare is the fixed next hop's
            _ => return self.dial.connect(id, alpn, to).await,
        };
        let ready = spare.lock().unwrap().take(&alpn, Instant::now());
        self.prepare(alpn.clone());
        if let Some(mut h) = ready {
            if let Ok(Ok(c)) = (&mut h.0).await {
                if c.close_reason().is_none() {
                    self.stats.tunnel.spares_used.fetch_add(1, Relaxed);
                    return Ok(c);
                }
            }
        }
        self.dial.connect(id, alpn, None).await
    }
}

impl Tunnel {
    /// Proxy-GW: the origin connection of client connection `c`, then the
    /// relay; refused beyond `--max-connections`.
    pub(super) async fn origin(
        self: Arc<Self>,
        c: Arc<Client>,
        origins: Arc<Origins>,
        alpn: Vec<u8>,
        to: Option<Target>,
    ) {
        let Some(ticket) = origins.admission.try_admit() else {
            let max = origins.admission.max();
            self.stats.refused.fetch_add(1, Relaxed);
            self.log.line(&format!(
                "cap: --max-connections {max} reached, refusing conn {}",
                c.id
            ));
            let reason = format!("quic-pep: Proxy-GW: --max-connections {max} reached");
            return self.refuse_client(&c, PEP_ERROR, reason.into_bytes()).await;
        };
        self.stats.active.fetch_add(1, Relaxed);
        let line = self.connect_and_carry(&c, &origins, alpn, to).await;
        // Counters first, then the log line, as `proxy` does.
        self.stats.active.fetch_sub(1, Relaxed);
        drop(ticket);
        if let Some(line) = line {
            self.log.line(&line);
        }
    }

    /// The origin connection of an admitted client connection, then the
    /// relay; the line that says how it ended (None: the client left first).
    async fn connect_and_carry(
        self: &Arc<Self>,
        c: &Arc<Client>,
        origins: &Origins,
        alpn: Vec<u8>,
        to: Option<Target>,
    ) -> Option<String> {
        let started = Instant::now();
        self.stats.tunnel.clients.fetch_add(1, Relaxed);
        let mut remote = c.remote_close.subscribe();
        let name = to.as_ref().map(|t| t.name.clone());
        let conn = tokio::select! {
            r = origins.connect(c.id, alpn, to) => r,
            _ = async { remote.wait_for(|v| v.is_some()).await.is_ok() } => {
                self.forget(c);
                return None;
            }
        };
        match conn {
            Ok(origin) => {
                self.stats.relayed.fetch_add(1, Relaxed);
                if let Some(name) = &name {
                    self.stats.destinations.count(origin.remote_address(), name);
                }
                self.log.line(&format!(
                    "conn {} relayed over the tunnel to {}{} setup_ms={}",
                    c.id,
                    origin.remote_address(),
                    name.map_or(String::new(), |n| format!(" name={}", or_dash(&n))),
                    started.elapsed().as_millis()
                ));
                let out = self.carry(c.clone(), origin, None).await;
                self.stats.closed.fetch_add(1, Relaxed);
                Some(format!("conn {} {}", c.id, out.describe()))
            }
            Err(ended) => {
                self.stats.failed.fetch_add(1, Relaxed);
                let cl = close::relay_close(&ended, Side::Far.name()).unwrap_or(Close {
                    code: PEP_ERROR,
                    reason: b"quic-pep: next hop unavailable".to_vec(),
                });
                self.refuse_client(c, cl.code, cl.reason).await;
                Some(format!(
                    "conn {} failed: next hop: {}",
                    c.id,
                    ended.describe()
                ))
            }
        }
    }

    /// Ends client connection `c` that gets no origin connection: Proxy-ST
    /// closes the client with `code` and `reason`.
    async fn refuse_client(&self, c: &Client, code: u64, reason: Vec<u8>) {
        self.send_control(&Message::Close {
            conn: c.id,
            code,
            reason,
        })
        .await;
        self.forget(c);
    }
}
