//! A response body for hyper: nothing, a fixed text, or a file streamed in
//! chunks (never the whole file in memory).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, ReadBuf};

pub const CHUNK: usize = 64 * 1024;

pub enum ResponseBody {
    Empty,
    Bytes(Option<Bytes>),
    File {
        file: tokio::fs::File,
        remaining: u64,
        buf: Vec<u8>,
    },
}

impl ResponseBody {
    pub fn file(file: tokio::fs::File, len: u64) -> ResponseBody {
        ResponseBody::File {
            file,
            remaining: len,
            buf: Vec::new(),
        }
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match self.get_mut() {
            ResponseBody::Empty => Poll::Ready(None),
            ResponseBody::Bytes(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            ResponseBody::File {
                file,
                remaining,
                buf,
            } => {
                if *remaining == 0 {
                    return Poll::Ready(None);
                }
                let want = (*remaining).min(CHUNK as u64) as usize;
                if buf.len() < want {
                    buf.resize(want, 0);
                }
                let mut rb = ReadBuf::new(&mut buf[..want]);
                match Pin::new(file).poll_read(cx, &mut rb) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(Err(e)) => Poll::Ready(Some(Err(e))),
                    Poll::Ready(Ok(())) => {
                        let n = rb.filled().len();
                        if n == 0 {
                            // the file shrank under us: end the stream short
                            return Poll::Ready(Some(Err(io::Error::new(
                                io::ErrorKind::UnexpectedEof,
                                "file shorter than its Content-Length",
                            ))));
                        }
                        *remaining -= n as u64;
                        Poll::Ready(Some(Ok(Frame::data(Bytes::copy_from_slice(&buf[..n])))))
                    }
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Empty => true,
            ResponseBody::Bytes(b) => b.is_none(),
            ResponseBody::File { remaining, .. } => *remaining == 0,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Empty => SizeHint::with_exact(0),
            ResponseBody::Bytes(b) => {
                SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64))
            }
            ResponseBody::File { remaining, .. } => SizeHint::with_exact(*remaining),
        }
    }
}
