//! A site archive (`origin serve --archive DIR`): the recorded responses of
//! a page and of every origin it loaded from, read once at start-up, and
//! the rule that picks the response to a request.
//!
//! `DIR/archive.json` (written by `satbench record` and `satbench
//! import-har`; sites/README.md documents it):
//!
//! ```json
//! {"format": "satbench-archive", "version": 1, "page": "https://www.example.net/",
//!  "created": "2026-11-24T06:39:23.307Z",
//!  "source": {"tool": "record", "from": "https://www.example.net/"},
//!  "entries": [{"method": "GET", "url": "https://www.example.net/",
//!               "status": 200, "headers": [["content-type", "text/html"],
//!               ["content-encoding", "br"]], "body": "bodies/0000"}],
//!  "missing": []}
//! ```
//!
//! A body file holds the bytes as they went on the wire (still encoded when
//! a `content-encoding` header says so); they are sent as they are.
//! Unknown keys are ignored, so later writers may add some.
//!
//! The rules (sites/README.md, "Site archives"; the JS side's
//! `harness/archive/format.js` and `match.js` apply the same ones, and
//! `sites/archive-conformance.json` holds the cases both sides test):
//! archive.json is read as strictly as the format says, and a request's URL
//! is put in archive form: `scheme://host[:port]/path?query` from the
//! listener's scheme, the Host header or `:authority` and the request
//! target, as the WHATWG URL parser writes it (what Chromium sends), a port
//! that is the listener's own left out like the scheme's default. Then,
//! among entries of the request's method, the first in archive order whose
//! URL is the same; else the first whose URL up to its query is the
//! request's up to its query; else nothing (a 404, logged `unmatched`). A
//! HEAD request that finds no HEAD entry by a rule may take a GET entry by
//! that rule (its headers, no body). An entry with a 1xx status answers
//! nothing.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use serde_json::Value;
use time::macros::format_description;
use time::PrimitiveDateTime;
use url::Position;
pub use url::Url;

use crate::site::{self, Body, Decision, Headers};
use crate::validators;

/// The manifest's file name in an archive's directory.
pub const MANIFEST: &str = "archive.json";
/// Its `format` value.
pub const FORMAT: &str = "satbench-archive";
/// The `version` this server reads.
pub const VERSION: u64 = 1;
/// The tools that write archives (`source.tool`).
const SOURCE_TOOLS: [&str; 2] = ["record", "import-har"];
/// Redirects a page load follows at most (Chromium's limit).
const MAX_REDIRECTS: usize = 20;

/// The body of a 404 for a request no entry matches.
pub const NOT_IN_ARCHIVE_TEXT: &str = "404 not in the archive\n";

/// Headers the format leaves out (hop-by-hop ones, and `content-length`:
/// the serving server frames the body): an archive holding one is refused.
const NOT_IN_FORMAT: [&str; 4] = [
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
];

/// Recorded headers the server does not replay: the other hop-by-hop
/// headers have no place in HTTP/2 and HTTP/3, `date` is the time of
/// sending (hyper adds it on h1 and h2; a recorded one would make every
/// cached response stale), and `alt-svc` and `timing-allow-origin` are the
/// server's own, as for a site directory.
const NOT_REPLAYED: [&str; 6] = [
    "proxy-connection",
    "upgrade",
    "te",
    "date",
    "alt-svc",
    "timing-allow-origin",
];

/// `s` in archive form (an http(s) URL as the WHATWG URL parser writes it,
/// without fragment); None for anything else.
pub fn archive_url(s: &str) -> Option<Url> {
    let mut u = Url::parse(s).ok()?;
    if !matches!(u.scheme(), "http" | "https") {
        return None;
    }
    u.set_fragment(None);
    Some(u)
}

