//! The I/O edge: the TPROXY listener, the accept loop, one task per
//! connection (onward connect, relay, log line), signals and the stats file.

use std::net::{SocketAddr, SocketAddrV4};
use std::os::fd::AsFd;
use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use satbench_transport::net::v4;
use satbench_transport::process::{say_ready, Shutdown};
use satbench_transport::time::rfc3339_millis;
use tokio::net::{TcpSocket, TcpStream};
use tokio::signal::unix::{signal, SignalKind};

use crate::cli::{self, Options, SideOptions};
use crate::policy::{self, CapNotice, Refusal};
use crate::relay::{self, PumpConfig, Totals};
use crate::stats::{ConnLine, End, Stats};
use crate::sys;

const BACKLOG: u32 = 1024;
// Per connection: two sockets and two pipes.
const FDS_PER_CONN: u64 = 6;

struct Ctx {
    o: Options,
    stats: Stats,
    started: Instant,
}

impl Ctx {
    fn log(&self, msg: &str) {
        eprintln!(
            "[{}] tcp-pep {}: {msg}",
            rfc3339_millis(SystemTime::now()),
            self.o.name
        );
    }

    fn write_stats(&self) -> Result<(), String> {
        let Some(path) = &self.o.stats else {
            return Ok(());
        };
        let v = self
            .stats
            .snapshot(&self.o.name, self.o.listen, self.started.elapsed());
        write_atomically(path, &(v.to_string() + "\n"))
            .map_err(|e| format!("cannot write stats {}: {e}", path.display()))
    }
}

// A reader never sees half a file.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Applies a side's congestion control and buffers to a socket.
fn configure(fd: impl AsFd, side: &SideOptions, what: &str) -> Result<(), String> {
    let fd = fd.as_fd();
    if let Some(cc) = &side.cc {
        sys::set_congestion(fd, cc).map_err(|e| format!("{what}: TCP_CONGESTION {cc}: {e}"))?;
    }
    sys::set_buffers(fd, side.sndbuf, side.rcvbuf)
        .map_err(|e| format!("{what}: socket buffers: {e}"))
}

fn listener(o: &Options) -> Result<tokio::net::TcpListener, String> {
    let what = format!("cannot listen on {}", o.listen);
    let s = TcpSocket::new_v4().map_err(|e| format!("{what}: {e}"))?;
    s.set_reuseaddr(true)
        .map_err(|e| format!("{what}: SO_REUSEADDR: {e}"))?;
    if o.transparent {
        sys::set_transparent(&s)
            .map_err(|e| format!("{what}: IP_TRANSPARENT: {e} (needs CAP_NET_ADMIN)"))?;
    }
    // Accepted sockets inherit these; the receive buffer must be set before
    // the handshake, which picks the window scale from it.
    configure(&s, &o.accept, &what)?;
    s.bind(SocketAddr::V4(o.listen))
        .map_err(|e| format!("{what}: {e}"))?;
    s.listen(BACKLOG).map_err(|e| format!("{what}: {e}"))
}

pub async fn run(o: Options) -> Result<(), String> {
    let avail = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .unwrap_or_default();
    cli::check_cc(&o, &avail)?;
    let listener = listener(&o)?;
    let ctx = Arc::new(Ctx {
        o,
        stats: Stats::default(),
        started: Instant::now(),
    });
    match sys::raise_nofile() {
        Ok(n) if n < ctx.o.max_conns as u64 * FDS_PER_CONN + 64 => ctx.log(&format!(
            "open-files limit {n} is below what --max-conns {} needs ({}); some connections may be refused",
            ctx.o.max_conns,
            ctx.o.max_conns as u64 * FDS_PER_CONN + 64
        )),
        Ok(_) => {}
        Err(e) => ctx.log(&format!("cannot read the open-files limit: {e}")),
    }
    ctx.write_stats()?; // a bad --stats path fails now, not at exit

    // Handlers before `ready`: a signal that comes right after must not kill us.
    let shutdown = Shutdown::listen()?;
    let mut usr1 =
        signal(SignalKind::user_defined1()).map_err(|e| format!("signal handler: {e}"))?;
    say_ready();
    ctx.log(&format!(
        "listening on {} (accept side {}, connect side {}, {})",
        ctx.o.listen,
        side_text(&ctx.o.accept),
        side_text(&ctx.o.connect),
        if ctx.o.splice { "splice" } else { "copy" }
    ));
    let mut cap = CapNotice::default();
    let mut last_accept_error: Option<Instant> = None;
    let stop = shutdown.requested();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, peer)) => on_accept(&ctx, &mut cap, stream, peer),
                Err(e) => {
                    // EMFILE and the like: say so at most once a second, back off, go on.
                    if last_accept_error.is_none_or(|t| t.elapsed() > Duration::from_secs(1)) {
                        ctx.log(&format!("accept: {e}"));
                        last_accept_error = Some(Instant::now());
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            _ = usr1.recv() => {
                if let Err(e) = ctx.write_stats() {
                    ctx.log(&e);
                }
            }
            _ = &mut stop => break,
        }
    }
    let s = ctx
        .stats
        .snapshot(&ctx.o.name, ctx.o.listen, ctx.started.elapsed());
    ctx.log(&format!(
        "exiting: relayed {} connections ({} still open), {} bytes up, {} bytes down",
        s["connections"], s["active"], s["bytes"]["up"], s["bytes"]["down"]
    ));
    ctx.write_stats()
}

