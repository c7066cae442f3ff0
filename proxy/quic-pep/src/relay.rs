//! Relaying one client connection: every stream in both directions, with
//! the same stream IDs on both sides (`streams::Mirror`), stream ends and
//! connection closes carried across (`close`), counts kept (`stats`).
//!
//! Four accept loops, one per stream kind, each accepting on the side that
//! kind is opened from and opening the twin on the other, one stream at a
//! time (that order is what keeps the IDs equal). Each stream direction is
//! then one task copying chunks (`Bytes`, no copy of the data) from a
//! `RecvStream` to a `SendStream`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use quinn::{Connection, ReadError, RecvStream, SendStream, VarInt, WriteError};
use tokio::sync::Notify;

use crate::close::{self, Ended, ReadEnd, SendAction, PEP_ERROR};
use crate::limits::BATCH;
use crate::log::Log;
use crate::stats::{Counters, Pair, Stats};
use crate::streams::{Dir, Kind, Mirror, Side};

/// How long, after one side went away, data already received from it may
/// take to reach the other side before the close is relayed.
pub const DRAIN: Duration = Duration::from_secs(2);

/// How a relayed connection ended.
#[derive(Debug)]
pub struct Outcome {
    /// The side that went away first, and how.
    pub first: Side,
    pub ended: Ended,
    pub counters: Arc<Counters>,
    pub duration: Duration,
}

impl Outcome {
    /// The per-connection log line's tail.
    pub fn describe(&self) -> String {
        use std::sync::atomic::Ordering::Relaxed;
        let c = &self.counters;
        let streams: Vec<String> = Kind::ALL
            .iter()
            .map(|k| {
                format!(
                    "{}:{}",
                    k.name(),
                    c.streams[k.bits() as usize].load(Relaxed)
                )
            })
            .collect();
        format!(
            "closed by {} ({}) up={} down={} streams={} resets={} stops={} id_mismatches={} duration_ms={}",
            self.first.name(),
            self.ended.describe(),
            c.bytes_up.load(Relaxed),
            c.bytes_down.load(Relaxed),
            streams.join(","),
            c.resets.load(Relaxed),
            c.stops.load(Relaxed),
            c.id_mismatches.load(Relaxed),
            self.duration.as_millis()
        )
    }
}

/// Counts the stream tasks flowing towards one side, so a close can wait
/// for them to hand over what they already have.
#[derive(Clone, Default)]
pub(crate) struct Tracker(Arc<(AtomicUsize, Notify)>);

pub(crate) struct Entered(Tracker);

impl Tracker {
    pub(crate) fn enter(&self) -> Entered {
        self.0 .0.fetch_add(1, Ordering::AcqRel);
        Entered(self.clone())
    }

    pub(crate) async fn idle(&self) {
        loop {
            let notified = self.0 .1.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.0 .0.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        if self.0 .0 .0.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0 .0 .1.notify_waiters();
        }
    }
}

#[derive(Clone)]
struct Ctx {
    id: u64,
    count: Pair,
    log: Arc<Log>,
    /// Tasks writing towards the near side / the far side.
    to_near: Tracker,
    to_far: Tracker,
}

impl Ctx {
    fn towards(&self, side: Side) -> &Tracker {
        match side {
            Side::Near => &self.to_near,
            Side::Far => &self.to_far,
        }
    }
}

/// Relays `near` (the client's connection) and `far` (the next hop) until
/// either goes away, then closes the other with the relayed code and reason.
pub async fn run(
    id: u64,
    near: Connection,
    far: Connection,
    stats: Arc<Stats>,
    log: Arc<Log>,
) -> Outcome {
    let started = Instant::now();
    let counters = Arc::new(Counters::default());
    let ctx = Ctx {
        id,
        count: Pair {
            conn: counters.clone(),
            total: stats.clone(),
        },
        log,
        to_near: Tracker::default(),
        to_far: Tracker::default(),
    };
    let mut loops = tokio::task::JoinSet::new();
    for kind in Kind::ALL {
        let (from, to) = match kind.accepted_on() {
            Side::Near => (near.clone(), far.clone()),
            Side::Far => (far.clone(), near.clone()),
        };
        loops.spawn(accept_loop(kind, from, to, ctx.clone()));
    }
    let (first, err) = tokio::select! {
        e = near.closed() => (Side::Near, e),
        e = far.closed() => (Side::Far, e),
    };
    let ended = Ended::from(&err);
    let (other, other_side) = match first {
        Side::Near => (&far, Side::Far),
        Side::Far => (&near, Side::Near),
    };
    // What the closed side already delivered may still be on its way.
    let _ = tokio::time::timeout(DRAIN, ctx.towards(other_side).idle()).await;
    if let Some(c) = close::relay_close(&ended, first.name()) {
        other.close(VarInt::from_u64(c.code).unwrap_or(VarInt::MAX), &c.reason);
        stats.closes_relayed.fetch_add(1, Ordering::Relaxed);
    } else {
        other.close(0u32.into(), b"");
    }
    // Both connections are closed now, so every stream task ends at its next
    // step; aborting the accept loops drops whatever they still hold.
    loops.abort_all();
    while loops.join_next().await.is_some() {}
    Outcome {
        first,
        ended,
        counters,
        duration: started.elapsed(),
    }
}

pub(crate) enum Accepted {
    Bi(SendStream, RecvStream),
    Uni(RecvStream),
}

pub(crate) enum Opened {
    Bi(SendStream, RecvStream),
    Uni(SendStream),
}

pub(crate) async fn accept(conn: &Connection, dir: Dir) -> Option<Accepted> {
    match dir {
        Dir::Bi => conn.accept_bi().await.ok().map(|(s, r)| Accepted::Bi(s, r)),
        Dir::Uni => conn.accept_uni().await.ok().map(Accepted::Uni),
    }
}

