//! The configuration file: the contract with the harness.
//!
//! Parsed by hand from a `serde_json::Value` so that every error names the
//! file and the full key path (`forward.loss.pct`), and unknown keys are
//! refused at every level.

use serde_json::{Map, Value};
use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub name: String,
    pub seed: u64,
    /// Terminal side.
    pub a: Side,
    /// Gateway side.
    pub b: Side,
    /// b -> a (gateway to terminal).
    pub forward: Impairments,
    /// a -> b (terminal to gateway).
    pub ret: Impairments,
    pub stats_path: PathBuf,
    pub pcap_dir: Option<PathBuf>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    pub netns: String,
    pub dev: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Impairments {
    pub delay_ms: f64,
    pub jitter_ms: f64,
    pub jitter_distribution: Distribution,
    pub loss: Option<LossModel>,
    pub rate_mbit: Option<f64>,
    pub limit: Option<Limit>,
    pub schedule: Option<ScheduleConfig>,
}

impl Default for Impairments {
    fn default() -> Self {
        Impairments {
            delay_ms: 0.0,
            jitter_ms: 0.0,
            jitter_distribution: Distribution::Normal,
            loss: None,
            rate_mbit: None,
            limit: None,
            schedule: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    Uniform,
    Normal,
    Pareto,
    ParetoNormal,
}

#[derive(Clone, Debug, PartialEq)]
pub enum LossModel {
    Random {
        pct: f64,
    },
    /// netem's `gemodel p r 1-h 1-k`, all in percent.
    GilbertElliott {
        p_pct: f64,
        r_pct: f64,
        h_loss_pct: f64,
        k_loss_pct: f64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

#[derive(Clone, Debug, PartialEq)]
pub struct ScheduleConfig {
    pub looped: bool,
    pub points: Vec<SchedulePoint>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SchedulePoint {
    pub t_s: f64,
    pub delay_ms: Option<f64>,
    pub rate: RateChange,
}

/// What a schedule point says about the rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RateChange {
    /// The key is absent: the rate in force goes on.
    Keep,
    /// `"rate_mbit": null`: no rate limit from this point.
    Unlimited,
    /// `"rate_mbit": X`.
    Mbit(f64),
}

/// A configuration error: the problem, with the key path when there is one.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

type R<T> = Result<T, ConfigError>;

fn err<T>(msg: String) -> R<T> {
    Err(ConfigError(msg))
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One JSON object being read, with its key path for messages.
struct Obj<'a> {
    path: String,
    map: &'a Map<String, Value>,
}

impl<'a> Obj<'a> {
    fn new(path: &str, v: &'a Value) -> R<Obj<'a>> {
        match v {
            Value::Object(map) => Ok(Obj {
                path: path.to_string(),
                map,
            }),
            other => err(format!(
                "{}: expected an object, got {}",
                if path.is_empty() { "top level" } else { path },
                kind(other)
            )),
        }
    }

    fn allow(&self, keys: &[&str]) -> R<()> {
        for k in self.map.keys() {
            if !keys.contains(&k.as_str()) {
                return err(format!(
                    "unknown key \"{}\" (allowed here: {})",
                    join(&self.path, k),
                    keys.join(", ")
                ));
            }
        }
        Ok(())
    }

    fn key(&self, k: &str) -> String {
        join(&self.path, k)
    }

    /// The value, treating an explicit null like an absent key.
    fn get(&self, k: &str) -> Option<&'a Value> {
        match self.map.get(k) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        }
    }

    fn req(&self, k: &str) -> R<&'a Value> {
        match self.map.get(k) {
            None => err(format!("missing key \"{}\"", self.key(k))),
            Some(Value::Null) => err(format!("{}: must not be null", self.key(k))),
            Some(v) => Ok(v),
        }
    }

    fn num_of(&self, k: &str, v: &Value) -> R<f64> {
        match v.as_f64() {
            Some(x) if x.is_finite() => Ok(x),
            _ => err(format!(
                "{}: expected a number, got {}",
                self.key(k),
                kind(v)
            )),
        }
    }

    fn string(&self, k: &str) -> R<String> {
        match self.req(k)? {
            Value::String(s) if !s.is_empty() => Ok(s.clone()),
            Value::String(_) => err(format!("{}: must not be empty", self.key(k))),
            other => err(format!(
                "{}: expected a string, got {}",
                self.key(k),
                kind(other)
            )),
        }
    }

    fn opt_string(&self, k: &str) -> R<Option<String>> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
            Some(Value::String(_)) => err(format!("{}: must not be empty (use null)", self.key(k))),
            Some(other) => err(format!(
                "{}: expected a string or null, got {}",
                self.key(k),
                kind(other)
            )),
        }
    }

