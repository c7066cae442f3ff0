//! What the proxy does on one side when something ends on the other, as
//! plain decisions: stream ends (FIN, RESET_STREAM, STOP_SENDING) and
//! connection ends (CONNECTION_CLOSE, idle timeout, stateless reset).
//!
//! quinn lets an application send only application CONNECTION_CLOSE frames,
//! so a transport-level close (or a timeout) on one side becomes an
//! application close on the other: code 0 when the side ended without an
//! error (transport NO_ERROR, idle timeout), `PEP_ERROR` otherwise, with a
//! reason that says what happened.

use quinn::ConnectionError;

/// The application error code for "the other side of the proxy failed"
/// (H3_INTERNAL_ERROR, RFC 9114 §8.1: the proxy mostly carries HTTP/3, and
/// other protocols see just a nonzero code with a reason).
pub const PEP_ERROR: u64 = 0x102;

/// Reasons are cut to this many bytes, well inside one packet.
pub const MAX_REASON: usize = 512;

/// How one side of a relayed connection ended, as plain values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The peer sent an application CONNECTION_CLOSE.
    App { code: u64, reason: Vec<u8> },
    /// The peer sent a transport CONNECTION_CLOSE.
    Transport { code: u64, reason: Vec<u8> },
    /// Idle timeout (or a handshake that never completed).
    TimedOut,
    /// The peer sent a stateless reset.
    Reset,
    /// The proxy closed it itself (shutdown, or relaying a close).
    Local,
    /// Anything else (version mismatch, a local protocol error, …).
    Failed(String),
}

impl From<&ConnectionError> for Ended {
    fn from(e: &ConnectionError) -> Ended {
        match e {
            ConnectionError::ApplicationClosed(c) => Ended::App {
                code: c.error_code.into_inner(),
                reason: c.reason.to_vec(),
            },
            ConnectionError::ConnectionClosed(c) => Ended::Transport {
                code: u64::from(c.error_code),
                reason: c.reason.to_vec(),
            },
            ConnectionError::TimedOut => Ended::TimedOut,
            ConnectionError::Reset => Ended::Reset,
            ConnectionError::LocallyClosed => Ended::Local,
            other => Ended::Failed(other.to_string()),
        }
    }
}

impl Ended {
    /// For the per-connection log line: `app 0x100 "reason"`, `timeout`, …
    pub fn describe(&self) -> String {
        let text = |r: &[u8]| String::from_utf8_lossy(r).replace(['"', '\n', '\r'], "'");
        match self {
            Ended::App { code, reason } => format!("app {code:#x} \"{}\"", text(reason)),
            Ended::Transport { code, reason } => {
                format!("transport {code:#x} \"{}\"", text(reason))
            }
            Ended::TimedOut => "timeout".into(),
            Ended::Reset => "stateless-reset".into(),
            Ended::Local => "local".into(),
            Ended::Failed(why) => format!("failed \"{}\"", text(why.as_bytes())),
        }
    }
}

/// The application close the proxy sends on the other side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Close {
    pub code: u64,
    pub reason: Vec<u8>,
}

fn cut(mut reason: Vec<u8>) -> Vec<u8> {
    reason.truncate(MAX_REASON);
    reason
}

/// What to send on the other side when `side` (e.g. "next hop") ended as
/// `ended`. `None` when the proxy itself closed it: the other side has
/// already been told, or is being told by whoever closed it.
pub fn relay_close(ended: &Ended, side: &str) -> Option<Close> {
    let say = |what: String| cut(format!("quic-pep: {side}: {what}").into_bytes());
    match ended {
        // Carried across as it is: same code, same reason.
        Ended::App { code, reason } => Some(Close {
            code: *code,
            reason: cut(reason.clone()),
        }),
        Ended::Transport { code: 0, reason } => Some(Close {
            code: 0,
            reason: cut(reason.clone()),
        }),
        Ended::Transport { code, reason } => Some(Close {
            code: PEP_ERROR,
            reason: say(format!(
                "transport error {code:#x} {}",
                String::from_utf8_lossy(reason)
            )),
        }),
        Ended::TimedOut => Some(Close {
            code: 0,
            reason: say("idle timeout".into()),
        }),
        Ended::Reset => Some(Close {
            code: 0,
            reason: say("stateless reset".into()),
        }),
        Ended::Local => None,
        Ended::Failed(why) => Some(Close {
            code: PEP_ERROR,
            reason: say(why.clone()),
        }),
    }
}

/// How reading one stream ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadEnd {
    /// FIN: all data read.
    Fin,
    /// The sender reset it (RESET_STREAM with this code).
    Reset(u64),
    /// The connection went away.
    Lost,
}