fn side_text(s: &SideOptions) -> String {
    let mut parts = vec![format!("cc {}", s.cc.as_deref().unwrap_or("default"))];
    if let Some(b) = s.sndbuf {
        parts.push(format!("sndbuf {b}"));
    }
    if let Some(b) = s.rcvbuf {
        parts.push(format!("rcvbuf {b}"));
    }
    parts.join(" ")
}

fn on_accept(ctx: &Arc<Ctx>, cap: &mut CapNotice, stream: TcpStream, peer: SocketAddr) {
    ctx.stats.accepted.fetch_add(1, Relaxed);
    // With TPROXY the accepted socket's local address is where the client
    // meant to go.
    let (Some(src), Some(dst)) = (v4(peer), stream.local_addr().ok().and_then(v4)) else {
        return;
    };
    let active = ctx.stats.active.load(Relaxed) as usize;
    if let Err(r) = policy::admit(dst, ctx.o.listen, &ctx.o.allow_dst, active, ctx.o.max_conns) {
        match r {
            Refusal::Cap => {
                ctx.stats.refused_cap.fetch_add(1, Relaxed);
                if let Some(msg) = cap.refused(ctx.o.max_conns) {
                    ctx.log(&msg);
                }
            }
            Refusal::Loop => {
                ctx.stats.refused_loop.fetch_add(1, Relaxed);
                ctx.log(&format!("refused {src} -> {dst}: {r}"));
            }
            Refusal::NotAllowed => {
                ctx.stats.refused_dst.fetch_add(1, Relaxed);
                ctx.log(&format!("refused {src} -> {dst}: {r} (--allow-dst)"));
            }
        }
        let _ = sys::set_linger_zero(&stream);
        return;
    }
    if let Some(msg) = cap.admitted() {
        ctx.log(&msg);
    }
    ctx.stats.begin();
    let ctx = ctx.clone();
    tokio::spawn(async move {
        let t0 = Instant::now();
        let (end, up, down, detail) = serve(&ctx, stream, dst).await;
        ctx.stats.end(end);
        if !ctx.o.quiet || end == End::Error {
            ctx.log(
                &ConnLine {
                    src,
                    dst,
                    up,
                    down,
                    duration: t0.elapsed(),
                    end,
                    detail,
                }
                .to_string(),
            );
        }
    });
}

async fn connect(ctx: &Ctx, dst: SocketAddrV4) -> Result<TcpStream, String> {
    let s = TcpSocket::new_v4().map_err(|e| e.to_string())?;
    configure(&s, &ctx.o.connect, "onward socket")?;
    match tokio::time::timeout(ctx.o.connect_timeout, s.connect(SocketAddr::V4(dst))).await {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(_) => Err(format!(
            "no answer within {} ms",
            ctx.o.connect_timeout.as_millis()
        )),
    }
}

/// One connection, start to end: (how it ended, bytes up, bytes down, why).
async fn serve(ctx: &Ctx, client: TcpStream, dst: SocketAddrV4) -> (End, u64, u64, Option<String>) {
    let _ = client.set_nodelay(true);
    let server = match connect(ctx, dst).await {
        Ok(s) => s,
        Err(e) => {
            // The client's handshake is already done (that is split TCP):
            // a reset is the nearest thing to the refusal it would have seen.
            let _ = sys::set_linger_zero(&client);
            return (End::ConnectFailed, 0, 0, Some(e));
        }
    };
    ctx.stats.relayed.fetch_add(1, Relaxed);
    // Relay promptly what arrives: the end hosts did their own coalescing.
    let _ = server.set_nodelay(true);
    let cfg = PumpConfig {
        buf_bytes: ctx.o.pipe_bytes,
        splice: ctx.o.splice,
        idle_timeout: ctx.o.idle_timeout,
    };
    let s = &ctx.stats;
    let o = relay::relay(
        &client,
        &server,
        &cfg,
        Totals {
            up: &s.bytes_up,
            down: &s.bytes_down,
            fallbacks: &s.splice_fallbacks,
        },
    )
    .await;
    (o.end, o.up, o.down, o.detail)
}
