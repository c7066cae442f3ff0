//! The request → response decision, with no I/O of its own.
//!
//! `decide` takes the method, the raw (percent-encoded) request path and a
//! `stat` function that says what lives at a path under the root, and returns
//! the status, the headers and what the body is. The listeners (HTTP/1.1,
//! HTTP/2, HTTP/3) only carry this decision to the wire.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::validators::{Memo, Validators};

/// What `stat` says about a path under the root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A file of `len` bytes, with its validators (None: unreadable).
    File {
        len: u64,
        validators: Option<Validators>,
    },
    Dir,
    Missing,
}

/// Why a request path cannot name a file under the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reject {
    /// Not an origin-form path (`*`, `http://…`), a bad `%` escape, not
    /// UTF-8, a NUL or a backslash.
    Malformed,
    /// A `..` segment, before or after percent-decoding.
    Traversal,
}

/// The body a decision sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// No body (HEAD, or nothing to say).
    None,
    /// A short fixed text (error pages).
    Text(&'static str),
    /// The file at this path (root joined with the resolved path), `len` bytes.
    File { path: PathBuf, len: u64 },
}

/// Response headers, names in lower case, in the order to send them (a
/// name may repeat).
pub type Headers = Vec<(Cow<'static, str>, String)>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub status: u16,
    pub headers: Headers,
    pub body: Body,
    /// Body bytes this response sends (0 for HEAD): what the request log says.
    pub bytes: u64,
    /// The request matched nothing the server holds (`--archive` only: the
    /// request log marks it `unmatched`).
    pub unmatched: bool,
}

impl Decision {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub const NOT_FOUND_TEXT: &str = "404 not found\n";
pub const BAD_REQUEST_TEXT: &str = "400 bad request\n";
pub const NOT_ALLOWED_TEXT: &str = "405 method not allowed: GET and HEAD only\n";
pub const INTERNAL_ERROR_TEXT: &str = "500 could not read the file\n";

/// Turn a request path into a path relative to the root: the query and the
/// fragment are dropped, `%XX` escapes decoded, empty and `.` segments
/// skipped; `..` (encoded or not) is refused. The empty path is the root.
pub fn resolve_path(raw: &str) -> Result<PathBuf, Reject> {
    let path = raw.split(['?', '#']).next().unwrap_or("");
    if !path.starts_with('/') {
        return Err(Reject::Malformed);
    }
    let decoded = percent_decode(path).ok_or(Reject::Malformed)?;
    let decoded = String::from_utf8(decoded).map_err(|_| Reject::Malformed)?;
    if decoded.contains(['\0', '\\']) {
        return Err(Reject::Malformed);
    }
    let mut out = PathBuf::new();
    for segment in decoded.split('/') {
        match segment {
            "" | "." => {}
            ".." => return Err(Reject::Traversal),
            s => out.push(s),
        }
    }
    Ok(out)
}

/// Decode `%XX` escapes; `None` for a `%` not followed by two hex digits.
/// `+` stays `+` (it means a space only in form bodies, not in paths).
pub fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hi = hex(*bytes.get(i + 1)?)?;
            let lo = hex(*bytes.get(i + 2)?)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// The Content-Type for a file, by its extension (case-insensitive).
pub fn content_type(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" | "map" => "application/json",
        "txt" => "text/plain; charset=utf-8",
        "csv" => "text/csv; charset=utf-8",
        "xml" => "application/xml",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "png" => "image/png",
        "svg" => "image/svg+xml",
        "ico" => "image/x-icon",
        "webp" => "image/webp",
        "avif" => "image/avif",
        "bmp" => "image/bmp",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "ttf" => "font/ttf",
        "otf" => "font/otf",
        "wasm" => "application/wasm",
        "pdf" => "application/pdf",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "mp3" => "audio/mpeg",
        _ => "application/octet-stream",
    }
}

