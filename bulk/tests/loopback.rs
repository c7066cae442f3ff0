//! Runs the `satbulk` binary on 127.0.0.1: a server with a trace, sized
//! and timed downloads and uploads over QUIC and TCP, then SIGTERM. No
//! namespaces.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use satbench_transport::testkit::{
    free_tcp_port, free_udp_port, gen_cert, spawn_ready_on_fresh_ports, temp_dir, Running,
};

const BIN: &str = env!("CARGO_BIN_EXE_satbulk");

struct Server {
    process: Running,
    dir: PathBuf,
    quic: u16,
    tcp: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        // the process is killed by its own drop
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn serve(extra: &[&str]) -> Server {
    let dir = temp_dir("satbulk-it");
    gen_cert(&dir.join("cert"), "satbench.test");
    let (process, (quic, tcp)) = spawn_ready_on_fresh_ports(Duration::from_secs(10), || {
        let (quic, tcp) = (free_udp_port(), free_tcp_port());
        let mut cmd = Command::new(BIN);
        cmd.args([
            "serve",
            "--addr",
            "127.0.0.1",
            "--quic-port",
            &quic.to_string(),
            "--tcp-port",
            &tcp.to_string(),
        ])
        .arg("--cert")
        .arg(dir.join("cert/cert.pem"))
        .arg("--key")
        .arg(dir.join("cert/key.pem"))
        .arg("--trace")
        .arg(dir.join("trace.jsonl"))
        .args(extra)
        .stderr(Stdio::inherit());
        (cmd, (quic, tcp))
    })
    .unwrap_or_else(|e| panic!("satbulk serve: {e}"));
    Server {
        process,
        dir,
        quic,
        tcp,
    }
}

fn get(args: &[&str], ca: &Path) -> (i32, serde_json::Value) {
    let out = Command::new(BIN)
        .arg("get")
        .args(args)
        .arg("--ca")
        .arg(ca)
        .arg("--json")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let v = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text} {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap(), v)
}