/// The URL a request asks for, in archive form: `scheme` of the listener it
/// came in on, its Host or `:authority`, path and query. A port equal to
/// `listener_port` counts as the scheme's default, so a server on other
/// ports than 80 and 443 (tests) matches the same entries. None when it
/// names no host or makes no URL: no entry answers it.
pub fn request_url(
    scheme: &str,
    authority: Option<&str>,
    path: &str,
    query: Option<&str>,
    listener_port: u16,
) -> Option<Url> {
    let authority = authority.filter(|a| !a.is_empty())?;
    let query = query.map(|q| format!("?{q}")).unwrap_or_default();
    let mut u = archive_url(&format!("{scheme}://{authority}{path}{query}"))?;
    if u.port() == Some(listener_port) {
        u.set_port(None).ok()?;
    }
    Some(u)
}

/// Whether two URLs in archive form are the same up to their query (no
/// `?` is left unencoded before the query).
fn same_but_query(a: &Url, b: &Url) -> bool {
    a[..Position::AfterPath] == b[..Position::AfterPath]
}

/// One recorded response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub method: String,
    pub url: Url,
    pub status: u16,
    /// The recorded headers, names in lower case, but the `NOT_REPLAYED` ones.
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

/// What a reader got where it expected something else, as archive.json
/// has it, cut short.
fn shown(v: Option<&Value>) -> String {
    let Some(v) = v else {
        return "nothing".into();
    };
    let s = v.to_string();
    match s.char_indices().nth(77) {
        Some((cut, _)) if s.chars().count() > 80 => format!("{}…", &s[..cut]),
        _ => s,
    }
}

/// `found`, or `Err("KEY: expected EXPECTED, got VALUE")`, as the JS
/// reader words it.
fn expect<T>(
    found: Option<T>,
    key: &str,
    expected: &str,
    got: Option<&Value>,
) -> Result<T, String> {
    found.ok_or_else(|| format!("{key}: expected {expected}, got {}", shown(got)))
}

/// `expect` for a yes-or-no check.
fn check(ok: bool, key: &str, expected: &str, got: Option<&Value>) -> Result<(), String> {
    expect(ok.then_some(()), key, expected, got)
}

const URL_EXPECTED: &str =
    "an absolute http(s) URL as the WHATWG URL parser writes it, without fragment";

/// The URL `v` holds when it is one in archive form.
fn url_in_archive_form(v: Option<&Value>) -> Option<Url> {
    let s = v?.as_str()?;
    archive_url(s).filter(|u| u.as_str() == s)
}

/// A UTC time as the writers put it (`2026-11-24T06:39:23.307Z`, the
/// fraction optional), on a day and at an hour that exist.
fn is_utc_time(s: &str) -> bool {
    let form = format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second][optional [.[subsecond]]]Z"
    );
    PrimitiveDateTime::parse(s, form).is_ok()
}

/// A whole number in `lo..=hi` (JSON has one kind of number: 204.0 is 204).
fn whole(v: Option<&Value>, lo: u16, hi: u16) -> Option<u16> {
    let n = v?.as_f64()?;
    (n.fract() == 0.0 && (f64::from(lo)..=f64::from(hi)).contains(&n)).then_some(n as u16)
}