    /// A number in [lo, hi] (hi may be infinite); `None` when absent or null.
    fn opt_num(&self, k: &str, lo: f64, hi: f64) -> R<Option<f64>> {
        match self.get(k) {
            None => Ok(None),
            Some(v) => {
                let x = self.num_of(k, v)?;
                if x < lo || x > hi {
                    if hi.is_infinite() {
                        err(format!("{}: must be >= {lo} (got {x})", self.key(k)))
                    } else {
                        err(format!(
                            "{}: must be between {lo} and {hi} (got {x})",
                            self.key(k)
                        ))
                    }
                } else {
                    Ok(Some(x))
                }
            }
        }
    }

    fn num(&self, k: &str, lo: f64, hi: f64) -> R<f64> {
        self.req(k)?;
        Ok(self.opt_num(k, lo, hi)?.expect("present"))
    }

    fn pct(&self, k: &str) -> R<f64> {
        self.num(k, 0.0, 100.0)
    }

    fn positive_int(&self, k: &str) -> R<u64> {
        let v = self.req(k)?;
        match v.as_u64() {
            Some(n) if n >= 1 => Ok(n),
            _ => err(format!(
                "{}: expected a whole number >= 1, got {}",
                self.key(k),
                v
            )),
        }
    }
}

/// Reads and checks the configuration file; errors name the file.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError(format!("config {}: cannot read: {e}", path.display())))?;
    parse(&text).map_err(|e| ConfigError(format!("config {}: {}", path.display(), e.0)))
}

/// Parses and checks configuration text.
pub fn parse(text: &str) -> Result<Config, ConfigError> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| ConfigError(format!("invalid JSON: {e}")))?;
    let top = Obj::new("", &v)?;
    top.allow(&[
        "name",
        "seed",
        "a",
        "b",
        "forward",
        "return",
        "stats_path",
        "pcap_dir",
    ])?;
    let name = top.string("name")?;
    let seed_v = top.req("seed")?;
    let seed = seed_v
        .as_u64()
        .ok_or_else(|| ConfigError(format!("seed: expected a whole number >= 0, got {seed_v}")))?;
    let a = side(&Obj::new("a", top.req("a")?)?)?;
    let b = side(&Obj::new("b", top.req("b")?)?)?;
    let forward = impairments("forward", top.req("forward")?)?;
    let ret = impairments("return", top.req("return")?)?;
    let stats_path = PathBuf::from(top.string("stats_path")?);
    let pcap_dir = top.opt_string("pcap_dir")?.map(PathBuf::from);
    Ok(Config {
        name,
        seed,
        a,
        b,
        forward,
        ret,
        stats_path,
        pcap_dir,
    })
}

fn side(o: &Obj) -> R<Side> {
    o.allow(&["netns", "dev"])?;
    let netns = o.string("netns")?;
    let dev = o.string("dev")?;
    if dev.len() >= libc::IFNAMSIZ {
        return err(format!(
            "{}: interface name longer than {} bytes",
            o.key("dev"),
            libc::IFNAMSIZ - 1
        ));
    }
    if netns.contains('/') {
        return err(format!("{}: a namespace name, not a path", o.key("netns")));
    }
    Ok(Side { netns, dev })
}

