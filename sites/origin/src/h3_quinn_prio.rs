//! h3 over quinn, with a handle to set each response stream's send priority.
//!
//! Why this exists: quinn sends the data of streams with equal priority
//! round-robin, so without priorities an HTTP/3 page's render-blocking
//! stylesheets share the link with every image and iframe requested at the
//! same time and finish last. Browsers say what they need first (RFC 9218
//! Extensible Priorities: the `priority` request header and PRIORITY_UPDATE
//! frames), and quinn can act on it (`quinn::SendStream::set_priority`), but
//! h3-quinn 0.0.10 keeps the quinn streams to itself and h3 0.0.8 neither
//! exposes the transport stream under a request nor reports PRIORITY_UPDATE
//! frames (it skips them as unknown). So this module implements h3's
//! `h3::quic` traits over quinn itself and, per connection, keeps a
//! `StreamPriorities` table: request stream id → its quinn send half. The
//! request handler sets a response's priority through it
//! (`StreamPriorities::apply_request`), and the bytes of the client's
//! control stream are watched for PRIORITY_UPDATE frames, which re-set it.
//!
//! What the numbers are is decided in `priority` (plain, unit-tested); this
//! module only carries them to quinn. Only the server uses it: opening
//! bidirectional streams (a client's job) is implemented, as the traits
//! require, but never exercised.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{ready, Context, Poll};

use bytes::{Buf, Bytes};
use h3::quic::{self, ConnectionErrorIncoming, StreamErrorIncoming, StreamId, WriteBuf};
use quinn::VarInt;

use crate::priority::{self, ControlStreamTap, Policy, Priority};

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type Bi = (quinn::SendStream, quinn::RecvStream);
type SharedSend = Arc<Mutex<quinn::SendStream>>;

/// PRIORITY_UPDATE frames may name request streams not opened yet; at most
/// this many such early updates are kept per connection.
const MAX_EARLY_UPDATES: usize = 256;

/// Bytes read from a quinn receive stream at a time (request headers and
/// control frames: small).
const READ_BUF: usize = 8 * 1024;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Entry {
    /// the stream's send half; None for an update that came before the stream
    send: Option<SharedSend>,
    /// the latest PRIORITY_UPDATE for the stream
    update: Option<Priority>,
}

#[derive(Default)]
struct Table {
    streams: HashMap<u64, Entry>,
    /// entries that are early updates only
    early: usize,
    /// the lowest client-initiated bidirectional stream id not yet accepted
    next_request: u64,
}

/// One connection's request streams by id, to set the priority their
/// responses are sent with. A stream stays in the table (and settable) until
/// its response is fully acknowledged, stopped, or the connection ends — not
/// only while the handler runs — so a PRIORITY_UPDATE for a response that
/// is already buffered in quinn still takes effect.
#[derive(Clone)]
pub struct StreamPriorities {
    table: Arc<Mutex<Table>>,
    policy: Policy,
}

impl StreamPriorities {
    fn new(policy: Policy) -> StreamPriorities {
        StreamPriorities {
            table: Arc::default(),
            policy,
        }
    }

    // Priorities are set with the table locked, so that a header and a
    // PRIORITY_UPDATE racing for one stream end with the one recorded last.
    // Lock order: table, then a stream's mutex (then quinn's own); writers
    // take only the stream's.
    fn set(&self, send: &SharedSend, id: u64, p: Priority) {
        let _ = lock(send).set_priority(priority::send_priority(self.policy, p, id));
    }

    /// Set the priority of the response on request stream `id` from the
    /// request's `priority` header (`header`, None if it had none) — or from
    /// a PRIORITY_UPDATE for the stream, which wins when one came. Returns
    /// the priority the client asked for (None: it said nothing, and the
    /// response goes with the defaults, `u=3` non-incremental). Call it
    /// before sending the response.
    pub fn apply_request(&self, id: u64, header: Option<Priority>) -> Option<Priority> {
        let t = lock(&self.table);
        let Some(e) = t.streams.get(&id) else {
            return header;
        };
        let given = e.update.or(header);
        if let Some(send) = &e.send {
            self.set(send, id, given.unwrap_or_default());
        }
        given
    }