/// Which responses advertise HTTP/3 with `Alt-Svc` (`origin serve
/// --alt-svc`). Over HTTP/3 it matters to Chromium: only an origin it
/// knows by Alt-Svc to speak HTTP/3 counts as able to prioritize, and
/// without that it holds back low-priority requests (images) at six in
/// flight per host (sites/origin/README.md, "Alt-Svc and Chromium").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AltSvc {
    /// Every response, as large HTTP/3 deployments send it.
    #[default]
    All,
    /// Only responses over TCP.
    Tcp,
}

impl AltSvc {
    pub fn parse(v: &str) -> Option<AltSvc> {
        match v {
            "all" => Some(AltSvc::All),
            "tcp" => Some(AltSvc::Tcp),
            _ => None,
        }
    }

    /// Whether a response over TCP (`tcp`) or over HTTP/3 carries Alt-Svc.
    pub fn on(self, tcp: bool) -> bool {
        tcp || self == AltSvc::All
    }
}

/// Headers every response carries, whatever its status, and a file's
/// validators (`validators`).
fn common_headers(
    content_type: &str,
    len: u64,
    validators: Option<&Validators>,
    alt_svc: Option<&str>,
) -> Headers {
    let mut h: Headers = vec![
        ("content-type".into(), content_type.to_string()),
        ("cache-control".into(), "no-store".to_string()),
    ];
    if let Some(v) = validators {
        h.push(("etag".into(), v.etag.clone()));
        h.push(("last-modified".into(), v.last_modified.clone()));
    }
    server_headers(&mut h, Some(len), alt_svc);
    h
}

/// What the server itself adds to every response, of a site directory or
/// an archive: `content-length` (`len`; None for a status that has no
/// body), `timing-allow-origin: *` (Resource Timing keeps its detailed
/// timestamps for every object, cross-origin ones too) and Alt-Svc, if
/// given.
pub fn server_headers(h: &mut Headers, len: Option<u64>, alt_svc: Option<&str>) {
    if let Some(len) = len {
        h.push(("content-length".into(), len.to_string()));
    }
    h.push(("timing-allow-origin".into(), "*".to_string()));
    if let Some(v) = alt_svc {
        h.push(("alt-svc".into(), v.to_string()));
    }
}

/// A short text response (errors), with the common headers.
pub fn text_response(
    status: u16,
    text: &'static str,
    head: bool,
    alt_svc: Option<&str>,
) -> Decision {
    let len = text.len() as u64;
    Decision {
        status,
        headers: common_headers("text/plain; charset=utf-8", len, None, alt_svc),
        body: if head { Body::None } else { Body::Text(text) },
        bytes: if head { 0 } else { len },
        unmatched: false,
    }
}

/// The response to a request that named a file which then could not be
/// opened or read (it vanished, or permissions): 404 if gone, else 500.
pub fn unreadable(head: bool, gone: bool, alt_svc: Option<&str>) -> Decision {
    if gone {
        text_response(404, NOT_FOUND_TEXT, head, alt_svc)
    } else {
        text_response(500, INTERNAL_ERROR_TEXT, head, alt_svc)
    }
}

/// Decide the response to `method raw_path`.
///
/// `stat` is asked about paths `root.join(relative)`; it must say `Missing`
/// for anything that resolves (through symlinks) outside the root.
/// `alt_svc` is the Alt-Svc value to add (TCP listeners), if any.
pub fn decide(
    method: &str,
    raw_path: &str,
    root: &Path,
    stat: impl Fn(&Path) -> Entry,
    alt_svc: Option<&str>,
) -> Decision {
    let head = match method {
        "GET" => false,
        "HEAD" => true,
        _ => {
            let mut d = text_response(405, NOT_ALLOWED_TEXT, false, alt_svc);
            d.headers.push(("allow".into(), "GET, HEAD".to_string()));
            return d;
        }
    };
    let rel = match resolve_path(raw_path) {
        Ok(rel) => rel,
        Err(_) => return text_response(400, BAD_REQUEST_TEXT, head, alt_svc),
    };
    let mut path = root.join(&rel);
    let mut entry = stat(&path);
    if entry == Entry::Dir {
        path.push("index.html");
        entry = stat(&path);
    }
    match entry {
        Entry::File { len, validators } => Decision {
            status: 200,
            headers: common_headers(content_type(&path), len, validators.as_ref(), alt_svc),
            body: if head {
                Body::None
            } else {
                Body::File { path, len }
            },
            bytes: if head { 0 } else { len },
            unmatched: false,
        },
        Entry::Dir | Entry::Missing => text_response(404, NOT_FOUND_TEXT, head, alt_svc),
    }
}