fn trace_lines(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("trace.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn sized_downloads_over_quic_and_tcp() {
    let s = serve(&[
        "--quic-cc",
        "newreno",
        "--quic-initial-window",
        "100",
        "--tcp-cc",
        "reno",
    ]);
    let ca = s.dir.join("cert/cert.pem");
    for (proto, port) in [("quic", s.quic), ("tcp", s.tcp)] {
        let addr = format!("127.0.0.1:{port}");
        let (code, r) = get(
            &[proto, "--addr", &addr, "--bytes", "3MB", "--bin-ms", "10"],
            &ca,
        );
        assert_eq!(code, 0, "{r}");
        assert_eq!(r["ok"], true, "{r}");
        assert_eq!(r["protocol"], proto);
        assert_eq!(r["bytes"], 3_000_000);
        assert_eq!(r["requested_bytes"], 3_000_000);
        let bins: Vec<u64> = r["bins"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b.as_u64().unwrap())
            .collect();
        assert_eq!(bins.iter().sum::<u64>(), 3_000_000, "{r}");
        let (connect, ttfb, dur) = (
            r["connect_ms"].as_f64().unwrap(),
            r["ttfb_ms"].as_f64().unwrap(),
            r["duration_ms"].as_f64().unwrap(),
        );
        assert!(connect <= ttfb && ttfb <= dur, "{r}");
        assert_eq!(bins.len() as f64, (dur / 10.0).ceil().max(1.0), "{r}");
        if proto == "quic" {
            assert_eq!(r["alpn"], "satbulk");
            assert_eq!(r["name"], "satbench.test");
        } else {
            // the client does not set one; the server's is in its trace
            assert!(r["transport"]["rtt_ms"].is_number(), "{r}");
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let lines = trace_lines(&s.dir);
    for proto in ["quic", "tcp"] {
        let conn: Vec<_> = lines.iter().filter(|l| l["proto"] == proto).collect();
        let last = conn
            .iter()
            .find(|l| l["final"] == true)
            .unwrap_or_else(|| panic!("{proto}: no final line in {lines:?}"));
        assert!(last["bytes_sent"].as_u64().unwrap() >= 3_000_000, "{last}");
        assert_eq!(last["app_bytes"], 3_000_000, "{last}");
        assert!(last["cwnd"].as_u64().unwrap() > 0, "{last}");
        assert!(last["rtt_ms"].is_number());
    }
    // newreno with 100 × 1200 bytes: quinn's window starts at 120000 bytes
    let first_quic = lines.iter().find(|l| l["proto"] == "quic").unwrap();
    assert!(
        first_quic["cwnd"].as_u64().unwrap() >= 120_000 || first_quic["final"] == true,
        "{first_quic}"
    );
}

#[test]
fn a_revisit_makes_a_second_connection_which_the_server_resumes() {
    let dir = temp_dir("satbulk-cr");
    let log = dir.join("careful-resume.log");
    let s = serve(&[
        "--quic-careful-resume",
        "on",
        "--careful-resume-log",
        log.to_str().unwrap(),
    ]);
    let ca = s.dir.join("cert/cert.pem");
    let addr = format!("127.0.0.1:{}", s.quic);
    let (code, r) = get(
        &["quic", "--addr", &addr, "--bytes", "3MB", "--revisit"],
        &ca,
    );
    assert_eq!(code, 0, "{r}");
    assert_eq!(
        (r["bytes"].as_u64(), r["ok"].as_bool()),
        (Some(3_000_000), Some(true)),
        "{r}"
    );
    let first = &r["first"];
    assert_eq!(first["bytes"], 3_000_000, "{r}");
    assert!(first["first"].is_null(), "one level: {r}");
    assert!(
        first["t0_unix_ms"].as_u64() <= r["t0_unix_ms"].as_u64(),
        "{r}"
    );
    // the second connection started from the first's path: one line (the
    // first had none); on loopback the saved window is too small to jump
    let mut lines = Vec::new();
    for _ in 0..50 {
        lines = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .collect();
        if !lines.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0]["phase_reached"].is_string(), "{}", lines[0]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_paused_revisit_waits_for_the_callers_line_between_its_connections() {
    use std::io::{BufRead, BufReader, Write};
    let s = serve(&[]);
    let ca = s.dir.join("cert/cert.pem");
    let addr = format!("127.0.0.1:{}", s.quic);
    let mut child = Command::new(BIN)
        .args(["get", "quic", "--addr", &addr, "--bytes", "1MB", "--json"])
        .args(["--revisit", "--revisit-pause", "--ca"])
        .arg(&ca)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(
        line.starts_with("satbulk: first connection closed"),
        "{line}"
    );
    // the first connection only: the server has seen one connection end
    std::thread::sleep(Duration::from_millis(400));
    let conns = |lines: &[serde_json::Value]| {
        let mut c: Vec<_> = lines.iter().map(|l| l["conn"].clone()).collect();
        c.dedup();
        c.len()
    };
    assert_eq!(conns(&trace_lines(&s.dir)), 1);
    std::thread::sleep(Duration::from_millis(300));
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (r["ok"].as_bool(), r["bytes"].as_u64()),
        (Some(true), Some(1_000_000)),
        "{r}"
    );
    assert_eq!(r["first"]["bytes"], 1_000_000, "{r}");
    // the second started after the line (700 ms of waiting), not before
    let gap = r["t0_unix_ms"].as_u64().unwrap() - r["first"]["t0_unix_ms"].as_u64().unwrap();
    assert!(gap >= 700, "{gap} ms: {r}");
}

fn bins_of(r: &serde_json::Value) -> Vec<u64> {
    r["bins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_u64().unwrap())
        .collect()
}

#[test]
fn uploads_are_counted_by_the_server_from_the_clients_t0() {
    let s = serve(&[]);
    let ca = s.dir.join("cert/cert.pem");
    for (proto, port) in [("quic", s.quic), ("tcp", s.tcp)] {
        let addr = format!("127.0.0.1:{port}");
        let up = ["--direction", "up", "--bin-ms", "10"];
        let (code, r) = get(
            &[&[proto, "--addr", &addr, "--bytes", "3MB"][..], &up].concat(),
            &ca,
        );
        assert_eq!(code, 0, "{r}");
        assert_eq!(
            (r["ok"].clone(), r["direction"].clone()),
            (true.into(), "up".into()),
            "{r}"
        );
        assert_eq!(r["bytes"], 3_000_000, "{r}");
        assert_eq!(bins_of(&r).iter().sum::<u64>(), 3_000_000, "{r}");
        let (connect, first, dur) = (
            r["connect_ms"].as_f64().unwrap(),
            r["ttfb_ms"].as_f64().unwrap(),
            r["duration_ms"].as_f64().unwrap(),
        );
        // the server's first arrival is after our connect, on our clock
        assert!(connect <= first && first <= dur && dur < 5000.0, "{r}");
        assert_eq!(
            bins_of(&r).len() as f64,
            (dur / 10.0).ceil().max(1.0),
            "{r}"
        );

        let t = std::time::Instant::now();
        let (code, r) = get(
            &[&[proto, "--addr", &addr, "--duration", "600ms"][..], &up].concat(),
            &ca,
        );
        assert_eq!(code, 0, "{r}");
        assert!(t.elapsed().as_millis() < 5000);
        assert_eq!(r["duration_ms"], 600.0, "{r}");
        assert_eq!(bins_of(&r).len(), 60, "{r}");
        assert!(r["bytes"].as_u64().unwrap() > 1_000_000, "{r}");
        assert_eq!(
            bins_of(&r).iter().sum::<u64>(),
            r["bytes"].as_u64().unwrap()
        );
    }
}

#[test]
fn timed_downloads_count_exactly_their_duration() {
    let s = serve(&[]);
    let ca = s.dir.join("cert/cert.pem");
    for (proto, port) in [("quic", s.quic), ("tcp", s.tcp)] {
        let addr = format!("127.0.0.1:{port}");
        let t = std::time::Instant::now();
        let (code, r) = get(&[proto, "--addr", &addr, "--duration", "600ms"], &ca);
        assert_eq!(code, 0, "{r}");
        assert!(t.elapsed().as_millis() < 5000);
        assert_eq!(r["duration_ms"], 600.0);
        assert_eq!(r["bins"].as_array().unwrap().len(), 6, "{r}");
        assert!(r["bytes"].as_u64().unwrap() > 1_000_000, "{r}");
        assert_eq!(r["requested_bytes"], serde_json::Value::Null);
    }
    // the server noticed each client leaving: every connection has a final line
    std::thread::sleep(std::time::Duration::from_millis(500));
    let finals = trace_lines(&s.dir)
        .into_iter()
        .filter(|l| l["final"] == true)
        .count();
    assert_eq!(finals, 2);
}

#[test]
fn failures_are_reports_or_one_line_errors() {
    let s = serve(&[]);
    let ca = s.dir.join("cert/cert.pem");
    // nothing listens on the QUIC port over TCP
    let dead = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (code, r) = get(
        &[
            "tcp",
            "--addr",
            &format!("127.0.0.1:{dead}"),
            "--bytes",
            "1",
        ],
        &ca,
    );
    assert_eq!(code, 1);
    assert_eq!(r["ok"], false);
    assert!(r["error"].as_str().unwrap().contains("refused"), "{r}");
    // a certificate for another name is refused
    let (code, r) = get(
        &[
            "quic",
            "--addr",
            &format!("127.0.0.1:{}", s.quic),
            "--name",
            "other.test",
            "--bytes",
            "1",
        ],
        &ca,
    );
    assert_eq!(code, 1, "{r}");
    assert!(r["error"].as_str().unwrap().contains("connect"), "{r}");
    let out = Command::new(BIN)
        .args(["get", "quic", "--addr", "127.0.0.1:1", "--bytes", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--ca"));
    let out = Command::new(BIN)
        .args([
            "serve",
            "--addr",
            "127.0.0.1",
            "--cert",
            "/nonexistent",
            "--key",
            "/nonexistent",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("--cert /nonexistent"));
}

#[test]
fn exits_0_on_sigterm() {
    let mut s = serve(&[]);
    let status = s.process.terminate(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0));
}