pub(crate) async fn open(conn: &Connection, dir: Dir) -> Option<Opened> {
    match dir {
        Dir::Bi => conn.open_bi().await.ok().map(|(s, r)| Opened::Bi(s, r)),
        Dir::Uni => conn.open_uni().await.ok().map(Opened::Uni),
    }
}

/// Accepts the streams of `kind` on `from` in order and opens each twin on
/// `to` before accepting the next, so the twins get the same IDs.
async fn accept_loop(kind: Kind, from: Connection, to: Connection, ctx: Ctx) {
    let mut mirror = Mirror::new(kind);
    // the side the twins are opened on
    let to_side = kind.accepted_on().other();
    let up = to_side == Side::Far;
    while let Some(accepted) = accept(&from, kind.dir).await {
        let id = match &accepted {
            Accepted::Bi(_, r) | Accepted::Uni(r) => u64::from(r.id()),
        };
        let expected = match mirror.accepted(id) {
            Ok(e) => e,
            Err(e) => {
                ctx.count.mismatch();
                ctx.log
                    .line(&format!("conn {} stream-id mismatch: {e}", ctx.id));
                id
            }
        };
        let Some(opened) = open(&to, kind.dir).await else {
            // the other side is gone: don't let a dropped stream pass for a finished one
            abort(accepted);
            break;
        };
        check_twin(&mirror, expected, &opened, &ctx.count, &ctx.log, ctx.id);
        ctx.count.stream(kind);
        match (accepted, opened) {
            (Accepted::Bi(from_send, from_recv), Opened::Bi(to_send, to_recv)) => {
                spawn_copy(from_recv, to_send, up, &ctx, to_side);
                spawn_copy(to_recv, from_send, !up, &ctx, to_side.other());
            }
            (Accepted::Uni(from_recv), Opened::Uni(to_send)) => {
                spawn_copy(from_recv, to_send, up, &ctx, to_side);
            }
            _ => unreachable!("accept and open use the same direction"),
        }
    }
}

/// Checks that the twin of stream `expected` got its ID; a mismatch is
/// counted and logged.
pub(crate) fn check_twin(
    mirror: &Mirror,
    expected: u64,
    opened: &Opened,
    count: &Pair,
    log: &Log,
    conn: u64,
) {
    let actual = match opened {
        Opened::Bi(s, _) | Opened::Uni(s) => u64::from(s.id()),
    };
    if let Err(e) = mirror.opened(expected, actual) {
        count.mismatch();
        log.line(&format!("conn {conn} stream-id mismatch: {e}"));
    }
}

pub(crate) fn abort(accepted: Accepted) {
    let code = VarInt::from_u64(PEP_ERROR).unwrap();
    match accepted {
        Accepted::Bi(mut s, mut r) => {
            let _ = s.reset(code);
            let _ = r.stop(code);
        }
        Accepted::Uni(mut r) => {
            let _ = r.stop(code);
        }
    }
}

fn spawn_copy(recv: RecvStream, send: SendStream, up: bool, ctx: &Ctx, towards: Side) {
    let entered = ctx.towards(towards).enter();
    let count = ctx.count.clone();
    tokio::spawn(async move {
        let (mut recv, mut send) = (recv, send);
        let _ = copy(&mut recv, &mut send, up, &count).await;
        drop(entered);
    });
}

/// Copies one stream direction until it ends, then carries the end across:
/// FIN → FIN (and waits until the peer has it all), RESET_STREAM → RESET_STREAM,
/// STOP_SENDING on `send` → STOP_SENDING on `recv`, each with its code.
/// Returns the code of a RESET_STREAM it carried across (the tunnel tells
/// its peer about those on the control stream too).
pub(crate) async fn copy(
    recv: &mut RecvStream,
    send: &mut SendStream,
    up: bool,
    count: &Pair,
) -> Option<u64> {
    let stopped = send.stopped();
    tokio::pin!(stopped);
    let mut bufs: [Bytes; BATCH] = Default::default();
    let end = loop {
        tokio::select! {
            biased;
            r = recv.read_chunks(&mut bufs) => match r {
                Ok(Some(n)) => {
                    let len: usize = bufs[..n].iter().map(Bytes::len).sum();
                    count.bytes(up, len as u64);
                    match send.write_all_chunks(&mut bufs[..n]).await {
                        Ok(()) => {}
                        Err(WriteError::Stopped(code)) => {
                            let _ = recv.stop(VarInt::from_u64(close::on_stopped(code.into_inner())).unwrap_or(code));
                            count.stop();
                            return None;
                        }
                        // connection gone: its close is relayed
                        Err(_) => return None,
                    }
                }
                Ok(None) => break ReadEnd::Fin,
                Err(ReadError::Reset(code)) => break ReadEnd::Reset(code.into_inner()),
                Err(_) => break ReadEnd::Lost,
            },
            s = &mut stopped => {
                if let Ok(Some(code)) = s {
                    let _ = recv.stop(VarInt::from_u64(close::on_stopped(code.into_inner())).unwrap_or(code));
                    count.stop();
                }
                return None;
            }
        }
    };
    match close::on_read_end(end) {
        SendAction::Finish => {
            let _ = send.finish();
            // Holding the stream until the peer has acknowledged it all lets
            // a close from the source side wait for it (see `DRAIN`).
            let _ = stopped.await;
            None
        }
        SendAction::Reset(code) => {
            let _ = send.reset(VarInt::from_u64(code).unwrap_or(VarInt::MAX));
            count.reset();
            Some(code)
        }
        SendAction::Abort => {
            let _ = send.reset(VarInt::from_u64(PEP_ERROR).unwrap());
            None
        }
    }
}
