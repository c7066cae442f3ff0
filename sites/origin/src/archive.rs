//! A site archive (`origin serve --archive DIR`): the recorded responses of
//! a page and of every origin it loaded from, read once at start-up, and
//! the rule that picks the response to a request.
//!
//! `DIR/archive.json` (written by `satbench record` and `satbench
//! import-har`; sites/README.md documents it):
//!
//! ```json
//! {"format": "satbench-archive", "version": 1, "page": "https://www.example.net/",
//!  "entries": [{"method": "GET", "url": "https://cdn.example.net/app.js?v=2",
//!               "status": 200, "headers": [["content-type", "text/javascript"],
//!               ["content-encoding", "br"]], "body": "bodies/0003"}],
//!  "missing": []}
//! ```
//!
//! A body file holds the bytes as they went on the wire (still encoded when
//! a `content-encoding` header says so); they are sent as they are.
//! Unknown keys are ignored, so later writers may add some.
//!
//! The matching rule (sites/README.md, "Matching a request"; the JS side's
//! `harness/archive/match.js` applies the same one): the request's URL
//! is `scheme://host[:port]/path?query` — the listener's scheme, the Host
//! header or `:authority` (lower-cased; the port left out when it is the
//! scheme's default or the listener's own), the path and query as
//! received. Then, among entries of the request's method, the first in
//! archive order whose URL is the same; else the first whose URL without
//! its query is the request's without its query; else nothing (a 404,
//! logged `unmatched`). A HEAD request that finds no HEAD entry by a rule
//! may take a GET entry by that rule (its headers, no body). An entry with
//! a 1xx status answers nothing.

use std::borrow::Cow;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::site::{self, Body, Decision, Headers};

/// The manifest's file name in an archive's directory.
pub const MANIFEST: &str = "archive.json";
/// Its `format` value.
pub const FORMAT: &str = "satbench-archive";
/// The `version` this server reads.
pub const VERSION: u64 = 1;

/// The body of a 404 for a request no entry matches.
pub const NOT_IN_ARCHIVE_TEXT: &str = "404 not in the archive\n";

/// Recorded headers the server does not replay: it sets the body's length
/// itself, hop-by-hop headers have no place in HTTP/2 and HTTP/3, `date` is
/// the time of sending (hyper adds it on h1 and h2; a recorded one would
/// make every cached response stale), and `alt-svc` and
/// `timing-allow-origin` are the server's own, as for a site directory.
const DROPPED: [&str; 10] = [
    "content-length",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "te",
    "date",
    "alt-svc",
    "timing-allow-origin",
];

/// An http(s) URL taken apart as the matching rule compares it: scheme and
/// host lower case, no port when it is the scheme's default, no fragment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    pub scheme: String,
    /// A DNS name or an IP address (IPv6 in brackets).
    pub host: String,
    pub port: Option<u16>,
    /// Never empty (`/` at least), percent-encoded as given.
    pub path: String,
    pub query: Option<String>,
}

/// The port a URL of `scheme` has when it names none.
pub fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

/// `host[:port]` of an authority (a userinfo part dropped), the host lower
/// case; None when the port is not a number.
pub fn split_authority(authority: &str) -> Option<(String, Option<u16>)> {
    let hostport = authority.rsplit('@').next().unwrap_or(authority);
    // an IPv6 literal keeps its brackets; the port follows the last `]`
    let colon = match hostport.rfind(']') {
        Some(end) => hostport[end..].find(':').map(|i| end + i),
        None => hostport.rfind(':'),
    };
    let (host, port) = match colon {
        Some(i) => {
            let p = &hostport[i + 1..];
            let port = if p.is_empty() {
                None // `host:` is `host`
            } else {
                Some(p.parse::<u16>().ok()?)
            };
            (&hostport[..i], port)
        }
        None => (hostport, None),
    };
    Some((host.to_ascii_lowercase(), port))
}