/// Parses one direction's impairments object found at `path`.
pub fn impairments(path: &str, v: &Value) -> R<Impairments> {
    let o = Obj::new(path, v)?;
    o.allow(&[
        "delay_ms",
        "jitter_ms",
        "jitter_distribution",
        "loss",
        "rate_mbit",
        "limit",
        "schedule",
    ])?;
    let delay_ms = o.opt_num("delay_ms", 0.0, f64::INFINITY)?.unwrap_or(0.0);
    let jitter_ms = o.opt_num("jitter_ms", 0.0, f64::INFINITY)?.unwrap_or(0.0);
    let jitter_distribution = match o.get("jitter_distribution") {
        None => Distribution::Normal,
        Some(Value::String(s)) => match s.as_str() {
            "uniform" => Distribution::Uniform,
            "normal" => Distribution::Normal,
            "pareto" => Distribution::Pareto,
            "paretonormal" => Distribution::ParetoNormal,
            other => {
                return err(format!(
                    "{}: unknown distribution \"{other}\" (uniform, normal, pareto, paretonormal)",
                    o.key("jitter_distribution")
                ))
            }
        },
        Some(other) => {
            return err(format!(
                "{}: expected a string, got {}",
                o.key("jitter_distribution"),
                kind(other)
            ))
        }
    };
    let loss = match o.get("loss") {
        None => None,
        Some(lv) => Some(loss(&Obj::new(&o.key("loss"), lv)?)?),
    };
    let rate_mbit = rate(&o, "rate_mbit")?;
    let limit = match o.get("limit") {
        None => None,
        Some(lv) => {
            let l = Obj::new(&o.key("limit"), lv)?;
            l.allow(&["packets", "bytes"])?;
            match (l.map.contains_key("packets"), l.map.contains_key("bytes")) {
                (true, false) => Some(Limit::Packets(l.positive_int("packets")?)),
                (false, true) => Some(Limit::Bytes(l.positive_int("bytes")?)),
                _ => {
                    return err(format!(
                        "{}: give exactly one of \"packets\" or \"bytes\"",
                        l.path
                    ))
                }
            }
        }
    };
    let schedule = match o.get("schedule") {
        None => None,
        Some(sv) => Some(schedule(&Obj::new(&o.key("schedule"), sv)?)?),
    };
    Ok(Impairments {
        delay_ms,
        jitter_ms,
        jitter_distribution,
        loss,
        rate_mbit,
        limit,
        schedule,
    })
}

fn rate(o: &Obj, k: &str) -> R<Option<f64>> {
    match o.get(k) {
        None => Ok(None),
        Some(v) => {
            let x = o.num_of(k, v)?;
            if x > 0.0 {
                Ok(Some(x))
            } else {
                err(format!(
                    "{}: must be > 0 (got {x}); use null for no rate limit",
                    o.key(k)
                ))
            }
        }
    }
}

fn loss(o: &Obj) -> R<LossModel> {
    let model = o.string("model")?;
    match model.as_str() {
        "random" => {
            o.allow(&["model", "pct"])?;
            Ok(LossModel::Random { pct: o.pct("pct")? })
        }
        "gemodel" => {
            o.allow(&["model", "p_pct", "r_pct", "h_loss_pct", "k_loss_pct"])?;
            Ok(LossModel::GilbertElliott {
                p_pct: o.pct("p_pct")?,
                r_pct: o.pct("r_pct")?,
                h_loss_pct: o.opt_num("h_loss_pct", 0.0, 100.0)?.unwrap_or(100.0),
                k_loss_pct: o.opt_num("k_loss_pct", 0.0, 100.0)?.unwrap_or(0.0),
            })
        }
        other => err(format!(
            "{}: unknown loss model \"{other}\" (random, gemodel)",
            o.key("model")
        )),
    }
}

