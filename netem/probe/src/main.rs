//! `satprobe`: see README.md. Sockets are opened inside the named network
//! namespaces (with `netns::within`), then driven by threads of this one
//! process, which share one monotonic clock: one-way delays need no clock
//! synchronisation.

mod sys;

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use rustix::net::sockopt::{self, Timeout};
use rustix::net::{AddressFamily, SocketFlags, SocketType};
use satbench_transport::tcp::set_linger_zero;
use satprobe::cli::{
    self, BurstOpts, Command, Common, ConnectOpts, OwdOpts, RateOpts, RttOpts, OWD_SEQ_SPACE,
};
use satprobe::schedule::{golden_offset_ns, Schedule};
use satprobe::{burst, connect_timed_out, first_arrival, ns_to_ms, owd, rate, receiver_done, rtt};
use serde::Serialize;

/// How often a blocked receiver looks whether it may stop.
const POLL: Duration = Duration::from_millis(10);
/// Time between setting up and the first scheduled send.
const LEAD_NS: u64 = 2_000_000;
/// Socket buffers for the rate test: 32 MiB holds ~0.9 s at 300 Mbit/s.
const RATE_RCVBUF: usize = 32 << 20;
const RATE_SNDBUF: usize = 4 << 20;
/// Receive buffers for rtt/owd/burst (modest amounts of data).
const SMALL_RCVBUF: usize = 4 << 20;

