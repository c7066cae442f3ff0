//! One side's QUIC transport: the `--accept-side` / `--connect-side`
//! options, the windows `limits::fit` left them, and the per-connection
//! qlog file when `--qlog-dir` is set.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use quinn::{TransportConfig, VarInt};
use satbench_transport::careful_resume::{Resumer, Session};
use satbench_transport::quic::{windows, QuicOptions, Windows};

use crate::streams::Side;

/// Where qlogs go: `DIR/LABEL-CONN-SIDE.sqlog`, a tunnel's
/// `DIR/LABEL-tunnel-N-SIDE.sqlog`.
#[derive(Clone, Debug)]
pub struct QlogDir {
    pub dir: PathBuf,
    pub label: String,
}

/// Which connection a transport (and its qlog) is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conn {
    /// Client connection number N (a spare's number, `FIRST_SPARE` on).
    Client(u64),
    /// The standing tunnel's Nth dial (ST) or Nth attempt accepted (GW):
    /// each its own file, so a re-dial keeps the last tunnel's.
    Tunnel(u64),
}

impl QlogDir {
    pub fn file(&self, conn: Conn, side: Side) -> PathBuf {
        let s = match side {
            Side::Near => "client",
            Side::Far => "nexthop",
        };
        let l = &self.label;
        self.dir.join(match conn {
            Conn::Client(n) => format!("{l}-{n:05}-{s}.sqlog"),
            Conn::Tunnel(n) => format!("{l}-tunnel-{n:03}-{s}.sqlog"),
        })
    }
}

#[derive(Clone, Debug)]
pub struct SideTransport {
    pub side: Side,
    pub opts: QuicOptions,
    pub windows: Windows,
    pub qlog: Option<QlogDir>,
    /// `careful-resume=on` (an accepting side): the connections this side
    /// accepts start from what the peer's previous one measured.
    pub resumer: Option<Arc<Resumer>>,
    /// `--fec` on this side's socket: how many later packets may be acked
    /// before a packet is lost (RFC 9002's kPacketThreshold, 3 by default).
    /// A lost datagram comes back rebuilt only after its window's repair,
    /// up to a window's packets late: declared lost sooner, it would cost a
    /// retransmission and a halved window that the code had made needless.
    pub reorder_packets: Option<u32>,
}

/// Cheap to send: a few numbers, e.g. `cc=newreno iw=100 window=40625000`.
pub fn describe(opts: &QuicOptions, w: &Windows) -> String {
    let mut s = format!(
        "cc={:?} iw={} window={} send_window={}",
        opts.cc, opts.initial_window_packets, w.connection_receive, w.send
    )
    .to_lowercase();
    if opts.ack_frequency {
        s.push_str(&format!(
            " ack_frequency=threshold:{:?},max_delay_ms:{:?}",
            opts.ack_eliciting_threshold, opts.max_ack_delay_ms
        ));
    }
    s.push_str(&format!(" idle_timeout_ms={}", opts.idle_timeout_ms));
    if opts.careful_resume {
        s.push_str(" careful_resume=on");
    }
    s
}

impl SideTransport {
    pub fn new(side: Side, opts: QuicOptions) -> SideTransport {
        SideTransport {
            side,
            windows: windows(opts.bdp_bytes),
            opts,
            qlog: None,
            resumer: None,
            reorder_packets: None,
        }
    }

    pub fn describe(&self) -> String {
        describe(&self.opts, &self.windows)
    }

    /// The transport of connection `conn` on this side.
    pub fn config(&self, conn: Conn) -> Result<TransportConfig, String> {
        let mut t = self.opts.transport_config();
        let w = &self.windows;
        let v = |x: u64| VarInt::from_u64(x).unwrap_or(VarInt::MAX);
        t.stream_receive_window(v(w.stream_receive));
        t.receive_window(v(w.connection_receive));
        t.send_window(w.send);
        if let Some(n) = self.reorder_packets {
            t.packet_threshold(n);
        }
        if let Some(q) = &self.qlog {
            self.add_qlog(&mut t, q, conn)?;
        }
        Ok(t)
    }

