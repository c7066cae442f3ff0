//! The QUIC option keys, read from `transport/quic-options.json`: the one
//! table of names, value kinds and help lines that the Rust tools and the
//! JavaScript harness share.

use std::sync::LazyLock;

use serde::Deserialize;

/// One option. The JSON's `key` strings are these variants in kebab-case,
/// so a key the table has and Rust lacks (or the other way round) fails
/// the tests below.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Key {
    Cc,
    InitialWindow,
    InitialMtu,
    AckFrequency,
    AckElicitingThreshold,
    MaxAckDelayMs,
    BdpBytes,
    IdleTimeoutMs,
    CarefulResume,
}

/// What an option's value looks like.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// One of `values`.
    Choice,
    /// A whole number.
    Count,
    /// No value: present or not.
    Flag,
}

/// One row of the table.
#[derive(Debug)]
pub struct Spec {
    pub key: Key,
    /// `initial-window`: the flag is `--quic-initial-window`, the
    /// `--accept-side` item `initial-window=…`.
    pub name: String,
    pub kind: Kind,
    /// The allowed values of a `Choice`.
    pub values: Vec<String>,
    /// The placeholder in `--help` (`PACKETS`), none for flags.
    pub value_name: Option<String>,
    pub help: String,
    /// The least and the most a `Count` may be (the harness checks the
    /// same bounds before a run).
    pub min: Option<u64>,
    pub max: Option<u64>,
}

/// A row as the JSON has it.
#[derive(Deserialize)]
struct Row {
    key: String,
    kind: Kind,
    #[serde(default)]
    values: Vec<String>,
    #[serde(default)]
    value_name: Option<String>,
    #[serde(default)]
    min: Option<u64>,
    #[serde(default)]
    max: Option<u64>,
    help: String,
}

#[derive(Deserialize)]
struct Table {
    options: Vec<Row>,
}

fn load(json: &str) -> Result<Vec<Spec>, String> {
    let table: Table = serde_json::from_str(json).map_err(|e| e.to_string())?;
    table
        .options
        .into_iter()
        .map(|r| {
            let key = serde_json::from_value(serde_json::Value::String(r.key.clone()))
                .map_err(|_| format!("'{}' is not a quic_keys::Key", r.key))?;
            Ok(Spec {
                key,
                name: r.key,
                kind: r.kind,
                values: r.values,
                value_name: r.value_name,
                help: r.help,
                min: r.min,
                max: r.max,
            })
        })
        .collect()
}

static TABLE: LazyLock<Vec<Spec>> = LazyLock::new(|| {
    load(include_str!("../quic-options.json"))
        .unwrap_or_else(|e| panic!("transport/quic-options.json: {e}"))
});

/// Every option, in the table's order.
pub fn specs() -> &'static [Spec] {
    &TABLE
}

/// The option named `name` (`cc`, `initial-window`, …).
pub fn by_name(name: &str) -> Option<&'static Spec> {
    specs().iter().find(|s| s.name == name)
}

impl Key {
    pub fn spec(self) -> &'static Spec {
        specs()
            .iter()
            .find(|s| s.key == self)
            .expect("every Key is in quic-options.json (tested)")
    }

    pub fn name(self) -> &'static str {
        &self.spec().name
    }
}

/// `a, b or c`.
pub fn one_of(values: &[String]) -> String {
    match values {
        [] => String::new(),
        [only] => only.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Key; 9] = [
        Key::Cc,
        Key::InitialWindow,
        Key::InitialMtu,
        Key::AckFrequency,
        Key::AckElicitingThreshold,
        Key::MaxAckDelayMs,
        Key::BdpBytes,
        Key::IdleTimeoutMs,
        Key::CarefulResume,
    ];

    #[test]
    fn the_table_and_the_enum_name_the_same_keys() {
        let names: Vec<&str> = specs().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names.len(), ALL.len(), "{names:?}");
        for k in ALL {
            assert_eq!(by_name(k.name()).unwrap().key, k);
        }
    }

    #[test]
    fn a_key_rust_lacks_is_an_error() {
        let e = load(r#"{"options": [{"key": "pacing", "kind": "flag", "help": "h"}]}"#);
        assert_eq!(e.unwrap_err(), "'pacing' is not a quic_keys::Key");
    }

    #[test]
    fn every_entry_is_complete() {
        for s in specs() {
            assert!(!s.help.is_empty() && !s.help.contains('\n'), "{}", s.name);
            assert_eq!(s.kind == Kind::Choice, !s.values.is_empty(), "{}", s.name);
            assert_eq!(s.kind == Kind::Flag, s.value_name.is_none(), "{}", s.name);
        }
    }

    #[test]
    fn lists_read_naturally() {
        let v = |s: &[&str]| one_of(&s.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(v(&["cubic", "newreno", "bbr"]), "cubic, newreno or bbr");
        assert_eq!(v(&["a"]), "a");
    }
}