fn main() {
    let out = match cli::parse(std::env::args_os()) {
        Ok(Command::Print(text)) => {
            print!("{text}");
            return;
        }
        Ok(Command::Rtt(o)) => run_rtt(&o).map(|v| serde_json::to_string(&v)),
        Ok(Command::Owd(o)) => run_owd(&o).map(|v| serde_json::to_string(&v)),
        Ok(Command::Rate(o)) => run_rate(&o).map(|v| serde_json::to_string(&v)),
        Ok(Command::Connect(o)) => run_connect(&o).map(|v| serde_json::to_string(&v)),
        Ok(Command::Burst(o)) => run_burst(&o).map(|v| serde_json::to_string(&v)),
        Err(e) => Err(e),
    };
    match out {
        Ok(Ok(json)) => println!("{json}"),
        Ok(Err(e)) => fail(&format!("cannot write JSON: {e}")),
        Err(e) => fail(&e),
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("satprobe: {}", msg.replace('\n', " "));
    std::process::exit(2);
}

// ---------------------------------------------------------------- plumbing

/// Tells receivers when the sender is done: how many it sent, and until when
/// to wait for stragglers.
struct Finish {
    sent: AtomicU64,
    /// 0 while the sender is still sending.
    deadline_ns: AtomicU64,
}

impl Finish {
    fn new() -> Finish {
        Finish {
            sent: AtomicU64::new(0),
            deadline_ns: AtomicU64::new(0),
        }
    }
    /// The sender is done: it sent `sent` (`None`: it failed, receivers
    /// stop at once) and receivers wait `timeout_ms` for stragglers.
    fn sender_done(&self, sent: Option<u64>, timeout_ms: u64) {
        let (sent, deadline_ns) = match sent {
            Some(n) => (n, sys::now_ns() + timeout_ms * 1_000_000),
            None => (0, 1),
        };
        self.sent.store(sent, Ordering::Relaxed);
        self.deadline_ns.store(deadline_ns, Ordering::Release);
    }
    fn get(&self) -> Option<(u64, u64)> {
        match self.deadline_ns.load(Ordering::Acquire) {
            0 => None,
            d => Some((self.sent.load(Ordering::Relaxed), d)),
        }
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

/// Receives until `receiver_done`: `on(datagram, arrival ns)` returns whether
/// the datagram counts toward "everything sent has arrived".
fn receive_until_done(
    sock: &UdpSocket,
    buf: &mut [u8],
    finish: &Finish,
    mut on: impl FnMut(&[u8], u64) -> bool,
) -> io::Result<()> {
    sys::precise_timers();
    sock.set_read_timeout(Some(POLL))?;
    let mut received = 0u64;
    loop {
        match sock.recv(buf) {
            Ok(n) => {
                let t = sys::now_ns();
                if on(&buf[..n], t) {
                    received += 1;
                }
            }
            Err(e) if is_timeout(&e) => {}
            // An ICMP error for an earlier datagram on a connected socket.
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
            Err(e) => return Err(e),
        }
        if receiver_done(finish.get(), received, sys::now_ns()) {
            return Ok(());
        }
    }
}

/// The receiving socket: bound to `to_addr:port` inside `to_netns`.
fn bind_receiver(c: &Common) -> Result<UdpSocket, String> {
    let at = SocketAddrV4::new(c.to_addr, c.port);
    netns::within(&c.to_netns, || UdpSocket::bind(at))
        .map_err(|e| format!("bind {at} in netns {}: {e}", c.to_netns))
}

/// The sending socket: opened in `from_netns`, connected to the receiver.
fn connect_sender(c: &Common) -> Result<UdpSocket, String> {
    let to = SocketAddrV4::new(c.to_addr, c.port);
    netns::within(&c.from_netns, || {
        let s = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0))?;
        s.connect(to)?;
        Ok(s)
    })
    .map_err(|e| format!("UDP socket to {to} from netns {}: {e}", c.from_netns))
}

/// Sends one datagram; a local drop (ENOBUFS) counts as sent and lost.
fn send(sock: &UdpSocket, buf: &[u8], to: &Common) -> Result<(), String> {
    match sock.send(buf) {
        Ok(_) => Ok(()),
        Err(e) if rustix::io::Errno::from_io_error(&e) == Some(rustix::io::Errno::NOBUFS) => Ok(()),
        Err(e) => Err(format!(
            "send to {}:{} from netns {}: {e}",
            to.to_addr, to.port, to.from_netns
        )),
    }
}

fn joined<T>(r: thread::Result<Result<T, String>>, what: &str) -> Result<T, String> {
    r.map_err(|_| format!("{what} thread panicked"))?
}

// ---------------------------------------------------------------- rtt

#[derive(Serialize)]
struct RttOut {
    sent: u64,
    received: u64,
    rtt_ms: Vec<f64>,
}

fn run_rtt(o: &RttOpts) -> Result<RttOut, String> {
    let c = &o.common;
    let echo_sock = bind_receiver(c)?;
    let _ = sys::grow_buffer(&echo_sock, true, SMALL_RCVBUF);
    let tx = connect_sender(c)?;
    let _ = sys::grow_buffer(&tx, true, SMALL_RCVBUF);
    let rx = tx.try_clone().map_err(|e| format!("dup socket: {e}"))?;
    let stop_echo = AtomicBool::new(false);
    let finish = Finish::new();
    let echoes: Mutex<Vec<(u32, u64, u64)>> = Mutex::new(Vec::new());
    sys::precise_timers();

    let sent = thread::scope(|s| -> Result<u64, String> {
        // Echo responder, in to-netns: returns our probes verbatim.
        let echo = s.spawn(|| -> Result<(), String> {
            sys::precise_timers();
            echo_sock
                .set_read_timeout(Some(POLL))
                .map_err(|e| e.to_string())?;
            let mut buf = [0u8; 2048];
            while !stop_echo.load(Ordering::Relaxed) {
                match echo_sock.recv_from(&mut buf) {
                    Ok((n, from)) => {
                        if rtt::decode(&buf[..n]).is_some() {
                            let _ = echo_sock.send_to(&buf[..n], from);
                        }
                    }
                    Err(e) if is_timeout(&e) => {}
                    Err(e) => return Err(format!("echo responder: {e}")),
                }
            }
            Ok(())
        });
        // Echo collector, on the sender's socket in from-netns.
        let collector = s.spawn(|| -> Result<(), String> {
            let mut seen = vec![false; o.count as usize];
            let mut buf = [0u8; 2048];
            let mut got = Vec::with_capacity(o.count as usize);
            let r = receive_until_done(&rx, &mut buf, &finish, |b, t| match rtt::decode(b) {
                Some((seq, ts)) => {
                    got.push((seq, ts, t));
                    first_arrival(&mut seen, seq.into())
                }
                None => false,
            });
            *echoes.lock().unwrap() = got;
            r.map_err(|e| format!("receiving echoes: {e}"))
        });

        let sched = Schedule::every(sys::now_ns() + LEAD_NS, o.interval_ms, o.count);
        let mut result = Ok(o.count);
        for i in 0..o.count {
            sys::sleep_until(sched.due_ns(i));
            if let Err(e) = send(&tx, &rtt::encode(i as u32, sys::now_ns()), c) {
                result = Err(e);
                break;
            }
        }
        finish.sender_done(result.as_ref().ok().copied(), c.timeout_ms);
        let collected = joined(collector.join(), "echo collector");
        stop_echo.store(true, Ordering::Relaxed);
        let echoed = joined(echo.join(), "echo responder");
        let sent = result?;
        collected?;
        echoed?;
        Ok(sent)
    })?;

    let rtts = rtt::collect(sent, &echoes.into_inner().unwrap());
    Ok(RttOut {
        sent,
        received: rtts.len() as u64,
        rtt_ms: rtts.iter().map(|&(_, r)| ns_to_ms(r)).collect(),
    })
}

// ---------------------------------------------------------------- owd

#[derive(Serialize)]
struct OwdOut {
    sent: u64,
    received: u64,
    owd_ms: Vec<f64>,
    lost: u64,
    /// Datagrams that arrived but matched no send (duplicates, strays).
    unmatched: u64,
}

/// Send times by send index; `(what identifies the datagram, arrival
/// time)` in arrival order.
type SendsAndReceipts<K> = (Vec<u64>, Vec<(K, u64)>);

fn run_owd(o: &OwdOpts) -> Result<OwdOut, String> {
    let c = &o.common;
    let rx = bind_receiver(c)?;
    let _ = sys::grow_buffer(&rx, true, SMALL_RCVBUF);
    let tx = connect_sender(c)?;
    let finish = Finish::new();
    sys::precise_timers();

    let (send_ns, receipts) = thread::scope(|s| -> Result<SendsAndReceipts<u8>, String> {
        let receiver = s.spawn(|| -> Result<Vec<(u8, u64)>, String> {
            let mut got = Vec::with_capacity(o.count as usize);
            let mut buf = [0u8; 2048];
            receive_until_done(&rx, &mut buf, &finish, |b, t| {
                if b.len() == 1 {
                    got.push((b[0], t));
                    true
                } else {
                    false
                }
            })
            .map_err(|e| format!("receiving in netns {}: {e}", c.to_netns))?;
            Ok(got)
        });

        let sched = Schedule::every(sys::now_ns() + LEAD_NS, o.interval_ms, o.count);
        let mut send_ns = Vec::with_capacity(o.count as usize);
        let mut result = Ok(());
        for i in 0..o.count {
            sys::sleep_until(sched.due_ns(i));
            // Timestamp before the send: on a veth the datagram can reach
            // the receiver before send() returns.
            send_ns.push(sys::now_ns());
            if let Err(e) = send(&tx, &[(i % OWD_SEQ_SPACE) as u8], c) {
                result = Err(e);
                break;
            }
        }
        finish.sender_done(result.is_ok().then_some(o.count), c.timeout_ms);
        let receipts = joined(receiver.join(), "receiver");
        result?;
        Ok((send_ns, receipts?))
    })?;

    let horizon_ns = (o.interval_ms * 1e6 * OWD_SEQ_SPACE as f64) as u64;
    let m = owd::match_receipts(&send_ns, &receipts, horizon_ns);
    let sent = send_ns.len() as u64;
    Ok(OwdOut {
        sent,
        received: m.received(),
        owd_ms: m.delays.iter().map(|&(_, d)| ns_to_ms(d)).collect(),
        lost: sent - m.received(),
        unmatched: m.unmatched,
    })
}

// ---------------------------------------------------------------- rate

#[derive(Serialize)]
struct RateOut {
    sent_packets: u64,
    received_packets: u64,
    received_ip_bytes: u64,
    /// Seconds from the first scheduled send to the first / last arrival.
    first_rx_s: Option<f64>,
    last_rx_s: Option<f64>,
    /// Delivered rate while busy, Mbit/s at the IP layer.
    mbps: Option<f64>,
    /// What the sender achieved, Mbit/s at the IP layer (first to last send).
    sent_mbps: Option<f64>,
}

fn run_rate(o: &RateOpts) -> Result<RateOut, String> {
    let c = &o.common;
    let rx = bind_receiver(c)?;
    sys::grow_buffer(&rx, true, RATE_RCVBUF).map_err(|e| format!("receive buffer: {e}"))?;
    let tx = connect_sender(c)?;
    sys::grow_buffer(&tx, false, RATE_SNDBUF).map_err(|e| format!("send buffer: {e}"))?;
    let finish = Finish::new();
    sys::precise_timers();

    let sched = Schedule::for_rate(
        sys::now_ns() + LEAD_NS,
        o.mbit,
        o.packet_bytes,
        o.duration_ms,
    );
    let (sent, first_tx, last_tx, count) =
        thread::scope(|s| -> Result<(u64, u64, u64, rate::RxCount), String> {
            let receiver = s.spawn(|| -> Result<rate::RxCount, String> {
                let mut count = rate::RxCount::default();
                let mut buf = vec![0u8; 65_536];
                receive_until_done(&rx, &mut buf, &finish, |b, t| {
                    if rate::decode(b).is_some() {
                        count.add(b.len(), t);
                        true
                    } else {
                        false
                    }
                })
                .map_err(|e| format!("receiving in netns {}: {e}", c.to_netns))?;
                Ok(count)
            });

            let mut payload = vec![0u8; o.payload_bytes()];
            let (mut sent, mut first_tx, mut last_tx) = (0u64, 0u64, 0u64);
            let mut result = Ok(());
            'sending: while let Some(wake) = sched.next_wake_ns(sent) {
                sys::sleep_until(wake);
                let now = sys::now_ns();
                if sched.overrun(now) {
                    break; // could not keep up: stop at the asked duration
                }
                let due = sched.due_count(now);
                while sent < due {
                    rate::encode(&mut payload, sent);
                    if let Err(e) = send(&tx, &payload, c) {
                        result = Err(e);
                        break 'sending;
                    }
                    last_tx = sys::now_ns();
                    if sent == 0 {
                        first_tx = last_tx;
                    }
                    sent += 1;
                    if sched.overrun(last_tx) {
                        break 'sending; // could not keep up
                    }
                }
            }
            finish.sender_done(result.is_ok().then_some(sent), c.timeout_ms);
            let count = joined(receiver.join(), "receiver");
            result?;
            Ok((sent, first_tx, last_tx, count?))
        })?;

    let rel_s = |t: u64| t.saturating_sub(sched.start_ns) as f64 / 1e9;
    Ok(RateOut {
        sent_packets: sent,
        received_packets: count.packets,
        received_ip_bytes: count.ip_bytes,
        first_rx_s: count.first.map(|(t, _)| rel_s(t)),
        last_rx_s: count.first.map(|_| rel_s(count.last_ns)),
        mbps: count.delivered_mbps(),
        sent_mbps: rate::sent_mbps(sent, o.packet_bytes, first_tx, last_tx),
    })
}