/// A body file's name: `bodies/NAME`, NAME of letters, digits, `_`, `.`, `-`.
fn is_body_name(s: &str) -> bool {
    s.strip_prefix("bodies/").is_some_and(|name| {
        !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
    })
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

    /// The manifest's text, every key checked in the order the JS reader
    /// checks them; body files are looked for under `dir` (canonical).
    /// Errors: `KEY: what is wrong`, KEY as the JS reader names it.
    pub fn parse(text: &str, dir: &Path) -> Result<Archive, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let top = expect(v.as_object(), "(top level)", "an object", Some(&v))?;
        let format = top.get("format");
        let want = format!("{FORMAT:?}");
        check(
            format.and_then(Value::as_str) == Some(FORMAT),
            "format",
            &want,
            format,
        )?;
        let version = top.get("version");
        let known = whole(version, 0, u16::MAX).map(u64::from) == Some(VERSION);
        let want = format!("{VERSION} (the version this origin reads)");
        check(known, "version", &want, version)?;
        let page = expect(
            url_in_archive_form(top.get("page")),
            "page",
            URL_EXPECTED,
            top.get("page"),
        )?;
        let created = top.get("created");
        let time = created.and_then(Value::as_str).is_some_and(is_utc_time);
        check(time, "created", "an ISO 8601 time", created)?;
        let source = top.get("source");
        check(
            source.is_some_and(Value::is_object),
            "source",
            "an object {tool, from}",
            source,
        )?;
        let tool = source.and_then(|s| s.get("tool"));
        let known = tool
            .and_then(Value::as_str)
            .is_some_and(|t| SOURCE_TOOLS.contains(&t));
        check(known, "source.tool", "\"record\" or \"import-har\"", tool)?;
        let from = source.and_then(|s| s.get("from"));
        let named = from.and_then(Value::as_str).is_some_and(|f| !f.is_empty());
        check(named, "source.from", "a URL or file name", from)?;
        let raw = top.get("entries");
        let list = raw.and_then(Value::as_array).filter(|e| !e.is_empty());
        let list = expect(list, "entries", "a non-empty array", raw)?;
        let mut entries = Vec::new();
        let mut bodies = Vec::new();
        for (i, e) in list.iter().enumerate() {
            let (entry, body) = entry(e, &format!("entries[{i}]"))?;
            entries.push(entry);
            bodies.push(body);
        }
        let raw = top.get("missing");
        let list = expect(raw.and_then(Value::as_array), "missing", "an array", raw)?;
        let mut missing = Vec::new();
        for (i, m) in list.iter().enumerate() {
            missing.push(missing_request(m, &format!("missing[{i}]"))?);
        }
        let mut archive = Archive {
            page,
            entries,
            missing,
        };
        if let Err(broken) = archive.page_chain() {
            let want = format!("a URL whose load ends at an entry (GET): {broken}");
            check(false, "page", &want, top.get("page"))?;
        }
        for (i, (e, body)) in archive.entries.iter_mut().zip(bodies).enumerate() {
            if let Some(rel) = body {
                let (path, len) =
                    body_file(dir, &rel).map_err(|e| format!("entries[{i}].body: {e}"))?;
                add_validators(&mut e.headers, &path);
                e.body = Some((path, len));
            }
        }
        Ok(archive)
    }

    /// The entry that answers `method url` (the rule in this module's
    /// header), if any.
    pub fn find(&self, method: &str, url: &Url) -> Option<&Entry> {
        let methods: &[&str] = if method == "HEAD" {
            &["HEAD", "GET"]
        } else {
            &[method]
        };
        let rules: [fn(&Url, &Url) -> bool; 2] = [Url::eq, same_but_query];
        rules.iter().find_map(|same| {
            methods.iter().find_map(|m| {
                self.entries
                    .iter()
                    .find(|e| e.method == *m && e.status >= 200 && same(&e.url, url))
            })
        })
    }

    /// Where a load of the page ends: Ok when at an entry, following the
    /// archive's own redirects; else what breaks it off.
    fn page_chain(&self) -> Result<(), String> {
        let mut chain: Vec<&Entry> = Vec::new();
        let mut url = self.page.clone();
        loop {
            let entry = self
                .find("GET", &url)
                .ok_or_else(|| format!("no entry for {url}"))?;
            if chain.iter().any(|e| std::ptr::eq(*e, entry)) || chain.len() > MAX_REDIRECTS {
                return Err("a redirect loop".into());
            }
            chain.push(entry);
            let redirect = (300..400).contains(&entry.status);
            let Some(location) = redirect.then(|| entry.header("location")).flatten() else {
                return Ok(());
            };
            url = entry
                .url
                .join(&location)
                .ok()
                .and_then(|u| archive_url(u.as_str()))
                .ok_or_else(|| format!("no entry for {location}"))?;
        }
    }

    /// Every URL of the archive: the page's, its entries', its missing
    /// requests'.
    fn urls(&self) -> impl Iterator<Item = &Url> {
        let entries = self.entries.iter().map(|e| &e.url);
        std::iter::once(&self.page)
            .chain(entries)
            .chain(&self.missing)
    }

    /// The archive's origins (`scheme://host:port`, the port always
    /// written), each once, in the order first seen, the page's first.
    pub fn origins(&self) -> Vec<String> {
        let mut origins: Vec<String> = Vec::new();
        for u in self.urls() {
            let port = u.port_or_known_default().unwrap_or_default();
            let o = format!(
                "{}://{}:{port}",
                u.scheme(),
                u.host_str().unwrap_or_default()
            );
            if !origins.contains(&o) {
                origins.push(o);
            }
        }
        origins
    }

    /// Every host of an https URL of the archive, the page's host first,
    /// once each.
    pub fn https_hosts(&self) -> Vec<String> {
        let mut hosts: Vec<String> = Vec::new();
        let https = self.urls().filter(|u| u.scheme() == "https");
        for u in std::iter::once(&self.page).chain(https) {
            let host = u.host_str().unwrap_or_default();
            if !hosts.iter().any(|h| h == host) {
                hosts.push(host.to_string());
            }
        }
        hosts
    }

    /// The response to `method url` (None: a request no entry can answer):
    /// the matching entry's, or a 404 marked unmatched. `alt_svc` as for a
    /// site directory.
    pub fn decide(&self, method: &str, url: Option<&Url>, alt_svc: Option<&str>) -> Decision {
        let head = method == "HEAD";
        let Some(e) = url.and_then(|url| self.find(method, url)) else {
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

impl Entry {
    /// The values of header `name` (lower case) as one comma-separated
    /// value, if any.
    fn header(&self, name: &str) -> Option<String> {
        let values: Vec<&str> = self
            .headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect();
        (!values.is_empty()).then(|| values.join(", "))
    }
}

/// The method and URL of what `key` names (an entry or a missing
/// request): an object (`what` says of which keys) with both as the format
/// says.
fn request(v: &Value, key: &str, what: &str) -> Result<(String, Url), String> {
    check(v.is_object(), key, what, Some(v))?;
    let method = v.get("method").and_then(Value::as_str);
    let method = method.filter(|m| http::Method::from_bytes(m.as_bytes()).is_ok());
    let method = expect(
        method,
        &format!("{key}.method"),
        "an HTTP method",
        v.get("method"),
    )?;
    let url = url_in_archive_form(v.get("url"));
    let url = expect(url, &format!("{key}.url"), URL_EXPECTED, v.get("url"))?;
    Ok((method.to_string(), url))
}

/// One entry of the manifest at `key` (`entries[i]`), and its body file's
/// name (checked against the folder once every key is).
fn entry(v: &Value, key: &str) -> Result<(Entry, Option<String>), String> {
    let (method, url) = request(v, key, "an object {method, url, status, headers, body}")?;
    let status = whole(v.get("status"), 100, 599);
    let want = "a status 100–599";
    let status = expect(status, &format!("{key}.status"), want, v.get("status"))?;
    let raw = v.get("headers");
    let want = "an array of [name, value]";
    let list = expect(
        raw.and_then(Value::as_array),
        &format!("{key}.headers"),
        want,
        raw,
    )?;
    let mut headers: Headers = Vec::new();
    for (j, h) in list.iter().enumerate() {
        let at = format!("{key}.headers[{j}]");
        let pair = h.as_array().filter(|p| p.len() == 2);
        let name = pair.and_then(|p| p[0].as_str());
        let value = pair.and_then(|p| p[1].as_str());
        let token = name.filter(|n| http::HeaderName::from_bytes(n.as_bytes()).is_ok());
        let (name, value) = expect(token.zip(value), &at, "[name, value]", Some(h))?;
        let name = name.to_ascii_lowercase();
        check(
            !NOT_IN_FORMAT.contains(&name.as_str()),
            &at,
            "no hop-by-hop header",
            Some(h),
        )?;
        let sendable = http::HeaderValue::from_str(value).is_ok();
        check(sendable, &at, "a value without control characters", Some(h))?;
        if !NOT_REPLAYED.contains(&name.as_str()) {
            headers.push((Cow::Owned(name), value.to_string()));
        }
    }
    let raw = v.get("body");
    let body = raw.and_then(Value::as_str).filter(|b| is_body_name(b));
    let ok = raw.is_some_and(Value::is_null) || body.is_some();
    check(ok, &format!("{key}.body"), "null or \"bodies/NAME\"", raw)?;
    let entry = Entry {
        method,
        url,
        status,
        headers,
        body: None,
    };
    Ok((entry, body.map(str::to_string)))
}

/// One request of `missing` at `key` (`missing[i]`): its URL.
fn missing_request(v: &Value, key: &str) -> Result<Url, String> {
    let (_, url) = request(v, key, "an object {method, url, reason}")?;
    let reason = v.get("reason");
    let given = reason
        .and_then(Value::as_str)
        .is_some_and(|r| !r.is_empty());
    check(given, &format!("{key}.reason"), "a reason", reason)?;
    Ok(url)
}

/// A recorded response's validators where it recorded none: an ETag of its
/// body file's bytes, a Last-Modified of the file's time (when the archive
/// was written), so a replayed page can be revalidated as the live one
/// could. Recorded ones are kept, as the client may hold them.
fn add_validators(headers: &mut Headers, body: &Path) {
    let has = |h: &Headers, name: &str| h.iter().any(|(n, _)| n == name);
    let Some(v) = validators::of_file(body) else {
        return;
    };
    if !has(headers, "etag") {
        headers.push((Cow::Borrowed("etag"), v.etag));
    }
    if !has(headers, "last-modified") {
        headers.push((Cow::Borrowed("last-modified"), v.last_modified));
    }
}

/// `rel` (a body name) under `dir` (canonical): a file inside it (its
/// canonical path), and its length.
fn body_file(dir: &Path, rel: &str) -> Result<(PathBuf, u64), String> {
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
    use crate::validators::etag_of;
    use satbench_transport::testkit::temp_dir;

    /// The cases both sides test (the mocha side:
    /// test/unit/archive-conformance.test.js).
    const CONFORMANCE: &str = include_str!("../../archive-conformance.json");

    fn url(s: &str) -> Url {
        archive_url(s).unwrap_or_else(|| panic!("{s}"))
    }

    #[test]
    fn urls_in_archive_form() {
        let u = url("HTTPS://CDN.Example.net:443/a/B.js?v=2&x=%20#frag");
        assert_eq!(u.as_str(), "https://cdn.example.net/a/B.js?v=2&x=%20");
        assert_eq!(url("http://a.test").as_str(), "http://a.test/");
        assert_eq!(url("http://a.test:443/").as_str(), "http://a.test:443/");
        assert_eq!(
            url("https://[2001:DB8::1]:8443/x").host_str(),
            Some("[2001:db8::1]")
        );
        for bad in [
            "",
            "/relative",
            "ftp://a.test/",
            "data:text/plain,x",
            "https://a.test:99999/",
        ] {
            assert_eq!(archive_url(bad), None, "{bad}");
        }
    }

    #[test]
    fn request_urls_leave_out_default_and_listener_ports() {
        let r =
            |auth, port| request_url("https", auth, "/a", Some("q=1"), port).map(|u| u.to_string());
        let want = Some("https://a.test/a?q=1".to_string());
        assert_eq!(r(Some("A.test"), 443), want);
        assert_eq!(r(Some("a.test:443"), 8443), want);
        assert_eq!(r(Some("a.test:8443"), 8443), want);
        assert_eq!(
            r(Some("a.test:9000"), 8443).as_deref(),
            Some("https://a.test:9000/a?q=1")
        );
        assert_eq!(r(None, 443), None);
        assert_eq!(r(Some(""), 443), None);
        assert_eq!(r(Some("a test"), 443), None);
        let plain = request_url("http", Some("a.test:80"), "", None, 8080).unwrap();
        assert_eq!(plain.as_str(), "http://a.test/");
    }

    fn table() -> Value {
        serde_json::from_str(CONFORMANCE).expect("sites/archive-conformance.json is JSON")
    }

    fn text(v: &Value) -> &str {
        v.as_str().unwrap_or_else(|| panic!("a string: {v}"))
    }

    /// The table's archive of `matching` (entries: method, url, status).
    fn matching_archive(a: &Value) -> Archive {
        let urls = |key: &str| {
            a[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| url(text(&e["url"])))
        };
        Archive {
            page: url(text(&a["page"])),
            entries: a["entries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| Entry {
                    method: text(&e["method"]).to_string(),
                    url: url(text(&e["url"])),
                    status: e["status"].as_u64().unwrap() as u16,
                    headers: Vec::new(),
                    body: None,
                })
                .collect(),
            missing: urls("missing").collect(),
        }
    }

    /// A request as a server gets it: the listener's scheme (its port the
    /// scheme's default), the authority and the target of `url`.
    fn asked(a: &Archive, method: &str, url: &str) -> Option<usize> {
        let (scheme, rest) = url.split_once("://").unwrap();
        let (authority, target) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (target, None),
        };
        let port = default_port(scheme);
        let u = request_url(scheme, Some(authority), path, query, port)?;
        let e = a.find(method, &u)?;
        a.entries.iter().position(|x| std::ptr::eq(x, e))
    }

    fn default_port(scheme: &str) -> u16 {
        match scheme {
            "http" => 80,
            _ => 443,
        }
    }

    #[test]
    fn matching_as_the_conformance_table_says() {
        let table = table();
        let mut failed = Vec::new();
        let mut n = 0;
        for m in table["matching"].as_array().unwrap() {
            let a = matching_archive(&m["archive"]);
            let want: Vec<&str> = m["origins"].as_array().unwrap().iter().map(text).collect();
            assert_eq!(a.origins(), want, "origins of {}", a.page);
            // https_hosts: the page's host, then the hosts of https origins
            let mut hosts = vec![a.page.host_str().unwrap().to_string()];
            for o in want.iter().filter_map(|o| o.strip_prefix("https://")) {
                let host = &o[..o.rfind(':').unwrap()];
                if !hosts.iter().any(|h| h == host) {
                    hosts.push(host.to_string());
                }
            }
            assert_eq!(a.https_hosts(), hosts, "https hosts of {}", a.page);
            for r in m["requests"].as_array().unwrap() {
                n += 1;
                let (method, u) = (text(&r["method"]), text(&r["url"]));
                let got = asked(&a, method, u);
                let want = r["answer"].as_u64().map(|i| i as usize);
                if got != want {
                    failed.push(format!(
                        "{method} {u}: got {got:?}, want {want:?} ({})",
                        r["why"]
                    ));
                }
            }
        }
        assert!(n > 30, "{n} requests");
        assert!(failed.is_empty(), "{}", failed.join("\n"));
    }

    /// The value at key `k` (a name or an index) of `v`.
    fn place<'a>(v: &'a mut Value, k: &Value) -> &'a mut Value {
        match k.as_u64() {
            Some(i) => &mut v[i as usize],
            None => &mut v[text(k)],
        }
    }

    /// `archive` with the value at `at` (a path of keys) set to `to`, or removed.
    fn changed(archive: &Value, case: &Value) -> Value {
        let Some(at) = case["at"].as_array() else {
            return archive.clone();
        };
        let Some((last, path)) = at.split_last() else {
            return case["to"].clone();
        };
        let mut v = archive.clone();
        let parent = path.iter().fold(&mut v, place);
        if case["remove"] == Value::Bool(true) {
            match (parent, last.as_u64()) {
                (Value::Array(a), Some(i)) => {
                    a.remove(i as usize);
                }
                (Value::Object(o), None) => {
                    o.remove(text(last));
                }
                (p, _) => panic!("cannot remove {last} from {p}"),
            }
        } else {
            *place(parent, last) = case["to"].clone();
        }
        v
    }

    #[test]
    fn reading_as_the_conformance_table_says() {
        let table = table();
        let reading = &table["reading"];
        let dir = temp_dir("archive-conformance");
        for body in reading["bodies"].as_array().unwrap() {
            let file = dir.join(text(body));
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, text(body)).unwrap();
        }
        let manifest = dir.join(MANIFEST).display().to_string();
        let mut failed = Vec::new();
        let cases = reading["cases"].as_array().unwrap();
        for case in cases {
            let v = changed(&reading["archive"], case);
            std::fs::write(dir.join(MANIFEST), v.to_string()).unwrap();
            let got = Archive::read(&dir);
            let what = format!(
                "{} {} {}: {}",
                case["at"], case["to"], case["remove"], case["why"]
            );
            match (case["refused"].as_str(), got) {
                (None, Ok(_)) => {}
                (None, Err(e)) => failed.push(format!("{what}: refused: {e}")),
                (Some(key), Ok(_)) => failed.push(format!("{what}: accepted, not refused ({key})")),
                (Some(key), Err(e)) => {
                    if !e.starts_with(&format!("--archive {manifest}: {key}: ")) || e.contains('\n')
                    {
                        failed.push(format!("{what}: {e}\n  does not name {key}"));
                    }
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(cases.len() > 40, "{} cases", cases.len());
        assert!(failed.is_empty(), "{}", failed.join("\n"));
    }

    fn write_archive(dir: &Path, manifest: &str) {
        std::fs::create_dir_all(dir.join("bodies")).unwrap();
        std::fs::write(dir.join("bodies/0000"), b"<!doctype html>hello").unwrap();
        std::fs::write(dir.join("bodies/0001"), b"\x1f\x8bgzipped").unwrap();
        std::fs::write(dir.join(MANIFEST), manifest).unwrap();
    }

    const GOOD: &str = r#"{"format": "satbench-archive", "version": 1,
        "page": "https://www.a.test/", "created": "2026-05-01T12:00:00Z",
        "source": {"tool": "record", "from": "https://www.a.test/"},
        "entries": [
          {"method": "GET", "url": "https://www.a.test/", "status": 200,
           "headers": [["Content-Type", "text/html"], ["Date", "x"],
                       ["Set-Cookie", "a=1"], ["set-cookie", "b=2"],
                       ["alt-svc", "h3=\":443\"; ma=86400"]],
           "body": "bodies/0000"},
          {"method": "GET", "url": "https://cdn.a.test/app.js?v=2", "status": 200,
           "headers": [["content-type", "text/javascript"], ["content-encoding", "gzip"],
                       ["ETag", "W/\"v2\""]],
           "body": "bodies/0001"},
          {"method": "GET", "url": "https://www.a.test/old", "status": 301,
           "headers": [["location", "/"]], "body": null},
          {"method": "GET", "url": "https://www.a.test/none", "status": 204,
           "headers": [], "body": "bodies/0000"}
        ],
        "missing": [{"method": "GET", "url": "https://x.test/", "reason": "service worker"}]}"#;

    #[test]
    fn reads_an_archive_and_answers_from_it() {
        let dir = temp_dir("archive-read");
        write_archive(&dir, GOOD);
        let a = Archive::read(&dir).unwrap();
        assert_eq!(a.page, url("https://www.a.test/"));
        assert_eq!(a.entries.len(), 4);
        let e = &a.entries[0];
        let names: Vec<&str> = e.headers.iter().map(|(n, _)| n.as_ref()).collect();
        // validators where none were recorded: of the body file
        assert_eq!(
            names,
            [
                "content-type",
                "set-cookie",
                "set-cookie",
                "etag",
                "last-modified"
            ]
        );
        let canon = std::fs::canonicalize(&dir).unwrap();
        assert_eq!(e.body, Some((canon.join("bodies/0000"), 20)));
        assert_eq!(a.entries[1].body, Some((canon.join("bodies/0001"), 9)));
        assert_eq!(a.entries[2].body, None);
        assert_eq!(a.missing, vec![url("https://x.test/")]);
        assert_eq!(a.https_hosts(), ["www.a.test", "cdn.a.test", "x.test"]);

        // the responses: recorded headers, then the server's
        let alt = Some("h3=\":443\"");
        let d = a.decide("GET", Some(&url("https://www.a.test/?utm=1")), alt);
        assert_eq!((d.status, d.bytes, d.unmatched), (200, 20, false));
        assert_eq!(d.header("content-length"), Some("20"));
        assert_eq!(d.header("timing-allow-origin"), Some("*"));
        assert_eq!(d.header("alt-svc"), alt);
        assert_eq!(d.header("date"), None);
        assert_eq!(d.header("cache-control"), None);
        assert!(matches!(d.body, Body::File { len: 20, .. }));
        let h = a.decide("HEAD", Some(&url("https://www.a.test/")), None);
        assert_eq!((h.status, h.bytes, &h.body), (200, 0, &Body::None));
        assert_eq!(h.header("content-length"), Some("20"));
        assert_eq!(h.header("alt-svc"), None);
        let gz = a.decide("GET", Some(&url("https://cdn.a.test/app.js?v=2")), None);
        assert_eq!(gz.header("content-encoding"), Some("gzip"));
        assert_eq!(gz.bytes, 9);
        assert_eq!(
            d.header("etag"),
            Some(etag_of(b"<!doctype html>hello").as_str())
        );
        assert_eq!(gz.header("etag"), Some("W/\"v2\""), "the recorded one");
        let gz_headers = &a.entries[1].headers;
        assert_eq!(gz_headers.iter().filter(|(n, _)| n == "etag").count(), 1);
        assert!(gz.header("last-modified").is_some());
        let redirect = a.decide("GET", Some(&url("https://www.a.test/old")), None);
        assert_eq!((redirect.status, redirect.bytes), (301, 0));
        assert_eq!(redirect.header("location"), Some("/"));
        assert_eq!(redirect.header("content-length"), Some("0"));
        let none = a.decide("GET", Some(&url("https://www.a.test/none")), None);
        assert_eq!((none.status, none.bytes, &none.body), (204, 0, &Body::None));
        assert_eq!(none.header("content-length"), None);
        for miss in [Some(&url("https://www.a.test/nope.js")), None] {
            let miss = a.decide("GET", miss, None);
            assert_eq!((miss.status, miss.unmatched), (404, true));
            assert_eq!(miss.body, Body::Text(NOT_IN_ARCHIVE_TEXT));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_archives_are_one_line_naming_the_file_key_and_what_was_expected() {
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
        let expect = |got: String, what: &str| {
            assert_eq!(got, format!("--archive {manifest}: {what}"));
        };
        let e = err("{");
        assert!(
            e.starts_with(&format!("--archive {manifest}: not JSON: EOF")),
            "{e}"
        );
        expect(err("[]"), "(top level): expected an object, got []");
        expect(
            good("\"version\": 1", "\"version\": 2"),
            "version: expected 1 (the version this origin reads), got 2",
        );
        expect(
            good("\"format\": \"satbench-archive\",", ""),
            "format: expected \"satbench-archive\", got nothing",
        );
        let long = format!("\"{}\"", "x".repeat(100));
        let shown = format!("\"{}…", "x".repeat(76));
        expect(
            good(
                "\"https://www.a.test/\", \"created\"",
                &format!("{long}, \"created\""),
            ),
            &format!("page: expected {URL_EXPECTED}, got {shown}"),
        );
        expect(
            good(
                "\"page\": \"https://www.a.test/\"",
                "\"page\": \"https://www.a.test/gone\"",
            ),
            "page: expected a URL whose load ends at an entry (GET): no entry for \
             https://www.a.test/gone, got \"https://www.a.test/gone\"",
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
