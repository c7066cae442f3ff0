//! Conditional requests (RFC 9110 §13): whether a GET or HEAD whose
//! response would be a 200 is answered 304 Not Modified instead, from the
//! response's validators (`etag`, `last-modified`) and the request's
//! `If-None-Match` and `If-Modified-Since`. Pure: the listeners of every
//! protocol (h1, h1s, h2, h3) hand their decision through `answer`.

use http::header::{HeaderMap, IF_MODIFIED_SINCE, IF_NONE_MATCH};

use crate::site::{Body, Decision};

/// The preconditions a request carries, as sent (several `If-None-Match`
/// lines joined with `, `, as one list).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Conditions {
    pub if_none_match: Option<String>,
    pub if_modified_since: Option<String>,
}

impl Conditions {
    pub fn of(headers: &HeaderMap) -> Conditions {
        let inm: Vec<&str> = headers
            .get_all(IF_NONE_MATCH)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        Conditions {
            if_none_match: (!inm.is_empty()).then(|| inm.join(", ")),
            if_modified_since: headers
                .get(IF_MODIFIED_SINCE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
        }
    }
}

/// The entity tags of an `If-None-Match` list, without their `W/` (the
/// weak comparison §13.1.2 asks for ignores it), or None for `*`. A list
/// that breaks the grammar ends where it breaks.
fn listed_tags(list: &str) -> Option<Vec<&str>> {
    if list.trim() == "*" {
        return None;
    }
    let mut tags = Vec::new();
    let mut rest = list;
    loop {
        rest = rest.trim_start_matches([' ', '\t', ',']);
        let unweak = rest.strip_prefix("W/").unwrap_or(rest);
        // an opaque-tag is a quoted string without quotes inside it
        let Some(open) = unweak.strip_prefix('"') else {
            return Some(tags);
        };
        let Some(end) = open.find('"') else {
            return Some(tags);
        };
        tags.push(&unweak[..end + 2]);
        rest = &open[end + 1..];
    }
}

/// Whether `If-None-Match: list` fails for a representation tagged
/// `etag`: `*`, or a tag that weakly matches it.
fn none_match_fails(list: &str, etag: &str) -> bool {
    let etag = etag.strip_prefix("W/").unwrap_or(etag);
    match listed_tags(list) {
        None => true,
        Some(tags) => tags.contains(&etag),
    }
}

/// Whether the representation last modified at `last_modified` has not
/// changed since `since` (both HTTP-dates; an unparsable one: changed).
fn unmodified_since(since: &str, last_modified: &str) -> bool {
    match (
        httpdate::parse_http_date(since),
        httpdate::parse_http_date(last_modified),
    ) {
        (Ok(since), Ok(modified)) => modified <= since,
        _ => false,
    }
}

/// Whether the request's preconditions make a 304 of a response with
/// `status` and these validators. Only a GET or HEAD that would get a 200
/// can; `If-None-Match`, when present, decides alone (§13.2.2: a
/// recipient ignores `If-Modified-Since` then).
pub fn not_modified(
    method: &str,
    status: u16,
    etag: Option<&str>,
    last_modified: Option<&str>,
    c: &Conditions,
) -> bool {
    if !matches!(method, "GET" | "HEAD") || status != 200 {
        return false;
    }
    if let Some(list) = &c.if_none_match {
        return match etag {
            Some(etag) => none_match_fails(list, etag),
            // no tag: only `*` (a current representation exists) matches
            None => listed_tags(list).is_none(),
        };
    }
    match (&c.if_modified_since, last_modified) {
        (Some(since), Some(modified)) => unmodified_since(since, modified),
        _ => false,
    }
}

/// Header fields a 304 leaves out: those that describe a body it does
/// not send (§15.4.5 lists what it keeps: Cache-Control, ETag, Expires,
/// Vary, …).
const NOT_IN_304: [&str; 4] = [
    "content-length",
    "content-type",
    "content-encoding",
    "content-range",
];

/// `d`, or its 304 when the request's preconditions say the client's copy
/// is current: the same validators and caching fields, no body.
pub fn answer(d: Decision, method: &str, c: &Conditions) -> Decision {
    if !not_modified(
        method,
        d.status,
        d.header("etag"),
        d.header("last-modified"),
        c,
    ) {
        return d;
    }
    let headers = d
        .headers
        .into_iter()
        .filter(|(n, _)| !NOT_IN_304.contains(&n.as_ref()))
        .collect();
    Decision {
        status: 304,
        headers,
        body: Body::None,
        bytes: 0,
        unmatched: d.unmatched,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    const TAG: &str = "\"2cf24dba5fb0a30e26e83b2ac5b9e29e\"";
    const MODIFIED: &str = "Sun, 06 Nov 1994 08:49:37 GMT";

    fn inm(v: &str) -> Conditions {
        Conditions {
            if_none_match: Some(v.into()),
            ..Default::default()
        }
    }

    fn ims(v: &str) -> Conditions {
        Conditions {
            if_modified_since: Some(v.into()),
            ..Default::default()
        }
    }

    fn nm(c: &Conditions) -> bool {
        not_modified("GET", 200, Some(TAG), Some(MODIFIED), c)
    }

    #[test]
    fn if_none_match_matches_weakly_in_a_list() {
        assert!(nm(&inm(TAG)));
        assert!(nm(&inm(&format!("W/{TAG}"))));
        assert!(nm(&inm(&format!("\"a\", \"b,c\",W/{TAG}"))));
        assert!(nm(&inm("*")));
        assert!(!nm(&inm("\"other\"")));
        assert!(!nm(&inm("\"2cf24dba\"")));
        // broken grammar: what came before the break counts
        assert!(!nm(&inm(&format!("nonsense, {TAG}"))));
        assert!(nm(&inm(&format!("{TAG}, nonsense"))));
        assert!(!nm(&inm("\"unterminated")));
    }

    #[test]
    fn if_modified_since_compares_dates() {
        assert!(nm(&ims(MODIFIED)));
        assert!(nm(&ims("Mon, 07 Nov 1994 00:00:00 GMT")));
        assert!(!nm(&ims("Sun, 06 Nov 1994 08:49:36 GMT")));
        assert!(!nm(&ims("yesterday")));
        assert!(!not_modified("GET", 200, Some(TAG), None, &ims(MODIFIED)));
    }

    #[test]
    fn if_none_match_wins_over_if_modified_since() {
        let both = |tag: &str, since: &str| Conditions {
            if_none_match: Some(tag.into()),
            if_modified_since: Some(since.into()),
        };
        // the tag differs: modified, whatever the date says
        assert!(!nm(&both("\"old\"", MODIFIED)));
        // the tag matches: not modified, though the date is older
        assert!(nm(&both(TAG, "Sat, 01 Jan 1994 00:00:00 GMT")));
    }

    #[test]
    fn only_a_get_or_head_that_would_be_200() {
        let c = inm(TAG);
        assert!(not_modified("HEAD", 200, Some(TAG), None, &c));
        assert!(!not_modified("POST", 200, Some(TAG), None, &c));
        assert!(!not_modified("GET", 404, Some(TAG), None, &c));
        assert!(!not_modified("GET", 206, Some(TAG), None, &c));
        assert!(!nm(&Conditions::default()));
        // no tag to compare: only * matches
        assert!(!not_modified("GET", 200, None, Some(MODIFIED), &c));
        assert!(not_modified("GET", 200, None, None, &inm("*")));
    }

    fn ok() -> Decision {
        Decision {
            status: 200,
            headers: vec![
                ("content-type".into(), "text/css".into()),
                ("cache-control".into(), "no-cache".into()),
                ("etag".into(), TAG.into()),
                ("last-modified".into(), MODIFIED.into()),
                ("content-length".into(), "1234".into()),
                ("alt-svc".into(), "h3=\":443\"".into()),
            ],
            body: Body::File {
                path: PathBuf::from("/site/a.css"),
                len: 1234,
            },
            bytes: 1234,
            unmatched: false,
        }
    }

    #[test]
    fn a_304_keeps_the_validators_and_caching_and_sends_nothing() {
        let d = answer(ok(), "GET", &inm(TAG));
        assert_eq!((d.status, &d.body, d.bytes), (304, &Body::None, 0));
        let names: Vec<&str> = d.headers.iter().map(|(n, _)| n.as_ref()).collect();
        assert_eq!(names, ["cache-control", "etag", "last-modified", "alt-svc"]);
        assert_eq!(answer(ok(), "GET", &inm("\"x\"")), ok());
        assert_eq!(answer(ok(), "GET", &Conditions::default()), ok());
    }

    #[test]
    fn conditions_from_request_headers() {
        let mut h = HeaderMap::new();
        assert_eq!(Conditions::of(&h), Conditions::default());
        h.append(IF_NONE_MATCH, "\"a\"".parse().unwrap());
        h.append(IF_NONE_MATCH, "\"b\"".parse().unwrap());
        h.insert(IF_MODIFIED_SINCE, MODIFIED.parse().unwrap());
        assert_eq!(
            Conditions::of(&h),
            Conditions {
                if_none_match: Some("\"a\", \"b\"".into()),
                if_modified_since: Some(MODIFIED.into()),
            }
        );
    }
}