// ---------------------------------------------------------------- connect

#[derive(Serialize)]
struct ConnectOut {
    sent: u64,
    connected: u64,
    /// One per connect() that succeeded, in order: from just before the
    /// call to its return (SYN out, SYN-ACK back).
    connect_ms: Vec<f64>,
}

fn run_connect(o: &ConnectOpts) -> Result<ConnectOut, String> {
    let c = &o.common;
    let at = SocketAddrV4::new(c.to_addr, c.port);
    let listener = netns::within(&c.to_netns, || TcpListener::bind(at))
        .map_err(|e| format!("listen on TCP {at} in netns {}: {e}", c.to_netns))?;
    // accept() honours SO_RCVTIMEO: the acceptor looks every POLL whether
    // it may stop.
    sockopt::set_socket_timeout(&listener, Timeout::Recv, Some(POLL))
        .map_err(|e| format!("listener timeout: {e}"))?;
    let stop = AtomicBool::new(false);
    sys::precise_timers();

    let times = thread::scope(|s| -> Result<Vec<u64>, String> {
        // The kernel completes the handshakes; accepting only keeps the
        // backlog empty. An accepted connection is closed at once.
        let acceptor = s.spawn(|| -> Result<(), String> {
            while !stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok(_) => {}
                    Err(e) if is_timeout(&e) => {}
                    Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => {}
                    Err(e) => return Err(format!("accepting in netns {}: {e}", c.to_netns)),
                }
            }
            Ok(())
        });

        let sched = Schedule::every(sys::now_ns() + LEAD_NS, o.interval_ms, o.count);
        let mut times = Vec::with_capacity(o.count as usize);
        let mut result = Ok(());
        for i in 0..o.count {
            // A connect() that ran past the next due time delays it: one
            // handshake at a time.
            sys::sleep_until(sched.due_ns(i) + golden_offset_ns(i, o.spread_ms * 1e6));
            match connect_once(c) {
                Ok(Some(ns)) => times.push(ns),
                Ok(None) => {}
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        let accepted = joined(acceptor.join(), "acceptor");
        result?;
        accepted?;
        Ok(times)
    })?;

    Ok(ConnectOut {
        sent: o.count,
        connected: times.len() as u64,
        connect_ms: times.into_iter().map(ns_to_ms).collect(),
    })
}