/// What to do with the twin stream's sending half.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendAction {
    Finish,
    /// Carry the reset across with its code.
    Reset(u64),
    /// Reset with `PEP_ERROR`: the source connection went away mid-stream.
    /// (Dropping a quinn SendStream would finish it, and a FIN would pass
    /// a truncated stream off as complete.) The connection close follows.
    Abort,
}

pub fn on_read_end(end: ReadEnd) -> SendAction {
    match end {
        ReadEnd::Fin => SendAction::Finish,
        ReadEnd::Reset(code) => SendAction::Reset(code),
        ReadEnd::Lost => SendAction::Abort,
    }
}

/// The receiver of the twin stream sent STOP_SENDING with `code`: the proxy
/// asks the original sender to stop with the same code.
pub fn on_stopped(code: u64) -> u64 {
    code
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use quinn::{ApplicationClose, ConnectionClose, TransportErrorCode, VarInt};

    #[test]
    fn application_close_crosses_as_it_is() {
        let e = ConnectionError::ApplicationClosed(ApplicationClose {
            error_code: VarInt::from_u32(0x10c),
            reason: Bytes::from_static(b"bye"),
        });
        let ended = Ended::from(&e);
        assert_eq!(
            ended,
            Ended::App {
                code: 0x10c,
                reason: b"bye".to_vec()
            }
        );
        assert_eq!(
            relay_close(&ended, "client side"),
            Some(Close {
                code: 0x10c,
                reason: b"bye".to_vec()
            })
        );
        assert_eq!(ended.describe(), "app 0x10c \"bye\"");
    }

    #[test]
    fn long_reasons_are_cut() {
        let ended = Ended::App {
            code: 1,
            reason: vec![b'x'; 5000],
        };
        assert_eq!(relay_close(&ended, "x").unwrap().reason.len(), MAX_REASON);
    }

    #[test]
    fn transport_closes_become_application_closes() {
        let no_error = ConnectionError::ConnectionClosed(ConnectionClose {
            error_code: TransportErrorCode::NO_ERROR,
            frame_type: None,
            reason: Bytes::from_static(b"done"),
        });
        assert_eq!(
            relay_close(&Ended::from(&no_error), "client side"),
            Some(Close {
                code: 0,
                reason: b"done".to_vec()
            })
        );
        let violation = ConnectionError::ConnectionClosed(ConnectionClose {
            error_code: TransportErrorCode::PROTOCOL_VIOLATION,
            frame_type: None,
            reason: Bytes::from_static(b"bad frame"),
        });
        let c = relay_close(&Ended::from(&violation), "next hop").unwrap();
        assert_eq!(c.code, PEP_ERROR);
        assert_eq!(
            String::from_utf8(c.reason).unwrap(),
            "quic-pep: next hop: transport error 0xa bad frame"
        );
    }

    #[test]
    fn timeouts_and_resets_close_quietly_with_a_reason() {
        let c = relay_close(&Ended::from(&ConnectionError::TimedOut), "next hop").unwrap();
        assert_eq!(c.code, 0);
        assert_eq!(c.reason, b"quic-pep: next hop: idle timeout");
        let c = relay_close(&Ended::from(&ConnectionError::Reset), "client side").unwrap();
        assert_eq!(
            (c.code, c.reason.as_slice()),
            (0, &b"quic-pep: client side: stateless reset"[..])
        );
    }

    #[test]
    fn our_own_close_is_not_echoed() {
        assert_eq!(Ended::from(&ConnectionError::LocallyClosed), Ended::Local);
        assert_eq!(relay_close(&Ended::Local, "next hop"), None);
    }

    #[test]
    fn other_failures_are_errors() {
        let e = ConnectionError::VersionMismatch;
        let c = relay_close(&Ended::from(&e), "next hop").unwrap();
        assert_eq!(c.code, PEP_ERROR);
        assert!(String::from_utf8(c.reason)
            .unwrap()
            .starts_with("quic-pep: next hop: "));
    }

    #[test]
    fn stream_ends_cross_with_their_codes() {
        assert_eq!(on_read_end(ReadEnd::Fin), SendAction::Finish);
        assert_eq!(on_read_end(ReadEnd::Reset(0x10c)), SendAction::Reset(0x10c));
        assert_eq!(on_read_end(ReadEnd::Lost), SendAction::Abort);
        assert_eq!(on_stopped(0x10b), 0x10b);
    }

    #[test]
    fn descriptions_stay_on_one_line() {
        let d = Ended::Transport {
            code: 0,
            reason: b"a\"b\nc".to_vec(),
        }
        .describe();
        assert_eq!(d, "transport 0x0 \"a'b'c\"");
        assert_eq!(Ended::TimedOut.describe(), "timeout");
    }
}