/// `stat` over the real file system, confined to `root_canonical` (the
/// canonical root): a path that resolves outside it through a symlink is
/// `Missing`. A file's validators come from `memo`.
pub fn stat_confined(root_canonical: &Path, path: &Path, memo: &Memo) -> Entry {
    let Ok(real) = std::fs::canonicalize(path) else {
        return Entry::Missing;
    };
    if !real.starts_with(root_canonical) {
        return Entry::Missing;
    }
    match std::fs::metadata(&real) {
        Ok(m) if m.is_file() => Entry::File {
            len: m.len(),
            validators: memo.of(&real),
        },
        Ok(m) if m.is_dir() => Entry::Dir,
        _ => Entry::Missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const MODIFIED: &str = "Sun, 06 Nov 1994 08:49:37 GMT";

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    #[test]
    fn resolves_plain_paths() {
        assert_eq!(resolve_path("/"), Ok(p("")));
        assert_eq!(resolve_path("/index.html"), Ok(p("index.html")));
        assert_eq!(resolve_path("/a/b/c.css"), Ok(p("a/b/c.css")));
        assert_eq!(resolve_path("//a///b/./c.js"), Ok(p("a/b/c.js")));
        assert_eq!(resolve_path("/a/"), Ok(p("a")));
    }

    #[test]
    fn drops_query_and_fragment() {
        assert_eq!(resolve_path("/img.png?v=3&x=/../.."), Ok(p("img.png")));
        assert_eq!(resolve_path("/img.png#top"), Ok(p("img.png")));
        assert_eq!(resolve_path("/?x"), Ok(p("")));
    }

    #[test]
    fn percent_decodes_before_checking() {
        assert_eq!(resolve_path("/my%20file.txt"), Ok(p("my file.txt")));
        assert_eq!(resolve_path("/a%2Fb.txt"), Ok(p("a/b.txt")));
        assert_eq!(resolve_path("/caf%C3%A9.html"), Ok(p("café.html")));
        assert_eq!(resolve_path("/a+b"), Ok(p("a+b")));
        // a double-encoded dot is a literal "%2e" file name, not a traversal
        assert_eq!(resolve_path("/%252e%252e/x"), Ok(p("%2e%2e/x")));
    }

    #[test]
    fn refuses_traversal() {
        for raw in [
            "/..",
            "/../etc/passwd",
            "/a/../../etc/passwd",
            "/a/..",
            "/%2e%2e/etc/passwd",
            "/%2E%2E/etc/passwd",
            "/.%2e/x",
            "/%2e./x",
            "/a/..%2f..%2fetc/passwd",
            "/a%2f..%2f..%2fetc%2fpasswd",
        ] {
            assert_eq!(resolve_path(raw), Err(Reject::Traversal), "{raw}");
        }
    }

    #[test]
    fn refuses_malformed() {
        for raw in [
            "",
            "*",
            "index.html",
            "http://example.com/x",
            "/%",
            "/%4",
            "/%zz",
            "/%ff%fe",
            "/a%00b",
            "/a%5c..%5cb",
            "/a\\b",
        ] {
            assert_eq!(resolve_path(raw), Err(Reject::Malformed), "{raw:?}");
        }
    }

    #[test]
    fn content_types_by_extension() {
        let cases = [
            ("index.html", "text/html; charset=utf-8"),
            ("a.HTM", "text/html; charset=utf-8"),
            ("s.css", "text/css; charset=utf-8"),
            ("app.js", "text/javascript; charset=utf-8"),
            ("m.mjs", "text/javascript; charset=utf-8"),
            ("p.JPG", "image/jpeg"),
            ("p.jpeg", "image/jpeg"),
            ("a.gif", "image/gif"),
            ("a.png", "image/png"),
            ("a.svg", "image/svg+xml"),
            ("r.txt", "text/plain; charset=utf-8"),
            ("d.json", "application/json"),
            ("favicon.ico", "image/x-icon"),
            ("f.woff2", "font/woff2"),
            ("f.woff", "font/woff"),
            ("i.webp", "image/webp"),
            ("blob.bin", "application/octet-stream"),
            ("noext", "application/octet-stream"),
            ("dir.d/noext", "application/octet-stream"),
        ];
        for (name, ct) in cases {
            assert_eq!(content_type(Path::new(name)), ct, "{name}");
        }
    }

    /// A fake file system: files with their sizes; their parents are dirs.
    fn fake(files: &[(&str, u64)]) -> impl Fn(&Path) -> Entry {
        let mut map: HashMap<PathBuf, Entry> = HashMap::new();
        for (f, len) in files {
            let path = Path::new("/site").join(f);
            let mut dir = path.parent();
            while let Some(d) = dir {
                map.insert(d.to_path_buf(), Entry::Dir);
                dir = d.parent();
            }
            let validators = Some(Validators {
                etag: format!("\"{f}\""),
                last_modified: MODIFIED.into(),
            });
            map.insert(
                path,
                Entry::File {
                    len: *len,
                    validators,
                },
            );
        }
        move |p: &Path| map.get(p).cloned().unwrap_or(Entry::Missing)
    }

    fn root() -> &'static Path {
        Path::new("/site")
    }

    #[test]
    fn get_serves_a_file_with_headers() {
        let stat = fake(&[("css/site.css", 1234)]);
        let d = decide(
            "GET",
            "/css/site.css?v=1",
            root(),
            stat,
            Some("h3=\":443\""),
        );
        assert_eq!(d.status, 200);
        assert_eq!(d.header("content-type"), Some("text/css; charset=utf-8"));
        assert_eq!(d.header("content-length"), Some("1234"));
        assert_eq!(d.header("cache-control"), Some("no-store"));
        assert_eq!(d.header("etag"), Some("\"css/site.css\""));
        assert_eq!(d.header("last-modified"), Some(MODIFIED));
        assert_eq!(d.header("alt-svc"), Some("h3=\":443\""));
        assert_eq!(d.header("content-encoding"), None);
        assert_eq!(
            d.body,
            Body::File {
                path: p("/site/css/site.css"),
                len: 1234
            }
        );
        assert_eq!(d.bytes, 1234);
    }

    #[test]
    fn alt_svc_over_h3_only_when_all() {
        assert!(AltSvc::All.on(false) && AltSvc::All.on(true));
        assert!(!AltSvc::Tcp.on(false) && AltSvc::Tcp.on(true));
        assert_eq!(AltSvc::parse("tcp"), Some(AltSvc::Tcp));
        assert_eq!(AltSvc::parse("h3"), None);
        assert_eq!(AltSvc::default(), AltSvc::All);
    }

    #[test]
    fn no_alt_svc_when_not_asked() {
        let d = decide("GET", "/a.txt", root(), fake(&[("a.txt", 1)]), None);
        assert_eq!(d.header("alt-svc"), None);
    }

    #[test]
    fn head_has_the_get_headers_and_no_body() {
        let stat = fake(&[("img/a.png", 5000)]);
        let get = decide("GET", "/img/a.png", root(), &stat, None);
        let head = decide("HEAD", "/img/a.png", root(), &stat, None);
        assert_eq!(head.status, 200);
        assert_eq!(head.headers, get.headers);
        assert_eq!(head.header("content-length"), Some("5000"));
        assert_eq!(head.body, Body::None);
        assert_eq!(head.bytes, 0);
    }

    #[test]
    fn root_and_directories_serve_index_html() {
        let stat = fake(&[
            ("index.html", 10),
            ("sub/index.html", 20),
            ("empty/x.css", 1),
        ]);
        let d = decide("GET", "/", root(), &stat, None);
        assert_eq!(d.status, 200);
        assert_eq!(
            d.body,
            Body::File {
                path: p("/site/index.html"),
                len: 10
            }
        );
        assert_eq!(d.header("content-type"), Some("text/html; charset=utf-8"));
        for raw in ["/sub", "/sub/", "/sub/?q"] {
            let d = decide("GET", raw, root(), &stat, None);
            assert_eq!(
                d.body,
                Body::File {
                    path: p("/site/sub/index.html"),
                    len: 20
                },
                "{raw}"
            );
        }
        // a directory without index.html is not listed
        assert_eq!(decide("GET", "/empty/", root(), &stat, None).status, 404);
    }

    #[test]
    fn missing_files_are_404() {
        let stat = fake(&[("index.html", 10)]);
        let d = decide("GET", "/nope.js", root(), &stat, None);
        assert_eq!(d.status, 404);
        assert_eq!(d.body, Body::Text(NOT_FOUND_TEXT));
        assert_eq!(
            d.header("content-length"),
            Some(NOT_FOUND_TEXT.len().to_string().as_str())
        );
        assert_eq!(d.header("cache-control"), Some("no-store"));
        assert_eq!(d.bytes, NOT_FOUND_TEXT.len() as u64);
        let h = decide("HEAD", "/nope.js", root(), &stat, None);
        assert_eq!((h.status, h.body, h.bytes), (404, Body::None, 0));
    }

    #[test]
    fn traversal_is_400_and_never_stats_outside() {
        let asked = std::cell::RefCell::new(Vec::new());
        let stat = |p: &Path| {
            asked.borrow_mut().push(p.to_path_buf());
            Entry::File {
                len: 1,
                validators: None,
            }
        };
        for raw in [
            "/../etc/passwd",
            "/%2e%2e/etc/passwd",
            "/a/..%2F..%2Fetc/passwd",
        ] {
            assert_eq!(decide("GET", raw, root(), stat, None).status, 400, "{raw}");
        }
        assert!(asked.borrow().is_empty());
    }

    #[test]
    fn other_methods_are_405() {
        let d = decide(
            "POST",
            "/index.html",
            root(),
            fake(&[("index.html", 1)]),
            None,
        );
        assert_eq!(d.status, 405);
        assert_eq!(d.header("allow"), Some("GET, HEAD"));
    }

    #[test]
    fn unreadable_files() {
        assert_eq!(unreadable(false, true, None).status, 404);
        assert_eq!(unreadable(false, false, None).status, 500);
        assert_eq!(unreadable(true, false, None).body, Body::None);
    }

    #[test]
    fn stat_confined_stays_under_the_root() {
        let base = std::env::temp_dir().join(format!("origin-stat-{}", std::process::id()));
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("a.txt"), b"hello").unwrap();
        std::fs::write(base.join("secret.txt"), b"secret").unwrap();
        std::os::unix::fs::symlink(base.join("secret.txt"), root.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(root.join("a.txt"), root.join("inside.txt")).unwrap();
        let canon = std::fs::canonicalize(&root).unwrap();
        let memo = Memo::default();
        let stat = |p: &Path| stat_confined(&canon, p, &memo);
        let a = Entry::File {
            len: 5,
            validators: crate::validators::of_file(&root.join("a.txt")),
        };
        assert!(matches!(
            &a,
            Entry::File {
                validators: Some(_),
                ..
            }
        ));
        assert_eq!(stat(&root.join("a.txt")), a);
        assert_eq!(stat(&root.join("inside.txt")), a);
        assert_eq!(stat(&root.join("sub")), Entry::Dir);
        assert_eq!(stat(&root.join("link.txt")), Entry::Missing);
        assert_eq!(stat(&root.join("nope")), Entry::Missing);
        std::fs::remove_dir_all(&base).unwrap();
    }
}