/// One connect() from `from_netns`: its duration, or `None` if it timed out
/// (`timeout_ms`).
fn connect_once(c: &Common) -> Result<Option<u64>, String> {
    let to = SocketAddrV4::new(c.to_addr, c.port);
    // The socket belongs to the namespace it was opened in; connect() may
    // then run from this thread's own.
    let fd = netns::within(&c.from_netns, || {
        Ok(rustix::net::socket_with(
            AddressFamily::INET,
            SocketType::STREAM,
            SocketFlags::CLOEXEC,
            None,
        )?)
    })
    .map_err(|e| format!("TCP socket in netns {}: {e}", c.from_netns))?;
    sockopt::set_socket_timeout(
        &fd,
        Timeout::Send,
        Some(Duration::from_millis(c.timeout_ms)),
    )
    .map_err(|e| format!("connect timeout: {e}"))?;
    let t0 = sys::now_ns();
    let r = rustix::net::connect(&fd, &to);
    let took = sys::now_ns() - t0;
    match r {
        Ok(()) => {
            // Closed with a reset, not a FIN exchange that would cross the
            // link during the next handshake.
            let _ = set_linger_zero(&fd);
            Ok(Some(took))
        }
        Err(e) if connect_timed_out(e) => Ok(None),
        Err(e) => Err(format!(
            "connect to TCP {to} from netns {}: {e}",
            c.from_netns
        )),
    }
}