    /// A PRIORITY_UPDATE for request stream `id`.
    fn update(&self, id: u64, p: Priority) {
        if id & 0x3 != 0 {
            return; // not a client-initiated bidirectional stream
        }
        let mut t = lock(&self.table);
        let t = &mut *t;
        if let Some(e) = t.streams.get_mut(&id) {
            e.update = Some(p);
            if let Some(send) = &e.send {
                self.set(send, id, p);
            }
        } else if id >= t.next_request && t.early < MAX_EARLY_UPDATES {
            // a stream not opened yet (one that is gone is finished)
            t.early += 1;
            t.streams.insert(
                id,
                Entry {
                    send: None,
                    update: Some(p),
                },
            );
        }
    }

    fn register(&self, id: u64, send: SharedSend) {
        let mut t = lock(&self.table);
        let t = &mut *t;
        t.next_request = t.next_request.max(id + 4);
        match t.streams.get_mut(&id) {
            Some(e) => {
                // an early PRIORITY_UPDATE
                t.early -= 1;
                if let Some(p) = e.update {
                    self.set(&send, id, p);
                }
                e.send = Some(send);
            }
            None => {
                t.streams.insert(
                    id,
                    Entry {
                        send: Some(send),
                        update: None,
                    },
                );
            }
        }
    }

    fn forget(&self, id: u64) {
        let gone = lock(&self.table).streams.remove(&id);
        drop(gone); // the quinn stream's drop: outside the table's lock
    }
}

// ---- errors: quinn → h3 ----

fn connection_error(e: quinn::ConnectionError) -> ConnectionErrorIncoming {
    match e {
        quinn::ConnectionError::ApplicationClosed(close) => {
            ConnectionErrorIncoming::ApplicationClose {
                error_code: close.error_code.into_inner(),
            }
        }
        quinn::ConnectionError::TimedOut => ConnectionErrorIncoming::Timeout,
        other => ConnectionErrorIncoming::Undefined(Arc::new(other)),
    }
}

fn stream_connection_error(e: quinn::ConnectionError) -> StreamErrorIncoming {
    StreamErrorIncoming::ConnectionErrorIncoming {
        connection_error: connection_error(e),
    }
}

fn write_error(e: quinn::WriteError) -> StreamErrorIncoming {
    match e {
        quinn::WriteError::Stopped(code) => StreamErrorIncoming::StreamTerminated {
            error_code: code.into_inner(),
        },
        quinn::WriteError::ConnectionLost(e) => stream_connection_error(e),
        other => StreamErrorIncoming::Unknown(Box::new(other)),
    }
}

fn read_error(e: quinn::ReadError) -> StreamErrorIncoming {
    match e {
        quinn::ReadError::Reset(code) => StreamErrorIncoming::StreamTerminated {
            error_code: code.into_inner(),
        },
        quinn::ReadError::ConnectionLost(e) => stream_connection_error(e),
        other => StreamErrorIncoming::Unknown(Box::new(other)),
    }
}

fn h3_id(id: quinn::StreamId) -> StreamId {
    StreamId::try_from(u64::from(id)).expect("a QUIC stream id is a varint")
}

fn varint(code: u64) -> VarInt {
    VarInt::from_u64(code).unwrap_or(VarInt::MAX)
}

// ---- the connection ----

/// A quinn connection as an `h3::quic::Connection`.
pub struct Connection {
    conn: quinn::Connection,
    priorities: StreamPriorities,
    accepting_bi: Option<BoxFuture<Result<Bi, quinn::ConnectionError>>>,
    accepting_uni: Option<BoxFuture<Result<quinn::RecvStream, quinn::ConnectionError>>>,
    opener: OpenStreams,
}

