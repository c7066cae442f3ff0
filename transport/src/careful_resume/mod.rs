//! Careful Resume (RFC 9959) in our QUIC
//! senders, `careful-resume=on`:
//! - `phases`: the draft's phases as a plain state machine;
//! - `observe`: what a connection learns of its path, saved for the next;
//! - `store`: the saved paths, per client address, within a lifetime;
//! - `controller`: the quinn controller around the `cc=` one;
//! - `log`: one JSON line per connection that had a saved path;
//! - here, `Resumer`: what a server does per connection (look the client
//!   up, give the connection its controller, save and log at the end).

pub mod controller;
pub mod log;
pub mod observe;
pub mod phases;
pub mod store;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use quinn::TransportConfig;

use crate::quic::QuicOptions;
use controller::{Base, CarefulResumeFactory, Report, SharedReport};
use store::{Endpoint, Store};

/// A server's Careful Resume: its saved paths and its log.
#[derive(Debug)]
pub struct Resumer {
    opts: QuicOptions,
    base: Base,
    store: Arc<Store>,
    log: Option<Mutex<File>>,
}

/// One accepted connection's part: handed back to `Resumer::finish` when
/// the connection has ended.
pub struct Session {
    endpoint: Endpoint,
    report: SharedReport,
}

impl Resumer {
    /// For a server with transport `opts`; `log`: the Careful Resume log,
    /// appended to.
    pub fn new(opts: &QuicOptions, log: Option<&Path>) -> Result<Resumer, String> {
        let log = match log {
            Some(p) => Some(Mutex::new(
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .map_err(|e| format!("{}: {e}", p.display()))?,
            )),
            None => None,
        };
        Ok(Resumer {
            opts: opts.clone(),
            base: Base {
                cc: opts.cc,
                initial_window: opts.initial_window_bytes(),
            },
            store: Arc::new(Store::default()),
            log,
        })
    }

    /// The transport of a connection from `remote` to our `local` address:
    /// the options' with a Careful Resume controller that starts from the
    /// path saved for this client, if any.
    pub fn connection(
        &self,
        remote: SocketAddr,
        local: Option<IpAddr>,
    ) -> (TransportConfig, Session) {
        let mut t = self.opts.transport_config();
        let session = self.attach(&mut t, remote, local);
        (t, session)
    }

    /// Gives transport `t` (a connection from `remote` to our `local`
    /// address) the Careful Resume controller; `watch` the connection
    /// once accepted.
    pub fn attach(
        &self,
        t: &mut TransportConfig,
        remote: SocketAddr,
        local: Option<IpAddr>,
    ) -> Session {
        let endpoint = Endpoint::new(remote, local);
        let report = SharedReport::default();
        t.congestion_controller_factory(Arc::new(CarefulResumeFactory {
            base: self.base,
            saved: self.store.get(&endpoint, Instant::now()),
            report: report.clone(),
            path: Some((self.store.clone(), endpoint)),
        }));
        Session { endpoint, report }
    }

    /// Accepts `incoming` with `config` and the transport `connection`
    /// makes for its client; the connection is saved and logged when it
    /// closes (a task waits for that).
    pub async fn accept(
        self: &Arc<Self>,
        incoming: quinn::Incoming,
        config: &quinn::ServerConfig,
    ) -> Result<quinn::Connection, quinn::ConnectionError> {
        let (t, session) = self.connection(incoming.remote_address(), incoming.local_ip());
        let mut c = config.clone();
        c.transport_config(Arc::new(t));
        let conn = incoming.accept_with(Arc::new(c))?.await?;
        self.watch(&conn, session);
        Ok(conn)
    }

    /// Logs `session` once Careful Resume settles or `conn` ends, and
    /// saves what it measured when it ends (a task waits for that).
    pub fn watch(self: &Arc<Self>, conn: &quinn::Connection, session: Session) {
        let (me, watched) = (self.clone(), conn.clone());
        let settled = session.report().settled.clone();
        tokio::spawn(async move {
            // logged as soon as it settles (a browser keeps its connection
            // open past the page load), else when the connection ends
            tokio::select! {
                _ = settled.notified() => {
                    me.log(&session);
                    watched.closed().await;
                }
                _ = watched.closed() => {
                    me.log(&session);
                }
            }
            me.save(&session);
        });
    }

    /// Writes the session's log line, if it had a saved path; returns it.
    pub fn log(&self, session: &Session) -> Option<String> {
        let line = log::line(&session.report(), &session.endpoint, SystemTime::now())?;
        if let Some(f) = &self.log {
            let mut f = f.lock().unwrap_or_else(|e| e.into_inner());
            // one write, so that lines of servers sharing the file do not
            // interleave; a full disk must not stop the server: the line is lost
            let _ = f.write_all(format!("{line}\n").as_bytes());
        }
        Some(line)
    }

    /// The connection has ended: save what it measured for the client's
    /// next connection.
    pub fn save(&self, session: &Session) {
        if let Some(observed) = session.report().observed {
            self.store.save(session.endpoint, observed, Instant::now());
        }
    }
}

impl Session {
    /// What Careful Resume did so far.
    pub fn report(&self) -> Report {
        self.report
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
