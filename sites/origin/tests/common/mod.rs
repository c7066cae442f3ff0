//! What the origin's integration tests share: the binary, the time limit,
//! and clients for HTTP/1.1 and HTTP/2 (hyper) and HTTP/3 (quinn +
//! h3-quinn) over connections the test opens itself.

// each test file uses its own part
#![allow(dead_code)]

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, Bytes};
use http::{Request, Response};
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::{TokioExecutor, TokioIo};

pub const BIN: &str = env!("CARGO_BIN_EXE_origin");
pub const T: Duration = Duration::from_secs(10);

pub fn request(method: &str, uri: &str, host: &str) -> Request<Empty<Bytes>> {
    Request::builder()
        .method(method)
        .uri(uri)
        .header("host", host)
        .body(Empty::new())
        .unwrap()
}

pub async fn collect(resp: Response<hyper::body::Incoming>) -> (Response<()>, Vec<u8>) {
    let (parts, body) = resp.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes().to_vec();
    (Response::from_parts(parts, ()), bytes)
}

/// The header's value, or "" without one.
pub fn header<'a>(r: &'a Response<()>, name: &str) -> &'a str {
    r.headers()
        .get(name)
        .map(|v| v.to_str().unwrap())
        .unwrap_or("")
}

/// HTTP/1.1 on an already connected stream: one request per connection.
pub async fn fetch_h1<S>(io: S, req: Request<Empty<Bytes>>) -> (Response<()>, Vec<u8>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .unwrap();
    tokio::spawn(conn);
    collect(send.send_request(req).await.unwrap()).await
}

/// An HTTP/2 connection on an already connected stream.
pub async fn h2<S>(io: S) -> hyper::client::conn::http2::SendRequest<Empty<Bytes>>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (send, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(io))
            .await
            .unwrap();
    tokio::spawn(conn);
    send
}

/// An HTTP/3 client connection.
pub struct H3 {
    pub endpoint: quinn::Endpoint,
    pub conn: quinn::Connection,
    pub send: h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>,
    drive: tokio::task::JoinHandle<()>,
}

impl H3 {
    /// Connects from `socket` to `to`, naming `server_name` (SNI), with
    /// `tls` (its ALPN is set to h3 here).
    pub async fn connect(
        mut tls: rustls::ClientConfig,
        socket: UdpSocket,
        to: SocketAddr,
        server_name: &str,
    ) -> H3 {
        tls.alpn_protocols = vec![b"h3".to_vec()];
        tls.enable_early_data = false;
        let quic = quinn::crypto::rustls::QuicClientConfig::try_from(tls).unwrap();
        let mut endpoint = quinn::Endpoint::new(
            quinn::EndpointConfig::default(),
            None,
            socket,
            Arc::new(quinn::TokioRuntime),
        )
        .unwrap();
        endpoint.set_default_client_config(quinn::ClientConfig::new(Arc::new(quic)));
        let conn = endpoint.connect(to, server_name).unwrap().await.unwrap();
        let (mut driver, send) = h3::client::new(h3_quinn::Connection::new(conn.clone()))
            .await
            .unwrap();
        let drive = tokio::spawn(async move {
            let _ = std::future::poll_fn(|cx| driver.poll_close(cx)).await;
        });
        H3 {
            endpoint,
            conn,
            send,
            drive,
        }
    }

    /// One request (no body) and its whole response.
    pub async fn fetch(&mut self, req: Request<()>) -> (Response<()>, Vec<u8>) {
        let mut stream = self.send.send_request(req).await.unwrap();
        stream.finish().await.unwrap();
        let resp = stream.recv_response().await.unwrap();
        let mut body = Vec::new();
        while let Some(mut chunk) = stream.recv_data().await.unwrap() {
            while chunk.has_remaining() {
                let c = chunk.chunk();
                body.extend_from_slice(c);
                let n = c.len();
                chunk.advance(n);
            }
        }
        (resp, body)
    }

    pub fn close(self) {
        drop(self.send);
        self.drive.abort();
        self.endpoint.close(0u32.into(), b"done");
    }
}