impl Connection {
    /// A connection whose responses are ordered by `policy`.
    pub fn new(conn: quinn::Connection, policy: Policy) -> Connection {
        Connection {
            opener: OpenStreams::new(conn.clone()),
            conn,
            priorities: StreamPriorities::new(policy),
            accepting_bi: None,
            accepting_uni: None,
        }
    }

    /// The handle to set this connection's response priorities.
    pub fn priorities(&self) -> StreamPriorities {
        self.priorities.clone()
    }
}

impl<B: Buf> quic::Connection<B> for Connection {
    type RecvStream = RecvStream;
    type OpenStreams = OpenStreams;

    fn poll_accept_recv(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<RecvStream, ConnectionErrorIncoming>> {
        let fut = self.accepting_uni.get_or_insert_with(|| {
            let conn = self.conn.clone();
            Box::pin(async move { conn.accept_uni().await })
        });
        let res = ready!(fut.as_mut().poll(cx));
        self.accepting_uni = None;
        let recv = res.map_err(connection_error)?;
        // any of the client's unidirectional streams may be its control
        // stream; the tap turns itself off on the others
        Poll::Ready(Ok(RecvStream::new(
            recv,
            Some((ControlStreamTap::default(), self.priorities.clone())),
        )))
    }

    fn poll_accept_bidi(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<BidiStream<B>, ConnectionErrorIncoming>> {
        let fut = self.accepting_bi.get_or_insert_with(|| {
            let conn = self.conn.clone();
            Box::pin(async move { conn.accept_bi().await })
        });
        let res = ready!(fut.as_mut().poll(cx));
        self.accepting_bi = None;
        let (send, recv) = res.map_err(connection_error)?;
        let id = u64::from(send.id());
        let send = Arc::new(Mutex::new(send));
        self.priorities.register(id, send.clone());
        Poll::Ready(Ok(BidiStream {
            send: SendStream::new(send, id, Some(self.priorities.clone())),
            recv: RecvStream::new(recv, None),
        }))
    }

    fn opener(&self) -> OpenStreams {
        self.opener.clone()
    }
}

impl<B: Buf> quic::OpenStreams<B> for Connection {
    type BidiStream = BidiStream<B>;
    type SendStream = SendStream<B>;

    fn poll_open_bidi(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<BidiStream<B>, StreamErrorIncoming>> {
        quic::OpenStreams::<B>::poll_open_bidi(&mut self.opener, cx)
    }

    fn poll_open_send(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<SendStream<B>, StreamErrorIncoming>> {
        quic::OpenStreams::<B>::poll_open_send(&mut self.opener, cx)
    }

    fn close(&mut self, code: h3::error::Code, reason: &[u8]) {
        self.conn.close(varint(code.value()), reason);
    }
}

/// Opens the server's own streams (HTTP/3 control and QPACK streams). They
/// get `priority::SERVER_STREAM_PRIORITY`, above every response.
pub struct OpenStreams {
    conn: quinn::Connection,
    opening_bi: Option<BoxFuture<Result<Bi, quinn::ConnectionError>>>,
    opening_uni: Option<BoxFuture<Result<quinn::SendStream, quinn::ConnectionError>>>,
}

impl OpenStreams {
    fn new(conn: quinn::Connection) -> OpenStreams {
        OpenStreams {
            conn,
            opening_bi: None,
            opening_uni: None,
        }
    }
}

impl Clone for OpenStreams {
    fn clone(&self) -> Self {
        OpenStreams::new(self.conn.clone())
    }
}

impl<B: Buf> quic::OpenStreams<B> for OpenStreams {
    type BidiStream = BidiStream<B>;
    type SendStream = SendStream<B>;

    fn poll_open_bidi(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<BidiStream<B>, StreamErrorIncoming>> {
        let fut = self.opening_bi.get_or_insert_with(|| {
            let conn = self.conn.clone();
            Box::pin(async move { conn.open_bi().await })
        });
        let res = ready!(fut.as_mut().poll(cx));
        self.opening_bi = None;
        let (send, recv) = res.map_err(stream_connection_error)?;
        let id = u64::from(send.id());
        Poll::Ready(Ok(BidiStream {
            send: SendStream::new(Arc::new(Mutex::new(send)), id, None),
            recv: RecvStream::new(recv, None),
        }))
    }

    fn poll_open_send(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<SendStream<B>, StreamErrorIncoming>> {
        let fut = self.opening_uni.get_or_insert_with(|| {
            let conn = self.conn.clone();
            Box::pin(async move { conn.open_uni().await })
        });
        let res = ready!(fut.as_mut().poll(cx));
        self.opening_uni = None;
        let send = res.map_err(stream_connection_error)?;
        let _ = send.set_priority(priority::SERVER_STREAM_PRIORITY);
        let id = u64::from(send.id());
        Poll::Ready(Ok(SendStream::new(Arc::new(Mutex::new(send)), id, None)))
    }

    fn close(&mut self, code: h3::error::Code, reason: &[u8]) {
        self.conn.close(varint(code.value()), reason);
    }
}

// ---- streams ----

/// The send half of a stream. The quinn stream is shared with the
/// connection's `StreamPriorities` (request streams only).
pub struct SendStream<B: Buf> {
    send: SharedSend,
    id: u64,
    /// the frame h3 handed over and quinn has not taken whole yet
    writing: Option<WriteBuf<B>>,
    /// the table this request stream is in
    priorities: Option<StreamPriorities>,
}

impl<B: Buf> SendStream<B> {
    fn new(send: SharedSend, id: u64, priorities: Option<StreamPriorities>) -> Self {
        SendStream {
            send,
            id,
            writing: None,
            priorities,
        }
    }
}

impl<B: Buf> Drop for SendStream<B> {
    /// h3 is done with the stream. Finish it as quinn's own drop would, and
    /// keep it in the priority table until the peer has all of it (or it
    /// is stopped, or the connection is gone): its data may still be
    /// queued in quinn, and a PRIORITY_UPDATE may still move it.
    fn drop(&mut self) {
        let Some(priorities) = self.priorities.take() else {
            return;
        };
        let stopped = {
            let mut s = lock(&self.send);
            let _ = s.finish(); // already finished or reset: fine
            s.stopped()
        };
        let id = self.id;
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(async move {
                    let _ = stopped.await;
                    priorities.forget(id);
                });
            }
            Err(_) => priorities.forget(id),
        }
    }
}

impl<B: Buf> quic::SendStream<B> for SendStream<B> {
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        if let Some(data) = self.writing.as_mut() {
            let mut s = lock(&self.send);
            while data.has_remaining() {
                let n =
                    ready!(Pin::new(&mut *s).poll_write(cx, data.chunk())).map_err(write_error)?;
                data.advance(n);
            }
        }
        self.writing = None;
        Poll::Ready(Ok(()))
    }

    fn send_data<T: Into<WriteBuf<B>>>(&mut self, data: T) -> Result<(), StreamErrorIncoming> {
        if self.writing.is_some() {
            // h3 calls poll_ready until the last frame is taken before it
            // hands over the next; anything else is a bug there
            return Err(StreamErrorIncoming::ConnectionErrorIncoming {
                connection_error: ConnectionErrorIncoming::InternalError(
                    "send_data while the previous frame is being written".into(),
                ),
            });
        }
        self.writing = Some(data.into());
        Ok(())
    }

    fn poll_finish(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        ready!(quic::SendStream::poll_ready(self, cx))?;
        Poll::Ready(
            lock(&self.send)
                .finish()
                .map_err(|e| StreamErrorIncoming::Unknown(Box::new(e))),
        )
    }

    fn reset(&mut self, reset_code: u64) {
        let _ = lock(&self.send).reset(varint(reset_code));
    }

    fn send_id(&self) -> StreamId {
        StreamId::try_from(self.id).expect("a QUIC stream id is a varint")
    }
}

impl<B: Buf> quic::SendStreamUnframed<B> for SendStream<B> {
    fn poll_send<D: Buf>(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut D,
    ) -> Poll<Result<usize, StreamErrorIncoming>> {
        ready!(quic::SendStream::poll_ready(self, cx))?;
        let n = ready!(Pin::new(&mut *lock(&self.send)).poll_write(cx, buf.chunk()))
            .map_err(write_error)?;
        buf.advance(n);
        Poll::Ready(Ok(n))
    }
}

/// The receive half of a stream; on the client's unidirectional streams it
/// also feeds a `ControlStreamTap` and applies the PRIORITY_UPDATEs it finds.
pub struct RecvStream {
    recv: quinn::RecvStream,
    buf: Vec<u8>,
    tap: Option<(ControlStreamTap, StreamPriorities)>,
}

impl RecvStream {
    fn new(recv: quinn::RecvStream, tap: Option<(ControlStreamTap, StreamPriorities)>) -> Self {
        RecvStream {
            recv,
            buf: Vec::new(),
            tap,
        }
    }
}

impl quic::RecvStream for RecvStream {
    type Buf = Bytes;

    fn poll_data(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Option<Bytes>, StreamErrorIncoming>> {
        if self.buf.is_empty() {
            self.buf = vec![0; READ_BUF];
        }
        let n = ready!(self.recv.poll_read(cx, &mut self.buf)).map_err(read_error)?;
        if n == 0 {
            return Poll::Ready(Ok(None)); // finished
        }
        let data = &self.buf[..n];
        if let Some((tap, priorities)) = self.tap.as_mut() {
            for (id, p) in tap.feed(data) {
                priorities.update(id, p);
            }
            if tap.is_off() {
                self.tap = None;
            }
        }
        Poll::Ready(Ok(Some(Bytes::copy_from_slice(data))))
    }

    fn stop_sending(&mut self, error_code: u64) {
        let _ = self.recv.stop(varint(error_code));
    }

    fn recv_id(&self) -> StreamId {
        h3_id(self.recv.id())
    }
}

/// Both halves of a bidirectional stream.
pub struct BidiStream<B: Buf> {
    send: SendStream<B>,
    recv: RecvStream,
}

impl<B: Buf> quic::BidiStream<B> for BidiStream<B> {
    type SendStream = SendStream<B>;
    type RecvStream = RecvStream;

    fn split(self) -> (SendStream<B>, RecvStream) {
        (self.send, self.recv)
    }
}

impl<B: Buf> quic::SendStream<B> for BidiStream<B> {
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        self.send.poll_ready(cx)
    }

    fn send_data<T: Into<WriteBuf<B>>>(&mut self, data: T) -> Result<(), StreamErrorIncoming> {
        self.send.send_data(data)
    }

    fn poll_finish(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        self.send.poll_finish(cx)
    }

    fn reset(&mut self, reset_code: u64) {
        self.send.reset(reset_code)
    }

    fn send_id(&self) -> StreamId {
        self.send.send_id()
    }
}

impl<B: Buf> quic::SendStreamUnframed<B> for BidiStream<B> {
    fn poll_send<D: Buf>(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut D,
    ) -> Poll<Result<usize, StreamErrorIncoming>> {
        self.send.poll_send(cx, buf)
    }
}

impl<B: Buf> quic::RecvStream for BidiStream<B> {
    type Buf = Bytes;

    fn poll_data(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Option<Bytes>, StreamErrorIncoming>> {
        self.recv.poll_data(cx)
    }

    fn stop_sending(&mut self, error_code: u64) {
        self.recv.stop_sending(error_code)
    }

    fn recv_id(&self) -> StreamId {
        self.recv.recv_id()
    }
}