impl Url {
    /// An absolute `http://` or `https://` URL; None for anything else.
    pub fn parse(s: &str) -> Option<Url> {
        let s = s.split('#').next().unwrap_or("");
        let (scheme, rest) = s.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        default_port(&scheme)?;
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, target) = rest.split_at(end);
        let (host, port) = split_authority(authority)?;
        if host.is_empty() || host.contains(char::is_whitespace) {
            return None;
        }
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (target, None),
        };
        Some(Url::new(&scheme, host, port, path, query, None))
    }

    /// The URL a request asks for: `scheme` of the listener it came in on,
    /// its Host or `:authority` (`None`: an empty host, which no entry
    /// has), path and query. A port equal to `listener_port` counts as the
    /// scheme's default, so a server on other ports than 80 and 443 (tests)
    /// matches the same entries.
    pub fn of_request(
        scheme: &str,
        authority: Option<&str>,
        path: &str,
        query: Option<&str>,
        listener_port: u16,
    ) -> Url {
        let (host, port) = authority
            .and_then(split_authority)
            .unwrap_or((String::new(), None));
        Url::new(scheme, host, port, path, query, Some(listener_port))
    }

    fn new(
        scheme: &str,
        host: String,
        port: Option<u16>,
        path: &str,
        query: Option<&str>,
        also_default: Option<u16>,
    ) -> Url {
        let default = |p: u16| Some(p) == default_port(scheme) || Some(p) == also_default;
        Url {
            scheme: scheme.to_string(),
            host,
            port: port.filter(|&p| !default(p)),
            path: if path.is_empty() { "/" } else { path }.to_string(),
            query: query.map(str::to_string),
        }
    }

    /// The same URL but for the query string.
    pub fn same_but_query(&self, other: &Url) -> bool {
        (&self.scheme, &self.host, self.port, &self.path)
            == (&other.scheme, &other.host, other.port, &other.path)
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme, self.host)?;
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        f.write_str(&self.path)?;
        if let Some(q) = &self.query {
            write!(f, "?{q}")?;
        }
        Ok(())
    }
}

/// One recorded response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub method: String,
    pub url: Url,
    pub status: u16,
    /// The recorded headers but the `DROPPED` ones and pseudo-headers.
    pub headers: Headers,
    /// The body file and its length; None for no body.
    pub body: Option<(PathBuf, u64)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Archive {
    /// The page the archive was made of (its host's certificate answers a
    /// handshake for an unknown name).
    pub page: Url,
    pub entries: Vec<Entry>,
    /// The URLs of the requests the archive cannot answer (`missing`):
    /// their hosts get a certificate too, since the testbed gives them
    /// names and the page will ask them.
    pub missing: Vec<Url>,
}

/// An entry as archive.json has it.
#[derive(Deserialize)]
struct RawEntry {
    method: String,
    url: String,
    status: u16,
    headers: Vec<(String, String)>,
    body: Option<String>,
}

impl Archive {
    /// Reads `dir/archive.json` and checks every body file. Errors are one
    /// line: `--archive FILE: KEY: what is wrong`.
    pub fn read(dir: &Path) -> Result<Archive, String> {
        let manifest = dir.join(MANIFEST);
        let err = |what: String| format!("--archive {}: {what}", manifest.display());
        let text = std::fs::read_to_string(&manifest).map_err(|e| err(e.to_string()))?;
        let dir = std::fs::canonicalize(dir).map_err(|e| err(e.to_string()))?;
        Archive::parse(&text, &dir).map_err(err)
    }