fn schedule(o: &Obj) -> R<ScheduleConfig> {
    o.allow(&["loop", "points"])?;
    let looped = match o.get("loop") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return err(format!(
                "{}: expected true or false, got {}",
                o.key("loop"),
                kind(other)
            ))
        }
    };
    let pts = match o.req("points")? {
        Value::Array(a) if !a.is_empty() => a,
        Value::Array(_) => return err(format!("{}: needs at least one point", o.key("points"))),
        other => {
            return err(format!(
                "{}: expected an array, got {}",
                o.key("points"),
                kind(other)
            ))
        }
    };
    let mut points = Vec::with_capacity(pts.len());
    let mut last_t = 0.0f64;
    for (i, pv) in pts.iter().enumerate() {
        let p = Obj::new(&format!("{}[{i}]", o.key("points")), pv)?;
        p.allow(&["t_s", "delay_ms", "rate_mbit"])?;
        let t_s = p.num("t_s", 0.0, f64::INFINITY)?;
        if t_s < last_t {
            return err(format!(
                "{}: times must not decrease ({t_s} after {last_t})",
                p.key("t_s")
            ));
        }
        last_t = t_s;
        let delay_ms = p.opt_num("delay_ms", 0.0, f64::INFINITY)?;
        let rate = match p.map.get("rate_mbit") {
            None => RateChange::Keep,
            Some(Value::Null) => RateChange::Unlimited,
            Some(_) => RateChange::Mbit(rate(&p, "rate_mbit")?.expect("present")),
        };
        points.push(SchedulePoint {
            t_s,
            delay_ms,
            rate,
        });
    }
    if looped && last_t <= 0.0 {
        return err(format!(
            "{}: a looping schedule needs its last t_s > 0 (the period)",
            o.key("points")
        ));
    }
    Ok(ScheduleConfig { looped, points })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Value {
        serde_json::json!({
            "name": "sat",
            "seed": 42,
            "a": {"netns": "sbt-x1-st", "dev": "sat0"},
            "b": {"netns": "sbt-x1-gw", "dev": "sat0"},
            "forward": {"delay_ms": 250.0, "jitter_ms": 0.0, "jitter_distribution": "normal",
                        "loss": {"model": "random", "pct": 1.0}, "rate_mbit": 20.0,
                        "limit": {"packets": 1000}, "schedule": null},
            "return": {"delay_ms": 250.0, "loss": {"model": "gemodel", "p_pct": 1.7, "r_pct": 93.5,
                        "h_loss_pct": 100.0, "k_loss_pct": 0.0}, "rate_mbit": null, "limit": null,
                        "schedule": {"loop": false, "points": [{"t_s": 0, "delay_ms": 25, "rate_mbit": null},
                                                             {"t_s": 30, "delay_ms": 140}]}},
            "stats_path": "/run/satbench/x1/sat.stats.json",
            "pcap_dir": null
        })
    }

    fn with(f: impl FnOnce(&mut Value)) -> Result<Config, ConfigError> {
        let mut v = base();
        f(&mut v);
        parse(&v.to_string())
    }

    #[test]
    fn the_documented_example_parses() {
        let c = parse(&base().to_string()).unwrap();
        assert_eq!(c.name, "sat");
        assert_eq!(c.seed, 42);
        assert_eq!(
            c.a,
            Side {
                netns: "sbt-x1-st".into(),
                dev: "sat0".into()
            }
        );
        assert_eq!(c.forward.rate_mbit, Some(20.0));
        assert_eq!(c.forward.limit, Some(Limit::Packets(1000)));
        assert_eq!(c.forward.loss, Some(LossModel::Random { pct: 1.0 }));
        assert_eq!(
            c.ret.loss,
            Some(LossModel::GilbertElliott {
                p_pct: 1.7,
                r_pct: 93.5,
                h_loss_pct: 100.0,
                k_loss_pct: 0.0
            })
        );
        let s = c.ret.schedule.unwrap();
        assert!(!s.looped);
        assert_eq!(s.points[0].rate, RateChange::Unlimited);
        assert_eq!(s.points[1].rate, RateChange::Keep);
        assert_eq!(s.points[1].delay_ms, Some(140.0));
        assert_eq!(c.pcap_dir, None);
    }

    #[test]
    fn unknown_keys_are_named_with_their_path() {
        let e = with(|v| v["forward"]["delay"] = 3.into()).unwrap_err();
        assert!(e.0.contains("\"forward.delay\""), "{e}");
        let e = with(|v| v["bogus"] = 3.into()).unwrap_err();
        assert!(e.0.contains("\"bogus\""), "{e}");
        let e = with(|v| v["return"]["loss"]["pct"] = 3.into()).unwrap_err();
        assert!(e.0.contains("\"return.loss.pct\""), "{e}");
        let e = with(|v| v["return"]["schedule"]["points"][1]["rate"] = 3.into()).unwrap_err();
        assert!(e.0.contains("\"return.schedule.points[1].rate\""), "{e}");
    }

    #[test]
    fn the_file_is_named_in_load_errors() {
        let dir = std::env::temp_dir().join(format!("linkem-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.json");
        let mut v = base();
        v["forward"]["wat"] = 1.into();
        std::fs::write(&f, v.to_string()).unwrap();
        let e = load(&f).unwrap_err();
        assert!(
            e.0.contains("bad.json") && e.0.contains("forward.wat"),
            "{e}"
        );
        let e = load(&dir.join("missing.json")).unwrap_err();
        assert!(e.0.contains("missing.json"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn negative_delay_is_refused() {
        let e = with(|v| v["forward"]["delay_ms"] = (-1.0).into()).unwrap_err();
        assert!(
            e.0.contains("forward.delay_ms") && e.0.contains(">= 0"),
            "{e}"
        );
        let e = with(|v| v["return"]["jitter_ms"] = (-0.5).into()).unwrap_err();
        assert!(e.0.contains("return.jitter_ms"), "{e}");
        let e =
            with(|v| v["return"]["schedule"]["points"][0]["delay_ms"] = (-5).into()).unwrap_err();
        assert!(e.0.contains("points[0].delay_ms"), "{e}");
    }

    #[test]
    fn loss_over_100_is_refused() {
        let e = with(|v| v["forward"]["loss"]["pct"] = 100.5.into()).unwrap_err();
        assert!(
            e.0.contains("forward.loss.pct") && e.0.contains("between 0 and 100"),
            "{e}"
        );
        let e = with(|v| v["return"]["loss"]["r_pct"] = 101.into()).unwrap_err();
        assert!(e.0.contains("return.loss.r_pct"), "{e}");
        let e = with(|v| v["return"]["loss"]["model"] = "bernoulli".into()).unwrap_err();
        assert!(e.0.contains("return.loss.model"), "{e}");
    }

    #[test]
    fn rate_zero_is_refused() {
        let e = with(|v| v["forward"]["rate_mbit"] = 0.into()).unwrap_err();
        assert!(
            e.0.contains("forward.rate_mbit") && e.0.contains("> 0"),
            "{e}"
        );
        let e = with(|v| v["return"]["schedule"]["points"][1]["rate_mbit"] = 0.into()).unwrap_err();
        assert!(e.0.contains("points[1].rate_mbit"), "{e}");
    }

    #[test]
    fn other_shapes_are_refused() {
        assert!(with(|v| v["forward"]["limit"] = serde_json::json!({"packets": 0})).is_err());
        assert!(
            with(|v| v["forward"]["limit"] = serde_json::json!({"packets": 1, "bytes": 2}))
                .is_err()
        );
        assert!(with(|v| v["forward"]["limit"] = serde_json::json!({"bytes": 1.5})).is_err());
        assert!(with(|v| v["forward"]["jitter_distribution"] = "gamma".into()).is_err());
        assert!(with(|v| v["seed"] = (-1).into()).is_err());
        assert!(with(|v| v["seed"] = "42".into()).is_err());
        assert!(with(|v| v["a"]["dev"] = "a-very-long-name0".into()).is_err());
        let e = with(|v| {
            v.as_object_mut()
                .unwrap()
                .remove("stats_path")
                .map(|_| ())
                .unwrap()
        })
        .unwrap_err();
        assert!(e.0.contains("stats_path"), "{e}");
        let e = with(|v| {
            v["return"]["schedule"]["points"] =
                serde_json::json!([{"t_s": 5, "delay_ms": 1}, {"t_s": 2, "delay_ms": 1}])
        })
        .unwrap_err();
        assert!(e.0.contains("must not decrease"), "{e}");
        let e = with(|v| {
            v["return"]["schedule"] =
                serde_json::json!({"loop": true, "points": [{"t_s": 0, "delay_ms": 1}]})
        })
        .unwrap_err();
        assert!(e.0.contains("period"), "{e}");
        assert!(parse("{not json").unwrap_err().0.contains("invalid JSON"));
    }

    #[test]
    fn optional_keys_default() {
        let c = with(|v| v["forward"] = serde_json::json!({"delay_ms": 10})).unwrap();
        assert_eq!(
            c.forward,
            Impairments {
                delay_ms: 10.0,
                ..Impairments::default()
            }
        );
        let c = with(|v| {
            v["return"]["loss"] = serde_json::json!({"model": "gemodel", "p_pct": 1, "r_pct": 50})
        })
        .unwrap();
        assert_eq!(
            c.ret.loss,
            Some(LossModel::GilbertElliott {
                p_pct: 1.0,
                r_pct: 50.0,
                h_loss_pct: 100.0,
                k_loss_pct: 0.0
            })
        );
        let c = with(|v| v["pcap_dir"] = "/tmp/x".into()).unwrap();
        assert_eq!(c.pcap_dir, Some(PathBuf::from("/tmp/x")));
    }
}
