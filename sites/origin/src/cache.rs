//! The cache policy (`origin serve --cache`): the `Cache-Control` every
//! successful response carries. Without `--cache` a site directory's
//! responses say `no-store` and an archive's keep the headers it recorded.

use crate::site::Decision;

/// One year: what `immutable` pairs with, as sites that version their
/// file names send it.
pub const YEAR_S: u64 = 31_536_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CachePolicy {
    /// `no-store`: nothing is kept, every load fetches everything.
    None,
    /// `no-cache`: kept, but revalidated (a conditional request) on every use.
    Revalidate,
    /// `max-age=S`: fresh for S seconds, used without a request meanwhile.
    MaxAge(u64),
    /// `max-age=31536000, immutable`: never revalidated, not even on reload.
    Immutable,
}

impl CachePolicy {
    pub fn parse(v: &str) -> Option<CachePolicy> {
        match v {
            "none" => Some(CachePolicy::None),
            "revalidate" => Some(CachePolicy::Revalidate),
            "immutable" => Some(CachePolicy::Immutable),
            _ => {
                let s = v.strip_prefix("max-age=")?;
                // digits only: `+5` or ` 5` are not what the option says
                if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                s.parse().ok().map(CachePolicy::MaxAge)
            }
        }
    }

    /// The `Cache-Control` value.
    pub fn header(self) -> String {
        match self {
            CachePolicy::None => "no-store".into(),
            CachePolicy::Revalidate => "no-cache".into(),
            CachePolicy::MaxAge(s) => format!("max-age={s}"),
            CachePolicy::Immutable => format!("max-age={YEAR_S}, immutable"),
        }
    }
}

/// Fields that say how long a response is fresh: the policy's
/// `Cache-Control` replaces them all (a recorded `Expires` would otherwise
/// still count where `Cache-Control` has no max-age).
const FRESHNESS: [&str; 3] = ["cache-control", "expires", "pragma"];

/// `d` with `policy`'s `Cache-Control`, if `d` is a success (2xx) or a
/// redirect a cache may keep (3xx); an error keeps what it has.
pub fn apply(mut d: Decision, policy: Option<CachePolicy>) -> Decision {
    let Some(policy) = policy else { return d };
    if !(200..400).contains(&d.status) {
        return d;
    }
    d.headers.retain(|(n, _)| !FRESHNESS.contains(&n.as_ref()));
    // where no-store stood: after content-type
    let at = d
        .headers
        .iter()
        .position(|(n, _)| n == "content-type")
        .map_or(0, |i| i + 1);
    d.headers
        .insert(at, ("cache-control".into(), policy.header()));
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::Body;

    #[test]
    fn parses_the_four_policies_and_refuses_the_rest() {
        assert_eq!(CachePolicy::parse("none"), Some(CachePolicy::None));
        assert_eq!(
            CachePolicy::parse("revalidate"),
            Some(CachePolicy::Revalidate)
        );
        assert_eq!(
            CachePolicy::parse("max-age=600"),
            Some(CachePolicy::MaxAge(600))
        );
        assert_eq!(
            CachePolicy::parse("max-age=0"),
            Some(CachePolicy::MaxAge(0))
        );
        assert_eq!(
            CachePolicy::parse("immutable"),
            Some(CachePolicy::Immutable)
        );
        for bad in [
            "",
            "max-age",
            "max-age=",
            "max-age=-1",
            "max-age=+5",
            "max-age=1.5",
            "max-age=99999999999999999999",
            "no-store",
            "Revalidate",
        ] {
            assert_eq!(CachePolicy::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn header_values() {
        assert_eq!(CachePolicy::None.header(), "no-store");
        assert_eq!(CachePolicy::Revalidate.header(), "no-cache");
        assert_eq!(CachePolicy::MaxAge(600).header(), "max-age=600");
        assert_eq!(
            CachePolicy::Immutable.header(),
            "max-age=31536000, immutable"
        );
    }

    fn recorded(status: u16) -> Decision {
        Decision {
            status,
            headers: vec![
                ("content-type".into(), "text/css".into()),
                ("expires".into(), "Thu, 01 Dec 2094 16:00:00 GMT".into()),
                ("cache-control".into(), "public, max-age=60".into()),
                ("etag".into(), "\"x\"".into()),
            ],
            body: Body::None,
            bytes: 0,
            unmatched: false,
        }
    }

    #[test]
    fn a_policy_replaces_every_freshness_field() {
        let d = apply(recorded(200), Some(CachePolicy::Revalidate));
        assert_eq!(
            d.headers,
            vec![
                ("content-type".into(), "text/css".to_string()),
                ("cache-control".into(), "no-cache".to_string()),
                ("etag".into(), "\"x\"".to_string()),
            ]
        );
        assert_eq!(
            apply(recorded(301), Some(CachePolicy::MaxAge(5))).header("cache-control"),
            Some("max-age=5")
        );
    }

    #[test]
    fn no_policy_or_an_error_keeps_the_headers() {
        assert_eq!(apply(recorded(200), None), recorded(200));
        assert_eq!(
            apply(recorded(404), Some(CachePolicy::Immutable)),
            recorded(404)
        );
    }
}