    /// The manifest's text; body files are looked for under `dir`
    /// (canonical). Errors: `KEY: what is wrong`.
    pub fn parse(text: &str, dir: &Path) -> Result<Archive, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        if !v.is_object() {
            return Err("not a JSON object".into());
        }
        match &v["format"] {
            Value::String(f) if f == FORMAT => {}
            Value::Null => return Err(format!("\"format\": missing (expected \"{FORMAT}\")")),
            other => return Err(format!("\"format\": expected \"{FORMAT}\", got {other}")),
        }
        match v["version"].as_u64() {
            Some(VERSION) => {}
            _ => {
                return Err(format!(
                    "\"version\": {} is not supported (this origin reads version {VERSION})",
                    v["version"]
                ))
            }
        }
        let page = v["page"]
            .as_str()
            .and_then(Url::parse)
            .ok_or_else(|| format!("\"page\": expected an http(s) URL, got {}", v["page"]))?;
        let Some(raw) = v["entries"].as_array() else {
            return Err(format!(
                "\"entries\": expected an array, got {}",
                v["entries"]
            ));
        };
        let entries = raw
            .iter()
            .enumerate()
            .map(|(i, e)| entry(e, dir).map_err(|what| format!("entries[{i}]{what}")))
            .collect::<Result<Vec<_>, _>>()?;
        // only read for their hosts: what is not an http(s) URL is passed over
        let missing = match &v["missing"] {
            Value::Array(m) => m
                .iter()
                .filter_map(|m| m["url"].as_str().and_then(Url::parse))
                .collect(),
            _ => Vec::new(),
        };
        Ok(Archive {
            page,
            entries,
            missing,
        })
    }

    /// The entry that answers `method url` (the rule in this module's
    /// header), if any. An entry with an informational status (1xx) is no
    /// response a server can send as the last one, and answers nothing.
    pub fn find(&self, method: &str, url: &Url) -> Option<&Entry> {
        let methods: &[&str] = if method == "HEAD" {
            &["HEAD", "GET"]
        } else {
            &[method]
        };
        let rules: [fn(&Url, &Url) -> bool; 2] = [Url::eq, Url::same_but_query];
        rules.iter().find_map(|same| {
            methods.iter().find_map(|m| {
                self.entries
                    .iter()
                    .find(|e| e.method == *m && e.status >= 200 && same(&e.url, url))
            })
        })
    }

    /// Every host of an https URL of the archive (entries, then missing
    /// requests), the page's host first, once each.
    pub fn https_hosts(&self) -> Vec<String> {
        let mut hosts = vec![self.page.host.clone()];
        let urls = self.entries.iter().map(|e| &e.url).chain(&self.missing);
        for u in urls {
            if u.scheme == "https" && !hosts.contains(&u.host) {
                hosts.push(u.host.clone());
            }
        }
        hosts
    }

    /// The response to `method url`: the matching entry's, or a 404 marked
    /// unmatched. `alt_svc` as for a site directory.
    pub fn decide(&self, method: &str, url: &Url, alt_svc: Option<&str>) -> Decision {
        let head = method == "HEAD";
        let Some(e) = self.find(method, url) else {
            let mut d = site::text_response(404, NOT_IN_ARCHIVE_TEXT, head, alt_svc);
            d.unmatched = true;
            return d;
        };
        let mut headers = e.headers.clone();
        // 1xx, 204 and 304 have no body, and say no length
        let bodiless = e.status < 200 || e.status == 204 || e.status == 304;
        let len = e.body.as_ref().map_or(0, |(_, len)| *len);
        site::server_headers(&mut headers, (!bodiless).then_some(len), alt_svc);
        let body = match &e.body {
            Some((path, len)) if !head && !bodiless && *len > 0 => Body::File {
                path: path.clone(),
                len: *len,
            },
            _ => Body::None,
        };
        let bytes = match body {
            Body::File { len, .. } => len,
            _ => 0,
        };
        Decision {
            status: e.status,
            headers,
            body,
            bytes,
            unmatched: false,
        }
    }
}