// ---------------------------------------------------------------- burst

#[derive(Serialize)]
struct BurstOut {
    sent: u64,
    received: u64,
    lost: u64,
    packet_bytes: usize,
    idle_ms: u64,
    /// When each datagram left, ms after the first did.
    send_ms: Vec<f64>,
    /// Each datagram's one-way delay in send order, `null` if it was lost.
    owd_ms: Vec<Option<f64>>,
}

fn run_burst(o: &BurstOpts) -> Result<BurstOut, String> {
    let c = &o.common;
    let rx = bind_receiver(c)?;
    let _ = sys::grow_buffer(&rx, true, SMALL_RCVBUF);
    let tx = connect_sender(c)?;
    let _ = sys::grow_buffer(&tx, false, RATE_SNDBUF);
    let finish = Finish::new();
    sys::precise_timers();
    // Nothing is sent before the burst: the sockets are silent for idle_ms.
    let start_ns = sys::now_ns() + (o.idle_ms * 1_000_000).max(LEAD_NS);

    let (send_ns, receipts) = thread::scope(|s| -> Result<SendsAndReceipts<u64>, String> {
        let receiver = s.spawn(|| -> Result<Vec<(u64, u64)>, String> {
            let mut got = Vec::with_capacity(o.packets as usize);
            let mut seen = vec![false; o.packets as usize];
            let mut buf = vec![0u8; 65_536];
            receive_until_done(&rx, &mut buf, &finish, |b, t| match burst::decode(b) {
                Some(i) => {
                    got.push((i, t));
                    first_arrival(&mut seen, i)
                }
                None => false,
            })
            .map_err(|e| format!("receiving in netns {}: {e}", c.to_netns))?;
            Ok(got)
        });

        let mut payload = vec![0u8; o.payload_bytes()];
        let mut send_ns = Vec::with_capacity(o.packets as usize);
        let mut result = Ok(());
        sys::sleep_until(start_ns);
        for i in 0..o.packets {
            burst::encode(&mut payload, i);
            // Timestamp before the send, as owd does.
            send_ns.push(sys::now_ns());
            if let Err(e) = send(&tx, &payload, c) {
                result = Err(e);
                break;
            }
        }
        finish.sender_done(result.is_ok().then_some(o.packets), c.timeout_ms);
        let receipts = joined(receiver.join(), "receiver");
        result?;
        Ok((send_ns, receipts?))
    })?;

    let delays = burst::delays(&send_ns, &receipts);
    let received = delays.iter().flatten().count() as u64;
    let first = send_ns.first().copied().unwrap_or(0);
    Ok(BurstOut {
        sent: send_ns.len() as u64,
        received,
        lost: send_ns.len() as u64 - received,
        packet_bytes: o.packet_bytes,
        idle_ms: o.idle_ms,
        send_ms: send_ns.iter().map(|&t| ns_to_ms(t - first)).collect(),
        owd_ms: delays.into_iter().map(|d| d.map(ns_to_ms)).collect(),
    })
}