    /// `config(conn)` for a connection accepted from `remote` on our
    /// `local` address: with Careful Resume's controller when this side
    /// has it, and its session for `watch`.
    pub fn accepted_config(
        &self,
        conn: Conn,
        remote: SocketAddr,
        local: Option<IpAddr>,
    ) -> Result<(TransportConfig, Option<Session>), String> {
        let mut t = self.config(conn)?;
        let session = self
            .resumer
            .as_ref()
            .map(|r| r.attach(&mut t, remote, local));
        Ok((t, session))
    }

    /// Careful Resume logs the accepted connection `conn` and saves what it
    /// measured (nothing without a session).
    pub fn watch(&self, conn: &quinn::Connection, session: Option<Session>) {
        if let (Some(r), Some(s)) = (&self.resumer, session) {
            r.watch(conn, s);
        }
    }

    #[cfg(feature = "qlog")]
    fn add_qlog(&self, t: &mut TransportConfig, q: &QlogDir, conn: Conn) -> Result<(), String> {
        let path = q.file(conn, self.side);
        let what = match conn {
            Conn::Client(n) => format!("connection {n}"),
            Conn::Tunnel(n) => format!("tunnel {n}"),
        };
        let f = std::fs::File::create(&path)
            .map_err(|e| format!("--qlog-dir {}: {e}", path.display()))?;
        let mut c = quinn::QlogConfig::default();
        c.writer(Box::new(std::io::BufWriter::with_capacity(64 * 1024, f)))
            .title(Some(format!("{} {what} ({})", q.label, self.side.name())));
        t.qlog_stream(c.into_stream());
        Ok(())
    }

    #[cfg(not(feature = "qlog"))]
    fn add_qlog(&self, _: &mut TransportConfig, _: &QlogDir, _: Conn) -> Result<(), String> {
        Err("--qlog-dir: this quic-pep was built without the qlog feature".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use satbench_transport::quic::Cc;

    #[test]
    fn qlog_names_say_connection_and_side() {
        let q = QlogDir {
            dir: "/out".into(),
            label: "st".into(),
        };
        assert_eq!(
            q.file(Conn::Client(7), Side::Near),
            PathBuf::from("/out/st-00007-client.sqlog")
        );
        assert_eq!(
            q.file(Conn::Client(7), Side::Far),
            PathBuf::from("/out/st-00007-nexthop.sqlog")
        );
        // each dial of the tunnel its own file
        assert_eq!(
            q.file(Conn::Tunnel(2), Side::Far),
            PathBuf::from("/out/st-tunnel-002-nexthop.sqlog")
        );
        assert_ne!(
            q.file(Conn::Tunnel(1), Side::Far),
            q.file(Conn::Tunnel(2), Side::Far)
        );
    }

    #[test]
    fn windows_come_from_the_bdp_and_reach_the_config() {
        let opts = QuicOptions {
            cc: Cc::NewReno,
            initial_window_packets: 100,
            bdp_bytes: 1_000_000,
            ..Default::default()
        };
        let mut s = SideTransport::new(Side::Far, opts);
        assert_eq!(s.windows.send, 2_000_000);
        s.windows.send = 123_456;
        let t = format!("{:?}", s.config(Conn::Client(1)).unwrap());
        assert!(t.contains("123456"), "{t}");
        assert!(t.contains("2000000"), "{t}");
        assert_eq!(
            s.describe(),
            "cc=newreno iw=100 window=2000000 send_window=123456 idle_timeout_ms=30000"
        );
    }

    #[cfg(feature = "qlog")]
    #[test]
    fn qlog_file_is_created_per_connection() {
        let dir = std::env::temp_dir().join(format!("quic-pep-qlog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut s = SideTransport::new(Side::Near, QuicOptions::default());
        s.qlog = Some(QlogDir {
            dir: dir.clone(),
            label: "gw".into(),
        });
        s.config(Conn::Client(3)).unwrap();
        assert!(dir.join("gw-00003-client.sqlog").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