/// One entry of the manifest; errors start with the key after
/// `entries[i]` (`.body: …`, or `: …` for the entry as a whole).
fn entry(v: &Value, dir: &Path) -> Result<Entry, String> {
    let raw = RawEntry::deserialize(v).map_err(|e| format!(": {e}"))?;
    http::Method::from_bytes(raw.method.as_bytes())
        .map_err(|_| format!(".method: not an HTTP method: {:?}", raw.method))?;
    let url = Url::parse(&raw.url)
        .ok_or_else(|| format!(".url: expected an http(s) URL, got {:?}", raw.url))?;
    if !(100..=599).contains(&raw.status) {
        return Err(format!(".status: {} is not 100 to 599", raw.status));
    }
    let mut headers: Headers = Vec::new();
    for (i, (name, value)) in raw.headers.into_iter().enumerate() {
        let name = name.to_ascii_lowercase();
        if name.starts_with(':') || DROPPED.contains(&name.as_str()) {
            continue;
        }
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(format!(".headers[{i}]: not a header name: {name:?}"));
        }
        if http::HeaderValue::from_str(&value).is_err() {
            return Err(format!(
                ".headers[{i}]: {name}: not a header value: {value:?}"
            ));
        }
        headers.push((Cow::Owned(name), value));
    }
    let body = match raw.body {
        None => None,
        Some(rel) => Some(body_file(dir, &rel).map_err(|e| format!(".body: {e}"))?),
    };
    Ok(Entry {
        method: raw.method,
        url,
        status: raw.status,
        headers,
        body,
    })
}

/// `rel` under `dir` (canonical): a file inside it (its canonical path),
/// and its length.
fn body_file(dir: &Path, rel: &str) -> Result<(PathBuf, u64), String> {
    let inside = !rel.is_empty()
        && Path::new(rel)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !inside {
        return Err(format!("{rel:?} is not a path inside the archive"));
    }
    let path = dir.join(rel);
    let real = std::fs::canonicalize(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !real.starts_with(dir) {
        return Err(format!("{}: leads outside the archive", path.display()));
    }
    match std::fs::metadata(&real) {
        Ok(m) if m.is_file() => Ok((real, m.len())),
        Ok(_) => Err(format!("{}: not a file", path.display())),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use satbench_transport::testkit::temp_dir;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap_or_else(|| panic!("{s}"))
    }

    #[test]
    fn parses_urls_as_the_rule_compares_them() {
        let u = url("HTTPS://CDN.Example.net:443/a/B.js?v=2&x=%20#frag");
        assert_eq!(
            u,
            Url {
                scheme: "https".into(),
                host: "cdn.example.net".into(),
                port: None,
                path: "/a/B.js".into(),
                query: Some("v=2&x=%20".into()),
            }
        );
        assert_eq!(u.to_string(), "https://cdn.example.net/a/B.js?v=2&x=%20");
        assert_eq!(url("http://a.test").to_string(), "http://a.test/");
        assert_eq!(url("http://a.test?q").to_string(), "http://a.test/?q");
        assert_eq!(url("http://a.test/?").query, Some(String::new()));
        assert_eq!(url("http://a.test:80/").port, None);
        assert_eq!(url("http://a.test:443/").port, Some(443));
        assert_eq!(
            url("https://a.test:8443/").to_string(),
            "https://a.test:8443/"
        );
        assert_eq!(url("https://user:pw@a.test/").host, "a.test");
        let v6 = url("https://[2001:DB8::1]:8443/x");
        assert_eq!((v6.host.as_str(), v6.port), ("[2001:db8::1]", Some(8443)));
        assert_eq!(url("https://[::1]/").port, None);
        for bad in [
            "",
            "/relative",
            "ftp://a.test/",
            "data:text/plain,x",
            "https:///x",
            "https://a.test:99999/",
            "https://a.test:x/",
        ] {
            assert_eq!(Url::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn request_urls_leave_out_default_and_listener_ports() {
        let r = |auth, port| Url::of_request("https", auth, "/a", Some("q=1"), port).to_string();
        assert_eq!(r(Some("A.test"), 443), "https://a.test/a?q=1");
        assert_eq!(r(Some("a.test:443"), 8443), "https://a.test/a?q=1");
        assert_eq!(r(Some("a.test:8443"), 8443), "https://a.test/a?q=1");
        assert_eq!(r(Some("a.test:9000"), 8443), "https://a.test:9000/a?q=1");
        assert_eq!(r(None, 443), "https:///a?q=1");
        let plain = Url::of_request("http", Some("a.test:80"), "", None, 8080);
        assert_eq!(plain.to_string(), "http://a.test/");
    }

    fn entry(method: &str, u: &str, status: u16) -> Entry {
        Entry {
            method: method.into(),
            url: url(u),
            status,
            headers: vec![("x-entry".into(), format!("{method} {u}"))],
            body: None,
        }
    }

    fn archive(entries: Vec<Entry>) -> Archive {
        Archive {
            page: url("https://www.a.test/"),
            entries,
            missing: vec![url("https://ads.a.test/x.js"), url("http://plain.a.test/")],
        }
    }

    #[test]
    fn matching_rule() {
        let a = archive(vec![
            entry("GET", "https://www.a.test/app.js?v=1", 200),
            entry("GET", "https://www.a.test/app.js?v=2", 200),
            entry("GET", "https://www.a.test/app.js?v=2", 500), // a second recording
            entry("POST", "https://www.a.test/api?x", 201),
            entry("GET", "https://www.a.test/api", 200),
            entry("GET", "http://www.a.test/", 301),
            entry("HEAD", "https://www.a.test/h", 200),
            entry("GET", "https://www.a.test/h", 200),
            entry("GET", "https://cdn.a.test/app.js?v=2", 200),
            entry("GET", "https://www.a.test/ws", 101),
        ]);
        // "METHOD URL → the entry that answers" ("-": none)
        let cases = [
            // exact first, the first of equal ones
            "GET https://www.a.test/app.js?v=2 → GET https://www.a.test/app.js?v=2",
            // the same path with another query, or none: the first in archive order
            "GET https://www.a.test/app.js?v=9 → GET https://www.a.test/app.js?v=1",
            "GET https://www.a.test/app.js → GET https://www.a.test/app.js?v=1",
            // the method counts: the POST entry answers POSTs only
            "GET https://www.a.test/api?x → GET https://www.a.test/api",
            "POST https://www.a.test/api?x → POST https://www.a.test/api?x",
            "POST https://www.a.test/api?y → POST https://www.a.test/api?x",
            "PUT https://www.a.test/api?x → -",
            // HEAD: a HEAD entry, else a GET one, rule by rule
            "HEAD https://www.a.test/h → HEAD https://www.a.test/h",
            "HEAD https://www.a.test/h?z → HEAD https://www.a.test/h",
            "HEAD https://www.a.test/app.js?v=2 → GET https://www.a.test/app.js?v=2",
            // scheme, host and port are part of the URL
            "GET http://www.a.test/app.js?v=2 → -",
            "GET https://www.a.test/ → -",
            "GET http://www.a.test/ → GET http://www.a.test/",
            "GET https://cdn.a.test/app.js?v=1 → GET https://cdn.a.test/app.js?v=2",
            "GET https://cdn.a.test:444/app.js?v=2 → -",
            "GET https://other.a.test/app.js?v=2 → -",
            // the path is compared as it is (case, encoding)
            "GET https://www.a.test/App.js?v=2 → -",
            "GET https://www.a.test/app%2Ejs?v=2 → -",
            // a 1xx entry is no response to send
            "GET https://www.a.test/ws → -",
        ];
        for case in cases {
            let (asked, want) = case.split_once(" → ").unwrap();
            let (m, u) = asked.split_once(' ').unwrap();
            let got = a.find(m, &url(u)).map(|e| e.headers[0].1.as_str());
            assert_eq!(got.unwrap_or("-"), want, "{asked}");
        }
        let first = a.find("GET", &url("https://www.a.test/app.js?v=2"));
        assert_eq!(first.unwrap().status, 200);
        assert_eq!(
            a.https_hosts(),
            vec!["www.a.test", "cdn.a.test", "ads.a.test"]
        );
    }

    fn write_archive(dir: &Path, manifest: &str) {
        std::fs::create_dir_all(dir.join("bodies")).unwrap();
        std::fs::write(dir.join("bodies/0000"), b"<!doctype html>hello").unwrap();
        std::fs::write(dir.join("bodies/0001"), b"\x1f\x8bgzipped").unwrap();
        std::fs::write(dir.join(MANIFEST), manifest).unwrap();
    }

    const GOOD: &str = r#"{"format": "satbench-archive", "version": 1,
        "page": "https://www.a.test/", "created": "2026-05-01T12:00:00Z",
        "source": {"tool": "test"}, "future": [1, 2],
        "entries": [
          {"method": "GET", "url": "https://www.a.test/", "status": 200,
           "headers": [["Content-Type", "text/html"], ["Content-Length", "99"],
                       [":status", "200"], ["Connection", "keep-alive"], ["Date", "x"],
                       ["Set-Cookie", "a=1"], ["set-cookie", "b=2"],
                       ["alt-svc", "h3=\":443\"; ma=86400"]],
           "body": "bodies/0000"},
          {"method": "GET", "url": "https://cdn.a.test/app.js?v=2", "status": 200,
           "headers": [["content-type", "text/javascript"], ["content-encoding", "gzip"]],
           "body": "./bodies/0001", "timing": {"wait": 3}},
          {"method": "GET", "url": "https://www.a.test/old", "status": 301,
           "headers": [["location", "/"]], "body": null},
          {"method": "GET", "url": "https://www.a.test/none", "status": 204,
           "headers": [], "body": "bodies/0000"}
        ],
        "missing": [{"method": "GET", "url": "https://x.test/", "reason": "service worker"},
                    {"method": "GET", "url": "blob:x"}, 7]}"#;

    #[test]
    fn reads_an_archive() {
        let dir = temp_dir("archive-read");
        write_archive(&dir, GOOD);
        let a = Archive::read(&dir).unwrap();
        assert_eq!(a.page, url("https://www.a.test/"));
        assert_eq!(a.entries.len(), 4);
        let e = &a.entries[0];
        let names: Vec<&str> = e.headers.iter().map(|(n, _)| n.as_ref()).collect();
        assert_eq!(names, ["content-type", "set-cookie", "set-cookie"]);
        let canon = std::fs::canonicalize(&dir).unwrap();
        assert_eq!(e.body, Some((canon.join("bodies/0000"), 20)));
        assert_eq!(a.entries[1].body, Some((canon.join("bodies/0001"), 9)));
        assert_eq!(a.entries[2].body, None);
        assert_eq!(a.missing, vec![url("https://x.test/")]);
        assert_eq!(a.https_hosts(), ["www.a.test", "cdn.a.test", "x.test"]);

        // the responses: recorded headers, then the server's
        let alt = Some("h3=\":443\"");
        let d = a.decide("GET", &url("https://www.a.test/?utm=1"), alt);
        assert_eq!((d.status, d.bytes, d.unmatched), (200, 20, false));
        assert_eq!(d.header("content-length"), Some("20"));
        assert_eq!(d.header("timing-allow-origin"), Some("*"));
        assert_eq!(d.header("alt-svc"), alt);
        assert_eq!(d.header("date"), None);
        assert_eq!(d.header("cache-control"), None);
        assert!(matches!(d.body, Body::File { len: 20, .. }));
        let h = a.decide("HEAD", &url("https://www.a.test/"), None);
        assert_eq!((h.status, h.bytes, &h.body), (200, 0, &Body::None));
        assert_eq!(h.header("content-length"), Some("20"));
        assert_eq!(h.header("alt-svc"), None);
        let gz = a.decide("GET", &url("https://cdn.a.test/app.js?v=2"), None);
        assert_eq!(gz.header("content-encoding"), Some("gzip"));
        assert_eq!(gz.bytes, 9);
        let redirect = a.decide("GET", &url("https://www.a.test/old"), None);
        assert_eq!((redirect.status, redirect.bytes), (301, 0));
        assert_eq!(redirect.header("location"), Some("/"));
        assert_eq!(redirect.header("content-length"), Some("0"));
        let none = a.decide("GET", &url("https://www.a.test/none"), None);
        assert_eq!((none.status, none.bytes, &none.body), (204, 0, &Body::None));
        assert_eq!(none.header("content-length"), None);
        let miss = a.decide("GET", &url("https://www.a.test/nope.js"), None);
        assert_eq!((miss.status, miss.unmatched), (404, true));
        assert_eq!(miss.body, Body::Text(NOT_IN_ARCHIVE_TEXT));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_archives_are_one_line_naming_the_file_and_key() {
        let dir = temp_dir("archive-bad");
        let manifest = dir.join(MANIFEST).display().to_string();
        let err = |text: &str| {
            write_archive(&dir, text);
            Archive::read(&dir).unwrap_err()
        };
        let good = |from: &str, to: &str| {
            assert!(GOOD.contains(from), "{from}");
            err(&GOOD.replacen(from, to, 1))
        };
        let expect = |got: String, key: &str| {
            assert_eq!(got.lines().count(), 1, "{got}");
            let want = format!("--archive {manifest}: {key}");
            assert!(got.starts_with(&want), "{got}\nwanted {want}…");
        };
        expect(
            err("{"),
            "not JSON: EOF while parsing an object at line 1 column 1",
        );
        expect(err("[]"), "not a JSON object");
        expect(
            good("\"satbench-archive\"", "\"har\""),
            "\"format\": expected \"satbench-archive\", got \"har\"",
        );
        expect(
            good("\"format\": \"satbench-archive\",", ""),
            "\"format\": missing",
        );
        expect(
            good("\"version\": 1", "\"version\": 2"),
            "\"version\": 2 is not supported (this origin reads version 1)",
        );
        expect(
            good("\"version\": 1,", ""),
            "\"version\": null is not supported",
        );
        expect(
            good("\"page\": \"https://www.a.test/\"", "\"page\": 3"),
            "\"page\": expected an http(s) URL, got 3",
        );
        expect(
            good("\"entries\": [", "\"entries\": \"none\", \"x\": ["),
            "\"entries\": expected an array",
        );
        expect(
            good("\"bodies/0000\"}", "\"bodies/0009\"}"),
            &format!(
                "entries[0].body: {}: No such file",
                std::fs::canonicalize(&dir)
                    .unwrap()
                    .join("bodies/0009")
                    .display()
            ),
        );
        expect(
            good("\"./bodies/0001\"", "\"../x\""),
            "entries[1].body: \"../x\" is not a path inside the archive",
        );
        expect(
            good("\"./bodies/0001\"", "\"/etc/passwd\""),
            "entries[1].body: \"/etc/passwd\" is not a path inside the archive",
        );
        expect(good("\"./bodies/0001\"", "\"bodies\""), "entries[1].body: ");
        expect(
            good("\"status\": 301", "\"status\": 600"),
            "entries[2].status: 600 is not 100 to 599",
        );
        expect(
            good("\"status\": 301", "\"status\": \"301\""),
            "entries[2]: invalid type: string \"301\", expected u16",
        );
        expect(
            good(
                "\"method\": \"GET\", \"url\": \"https://www.a.test/old\"",
                "\"url\": \"https://www.a.test/old\"",
            ),
            "entries[2]: missing field `method`",
        );
        expect(
            good("\"https://www.a.test/old\"", "\"/old\""),
            "entries[2].url: expected an http(s) URL, got \"/old\"",
        );
        expect(
            good(
                "\"method\": \"GET\", \"url\": \"https://www.a.test/old\"",
                "\"method\": \"G T\", \"url\": \"https://www.a.test/old\"",
            ),
            "entries[2].method: not an HTTP method",
        );
        expect(
            good("[\"location\", \"/\"]", "[\"bad name\", \"/\"]"),
            "entries[2].headers[0]: not a header name: \"bad name\"",
        );
        expect(
            good("[\"location\", \"/\"]", "[\"location\", \"a\\nb\"]"),
            "entries[2].headers[0]: location: not a header value",
        );
        std::fs::remove_dir_all(&dir).unwrap();
        let gone = temp_dir("archive-gone").join("nope");
        let e = Archive::read(&gone).unwrap_err();
        assert_eq!(
            e,
            format!(
                "--archive {}: No such file or directory (os error 2)",
                gone.join(MANIFEST).display()
            )
        );
    }
}
