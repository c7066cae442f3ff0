//! The configuration file: the contract with the harness (`linkemConfig` in
//! the harness's link-backends.js writes it; README.md documents it).
//!
//! serde reads it straight into these types. Every object refuses unknown
//! keys; what the types alone cannot say (ranges, non-empty names, a
//! schedule's order) is checked as each value is read, so that every error
//! names the key path (`forward.loss.pct`) and what was expected.

use serde::de::{Deserializer, Error as _};
use serde::Deserialize;
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, expecting = "the linkem configuration object")]
pub struct Config {
    #[serde(deserialize_with = "non_empty")]
    pub name: String,
    pub seed: u64,
    /// Terminal side.
    pub a: Side,
    /// Gateway side.
    pub b: Side,
    /// b -> a (gateway to terminal).
    pub forward: Impairments,
    /// a -> b (terminal to gateway).
    #[serde(rename = "return")]
    pub ret: Impairments,
    #[serde(deserialize_with = "non_empty_path")]
    pub stats_path: PathBuf,
    #[serde(default, deserialize_with = "opt_non_empty_path")]
    pub pcap_dir: Option<PathBuf>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object with netns and dev")]
pub struct Side {
    #[serde(deserialize_with = "netns_name")]
    pub netns: String,
    #[serde(deserialize_with = "dev_name")]
    pub dev: String,
}

/// One direction's impairments: every key optional, `null` as if absent.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, expecting = "an object of impairments")]
pub struct Impairments {
    #[serde(deserialize_with = "ms_or_zero")]
    pub delay_ms: f64,
    #[serde(deserialize_with = "ms_or_zero")]
    pub jitter_ms: f64,
    #[serde(deserialize_with = "or_default")]
    pub jitter_distribution: Distribution,
    pub loss: Option<LossModel>,
    #[serde(deserialize_with = "opt_rate")]
    pub rate_mbit: Option<f64>,
    pub limit: Option<Limit>,
    pub schedule: Option<ScheduleConfig>,
    /// The satellite access model (frame clock, encapsulation, demand
    /// assignment); none: an ideal pipe.
    pub access: Option<AccessConfig>,
    /// A LEO slot process (see `slots.rs`); none: no slots.
    pub slots: Option<SlotsConfig>,
}

/// A LEO terminal's slot process: the terminal is served by one satellite
/// per slot of `period_s`; each slot adds its own base one-way delay, drawn
/// uniformly from `delay_min_ms..=delay_max_ms`; a handover (each slot's
/// start) adds `spike_ms` for `spike_s` and loses packets with probability
/// `loss_p` for `loss_s`. With `outages`, the terminal also loses its
/// satellite at random times (see `outages.rs`); after each outage it is
/// on another one: a handover like a slot's start.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "SlotsKeys")]
pub struct SlotsConfig {
    pub period_s: f64,
    pub phase: SlotPhase,
    pub delay_min_ms: f64,
    pub delay_max_ms: f64,
    pub spike_ms: f64,
    pub spike_s: f64,
    pub loss_p: f64,
    pub loss_s: f64,
    pub outages: Option<OutagesConfig>,
}

/// Outages of a moving terminal (obstructions, beam switching): every
/// packet is lost during one; from one's end to the next's start is
/// exponential with mean `mean_gap_s`, each lasts `min_s..=max_s`
/// uniformly.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "OutagesKeys")]
pub struct OutagesConfig {
    pub mean_gap_s: f64,
    pub min_s: f64,
    pub max_s: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an outages object")]
struct OutagesKeys {
    #[serde(deserialize_with = "positive")]
    mean_gap_s: f64,
    #[serde(deserialize_with = "non_negative")]
    min_s: f64,
    #[serde(deserialize_with = "positive")]
    max_s: f64,
}

impl TryFrom<OutagesKeys> for OutagesConfig {
    type Error = String;
    fn try_from(k: OutagesKeys) -> Result<Self, String> {
        if k.max_s < k.min_s {
            return Err(format!("max_s ({}) is below min_s ({})", k.max_s, k.min_s));
        }
        Ok(OutagesConfig {
            mean_gap_s: k.mean_gap_s,
            min_s: k.min_s,
            max_s: k.max_s,
        })
    }
}

/// Where in its slot linkem's time 0 falls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SlotPhase {
    /// Fixed: seconds into the slot at time 0 (a reproducible run).
    Fixed(f64),
    /// From the wall clock at time 0: a boundary falls this many seconds
    /// past each full minute, and every `period_s` after it.
    WallClock { boundary_at_s: f64 },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a slot process object")]
struct SlotsKeys {
    #[serde(deserialize_with = "positive")]
    period_s: f64,
    #[serde(default, deserialize_with = "opt_non_negative")]
    phase_s: Option<f64>,
    #[serde(default, deserialize_with = "opt_non_negative")]
    boundary_at_s: Option<f64>,
    #[serde(deserialize_with = "non_negative")]
    delay_min_ms: f64,
    #[serde(deserialize_with = "non_negative")]
    delay_max_ms: f64,
    #[serde(default, deserialize_with = "ms_or_zero")]
    spike_ms: f64,
    #[serde(default, deserialize_with = "ms_or_zero")]
    spike_s: f64,
    #[serde(default, deserialize_with = "probability")]
    loss_p: f64,
    #[serde(default, deserialize_with = "ms_or_zero")]
    loss_s: f64,
    #[serde(default)]
    outages: Option<OutagesConfig>,
}

impl TryFrom<SlotsKeys> for SlotsConfig {
    type Error = String;
    fn try_from(k: SlotsKeys) -> Result<Self, String> {
        if k.delay_max_ms < k.delay_min_ms {
            return Err(format!(
                "delay_max_ms ({}) is below delay_min_ms ({})",
                k.delay_max_ms, k.delay_min_ms
            ));
        }
        let phase = match (k.phase_s, k.boundary_at_s) {
            (Some(_), Some(_)) => return Err("give phase_s or boundary_at_s, not both".into()),
            (Some(p), None) => SlotPhase::Fixed(p),
            (None, b) => SlotPhase::WallClock {
                boundary_at_s: b.unwrap_or(0.0),
            },
        };
        Ok(SlotsConfig {
            period_s: k.period_s,
            phase,
            delay_min_ms: k.delay_min_ms,
            delay_max_ms: k.delay_max_ms,
            spike_ms: k.spike_ms,
            spike_s: k.spike_s,
            loss_p: k.loss_p,
            loss_s: k.loss_s,
            outages: k.outages,
        })
    }
}

/// The access model of one direction (see `access.rs`); every key optional.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, expecting = "an access model object")]
pub struct AccessConfig {
    /// Frame (superframe) duration: packets start only on its boundaries.
    #[serde(deserialize_with = "opt_positive")]
    pub frame_ms: Option<f64>,
    /// Encapsulation header added to every packet.
    #[serde(deserialize_with = "or_default")]
    pub header_bytes: u32,
    /// Pad each packet (with its header) up to a multiple of this.
    #[serde(deserialize_with = "opt_positive_u32")]
    pub pad_to_bytes: Option<u32>,
    /// Demand assignment (return link).
    pub dama: Option<DamaConfig>,
    /// Loss per link-layer frame instead of per packet.
    pub frame_loss: Option<FrameLossConfig>,
}

/// The direction's loss model drawn per link-layer frame: packets are packed
/// into frames of `frame_bytes` back to back, and a lost frame takes every
/// packet with a byte in it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "FrameLossKeys")]
pub struct FrameLossConfig {
    /// Payload of one frame (a DVB-S2 BBFrame's data field, an RCS2 burst).
    pub frame_bytes: u32,
    /// How a frame travels in datagrams where the loss is drawn.
    pub carriage: Carriage,
    /// In-order delivery after a loss: the frames behind a lost one wait
    /// until more than this many are waiting (OpenSAND's udp_stack).
    pub hold_frames: Option<u32>,
}

/// The datagrams a frame travels in where the loss is drawn, each drawn on
/// its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Carriage {
    /// Padded to `frame_bytes`: always this many datagrams.
    Padded { datagrams: u32 },
    /// Unpadded: one datagram per this many bytes of the frame's fill
    /// (OpenSAND sends a BBFrame with only the bytes used, IP-fragmented on
    /// its emulation network).
    Unpadded { datagram_bytes: u32 },
}

/// `frame_loss` as written: `datagrams` and `datagram_bytes` exclude each
/// other, which serde's attributes cannot say.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a frame loss object")]
struct FrameLossKeys {
    #[serde(deserialize_with = "positive_u32")]
    frame_bytes: u32,
    #[serde(default, deserialize_with = "opt_positive_u32")]
    datagrams: Option<u32>,
    #[serde(default, deserialize_with = "opt_positive_u32")]
    datagram_bytes: Option<u32>,
    #[serde(default, deserialize_with = "opt_positive_u32")]
    hold_frames: Option<u32>,
}

impl TryFrom<FrameLossKeys> for FrameLossConfig {
    type Error = String;
    fn try_from(k: FrameLossKeys) -> Result<Self, String> {
        let carriage = match (k.datagrams, k.datagram_bytes) {
            (Some(_), Some(_)) => return Err("give datagrams or datagram_bytes, not both".into()),
            (_, Some(datagram_bytes)) => Carriage::Unpadded { datagram_bytes },
            (datagrams, None) => Carriage::Padded {
                datagrams: datagrams.unwrap_or(1),
            },
        };
        Ok(FrameLossConfig {
            frame_bytes: k.frame_bytes,
            carriage,
            hold_frames: k.hold_frames,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a demand assignment object")]
pub struct DamaConfig {
    /// Constant rate always available, Mbit/s (0: none).
    #[serde(deserialize_with = "non_negative")]
    pub cra_mbit: f64,
    /// From the capacity request to the grant.
    #[serde(deserialize_with = "non_negative")]
    pub request_grant_ms: f64,
    /// Idle time after which the granted capacity is released.
    #[serde(deserialize_with = "non_negative")]
    pub idle_release_ms: f64,
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
            access: None,
            slots: None,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    Uniform,
    #[default]
    Normal,
    Pareto,
    ParetoNormal,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "LossKeys")]
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "LimitKeys")]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "ScheduleKeys")]
pub struct ScheduleConfig {
    pub looped: bool,
    pub points: Vec<SchedulePoint>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a schedule point object")]
pub struct SchedulePoint {
    #[serde(deserialize_with = "non_negative")]
    pub t_s: f64,
    #[serde(default, deserialize_with = "opt_non_negative")]
    pub delay_ms: Option<f64>,
    #[serde(rename = "rate_mbit", default, deserialize_with = "rate_change")]
    pub rate: RateChange,
}

/// What a schedule point says about the rate.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum RateChange {
    /// The key is absent: the rate in force goes on.
    #[default]
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

/// Reads and checks the configuration file; errors name the file.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError(format!("config {}: cannot read: {e}", path.display())))?;
    parse(&text).map_err(|e| ConfigError(format!("config {}: {}", path.display(), e.0)))
}

/// Parses and checks configuration text.
pub fn parse(text: &str) -> Result<Config, ConfigError> {
    // Syntax first, so that what follows is about shapes and values only.
    let v: Value =
        serde_json::from_str(text).map_err(|e| ConfigError(format!("invalid JSON: {e}")))?;
    only_points_are_lists(&v, "")?;
    serde_path_to_error::deserialize(v).map_err(|e| {
        ConfigError(match e.path().to_string().as_str() {
            "." => e.into_inner().to_string(),
            path => format!("{path}: {}", e.into_inner()),
        })
    })
}

/// serde would also read an object from a list of its values in order; the
/// file's only list is a schedule's `points`, so any other is refused.
fn only_points_are_lists(v: &Value, path: &str) -> Result<(), ConfigError> {
    let refuse = |at: &str| {
        ConfigError(format!(
            "{}: a list is not expected here (only a schedule's points are one)",
            if at.is_empty() { "top level" } else { at }
        ))
    };
    match v {
        Value::Array(_) => Err(refuse(path)),
        Value::Object(map) => map.iter().try_for_each(|(k, x)| {
            let at = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            match x {
                Value::Array(points) if k == "points" => points
                    .iter()
                    .enumerate()
                    .try_for_each(|(i, p)| only_points_are_lists(p, &format!("{at}[{i}]"))),
                _ => only_points_are_lists(x, &at),
            }
        }),
        _ => Ok(()),
    }
}

// ---- the keys of the objects whose keys depend on each other

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a loss model object")]
struct LossKeys {
    model: LossKind,
    #[serde(default, deserialize_with = "opt_pct")]
    pct: Option<f64>,
    #[serde(default, deserialize_with = "opt_pct")]
    p_pct: Option<f64>,
    #[serde(default, deserialize_with = "opt_pct")]
    r_pct: Option<f64>,
    #[serde(default, deserialize_with = "opt_pct")]
    h_loss_pct: Option<f64>,
    #[serde(default, deserialize_with = "opt_pct")]
    k_loss_pct: Option<f64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum LossKind {
    Random,
    Gemodel,
}

impl TryFrom<LossKeys> for LossModel {
    type Error = String;

    fn try_from(k: LossKeys) -> Result<LossModel, String> {
        let needs = |key: &str, v: Option<f64>| v.ok_or(format!("missing key \"{key}\""));
        match k.model {
            LossKind::Random => {
                let ge = [
                    ("p_pct", k.p_pct),
                    ("r_pct", k.r_pct),
                    ("h_loss_pct", k.h_loss_pct),
                    ("k_loss_pct", k.k_loss_pct),
                ];
                if let Some((key, _)) = ge.iter().find(|(_, v)| v.is_some()) {
                    return Err(format!(
                        "key \"{key}\" is not one of the random model's (model, pct)"
                    ));
                }
                Ok(LossModel::Random {
                    pct: needs("pct", k.pct)?,
                })
            }
            LossKind::Gemodel => {
                if k.pct.is_some() {
                    return Err("key \"pct\" is not one of the gemodel model's \
                         (model, p_pct, r_pct, h_loss_pct, k_loss_pct)"
                        .into());
                }
                Ok(LossModel::GilbertElliott {
                    p_pct: needs("p_pct", k.p_pct)?,
                    r_pct: needs("r_pct", k.r_pct)?,
                    h_loss_pct: k.h_loss_pct.unwrap_or(100.0),
                    k_loss_pct: k.k_loss_pct.unwrap_or(0.0),
                })
            }
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object with packets or bytes")]
struct LimitKeys {
    #[serde(default, deserialize_with = "opt_positive_int")]
    packets: Option<u64>,
    #[serde(default, deserialize_with = "opt_positive_int")]
    bytes: Option<u64>,
}

impl TryFrom<LimitKeys> for Limit {
    type Error = &'static str;

    fn try_from(k: LimitKeys) -> Result<Limit, &'static str> {
        match (k.packets, k.bytes) {
            (Some(n), None) => Ok(Limit::Packets(n)),
            (None, Some(n)) => Ok(Limit::Bytes(n)),
            _ => Err("give exactly one of \"packets\" or \"bytes\""),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a schedule object")]
struct ScheduleKeys {
    #[serde(rename = "loop", default, deserialize_with = "or_default")]
    looped: bool,
    #[serde(deserialize_with = "points")]
    points: Vec<SchedulePoint>,
}

impl TryFrom<ScheduleKeys> for ScheduleConfig {
    type Error = &'static str;

    fn try_from(k: ScheduleKeys) -> Result<ScheduleConfig, &'static str> {
        let period = k.points.last().map_or(0.0, |p| p.t_s);
        if k.looped && period <= 0.0 {
            return Err("a looping schedule needs its last t_s > 0 (the period)");
        }
        Ok(ScheduleConfig {
            looped: k.looped,
            points: k.points,
        })
    }
}

// ---- checks of single values, run as serde reads them

fn non_empty<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if s.is_empty() {
        return Err(D::Error::custom("must not be empty"));
    }
    Ok(s)
}

fn non_empty_path<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
    non_empty(d).map(PathBuf::from)
}

fn opt_non_empty_path<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PathBuf>, D::Error> {
    match Option::<String>::deserialize(d)? {
        Some(s) if s.is_empty() => Err(D::Error::custom("must not be empty (use null)")),
        s => Ok(s.map(PathBuf::from)),
    }
}

fn netns_name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = non_empty(d)?;
    if s.contains('/') {
        return Err(D::Error::custom("a namespace name, not a path"));
    }
    Ok(s)
}

fn dev_name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = non_empty(d)?;
    if s.len() >= libc::IFNAMSIZ {
        return Err(D::Error::custom(format!(
            "interface name longer than {} bytes",
            libc::IFNAMSIZ - 1
        )));
    }
    Ok(s)
}

/// `null` is the type's default, as an absent key is.
fn or_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

fn in_range(x: f64, lo: f64, hi: f64) -> Result<f64, String> {
    match (x >= lo, x <= hi) {
        (true, true) => Ok(x),
        _ if hi.is_infinite() => Err(format!("must be >= {lo} (got {x})")),
        _ => Err(format!("must be between {lo} and {hi} (got {x})")),
    }
}

fn opt_in_range<'de, D: Deserializer<'de>>(
    d: D,
    lo: f64,
    hi: f64,
) -> Result<Option<f64>, D::Error> {
    Option::<f64>::deserialize(d)?
        .map(|x| in_range(x, lo, hi).map_err(D::Error::custom))
        .transpose()
}

fn non_negative<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    in_range(f64::deserialize(d)?, 0.0, f64::INFINITY).map_err(D::Error::custom)
}

fn opt_non_negative<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    opt_in_range(d, 0.0, f64::INFINITY)
}

fn positive<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    match f64::deserialize(d)? {
        x if x.is_nan() || x <= 0.0 => Err(D::Error::custom(format!("must be > 0 (got {x})"))),
        x => Ok(x),
    }
}

fn probability<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(opt_in_range(d, 0.0, 1.0)?.unwrap_or(0.0))
}

fn opt_positive<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    match Option::<f64>::deserialize(d)? {
        Some(x) if x.is_nan() || x <= 0.0 => {
            Err(D::Error::custom(format!("must be > 0 (got {x})")))
        }
        x => Ok(x),
    }
}

fn positive_u32<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    match u32::deserialize(d)? {
        0 => Err(D::Error::custom("expected a whole number >= 1, got 0")),
        n => Ok(n),
    }
}

fn opt_positive_u32<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    match Option::<u32>::deserialize(d)? {
        Some(0) => Err(D::Error::custom("expected a whole number >= 1, got 0")),
        n => Ok(n),
    }
}

fn ms_or_zero<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(opt_non_negative(d)?.unwrap_or(0.0))
}

fn opt_pct<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    opt_in_range(d, 0.0, 100.0)
}

fn rate(x: f64) -> Result<f64, String> {
    if x > 0.0 {
        Ok(x)
    } else {
        Err(format!("must be > 0 (got {x}); use null for no rate limit"))
    }
}

fn opt_rate<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Option::<f64>::deserialize(d)?
        .map(|x| rate(x).map_err(D::Error::custom))
        .transpose()
}

/// Present: `null` is "no limit from here", a number the new rate. (An
/// absent key is `RateChange::Keep`, serde's default.)
fn rate_change<'de, D: Deserializer<'de>>(d: D) -> Result<RateChange, D::Error> {
    Ok(match opt_rate(d)? {
        None => RateChange::Unlimited,
        Some(x) => RateChange::Mbit(x),
    })
}

fn opt_positive_int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    match Option::<u64>::deserialize(d)? {
        Some(0) => Err(D::Error::custom("expected a whole number >= 1, got 0")),
        n => Ok(n),
    }
}

fn points<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<SchedulePoint>, D::Error> {
    let points = Vec::<SchedulePoint>::deserialize(d)?;
    if points.is_empty() {
        return Err(D::Error::custom("needs at least one point"));
    }
    for (i, w) in points.windows(2).enumerate() {
        if w[1].t_s < w[0].t_s {
            return Err(D::Error::custom(format!(
                "[{}].t_s: times must not decrease ({} after {})",
                i + 1,
                w[1].t_s,
                w[0].t_s
            )));
        }
    }
    Ok(points)
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
        assert!(e.0.starts_with("forward.delay: unknown field"), "{e}");
        assert!(e.0.contains("`delay_ms`"), "says what is allowed: {e}");
        let e = with(|v| v["bogus"] = 3.into()).unwrap_err();
        assert!(e.0.starts_with("bogus: unknown field"), "{e}");
        let e = with(|v| v["return"]["schedule"]["points"][1]["rate"] = 3.into()).unwrap_err();
        assert!(
            e.0.starts_with("return.schedule.points[1].rate: unknown field"),
            "{e}"
        );
        let e = with(|v| v["a"]["ns"] = "x".into()).unwrap_err();
        assert!(e.0.starts_with("a.ns: unknown field"), "{e}");
        let e = with(|v| v["forward"]["limit"]["frames"] = 3.into()).unwrap_err();
        assert!(
            e.0.starts_with("forward.limit.frames: unknown field"),
            "{e}"
        );
        // a key of the other loss model
        let e = with(|v| v["return"]["loss"]["pct"] = 3.into()).unwrap_err();
        assert!(
            e.0.starts_with("return.loss: key \"pct\" is not one of the gemodel"),
            "{e}"
        );
        let e = with(|v| v["forward"]["loss"]["p_pct"] = 3.into()).unwrap_err();
        assert!(
            e.0.starts_with("forward.loss: key \"p_pct\" is not one of the random"),
            "{e}"
        );
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
        // serde alone would read an object from a list of its values
        let e = with(|v| v["forward"] = serde_json::json!([])).unwrap_err();
        assert!(e.0.starts_with("forward: a list is not expected"), "{e}");
        let e = with(|v| v["return"]["schedule"]["points"][1] = serde_json::json!([30, 140]))
            .unwrap_err();
        assert!(e.0.starts_with("return.schedule.points[1]: a list"), "{e}");
        assert!(parse("[]").unwrap_err().0.starts_with("top level: a list"));
    }

    #[test]
    fn the_access_model_parses_and_is_checked() {
        assert_eq!(parse(&base().to_string()).unwrap().forward.access, None);
        let c = with(|v| {
            v["return"]["access"] = serde_json::json!({"frame_ms": 26.5, "header_bytes": 4,
                "pad_to_bytes": 60, "dama": {"cra_mbit": 1, "request_grant_ms": 500, "idle_release_ms": 600}})
        })
        .unwrap();
        assert_eq!(
            c.ret.access,
            Some(AccessConfig {
                frame_ms: Some(26.5),
                header_bytes: 4,
                pad_to_bytes: Some(60),
                dama: Some(DamaConfig {
                    cra_mbit: 1.0,
                    request_grant_ms: 500.0,
                    idle_release_ms: 600.0
                }),
                frame_loss: None,
            })
        );
        let c = with(|v| v["forward"]["access"] = serde_json::json!({"frame_ms": 10})).unwrap();
        assert_eq!(c.forward.access.unwrap().header_bytes, 0);
        let e = with(|v| v["forward"]["access"] = serde_json::json!({"frame_ms": 0})).unwrap_err();
        assert!(
            e.0.starts_with("forward.access.frame_ms: must be > 0"),
            "{e}"
        );
        let e = with(|v| v["forward"]["access"] = serde_json::json!({"frame": 10})).unwrap_err();
        assert!(
            e.0.starts_with("forward.access.frame: unknown field"),
            "{e}"
        );
        let e =
            with(|v| v["forward"]["access"] = serde_json::json!({"pad_to_bytes": 0})).unwrap_err();
        assert!(e.0.starts_with("forward.access.pad_to_bytes"), "{e}");
        let e = with(|v| {
            v["return"]["access"] = serde_json::json!({"dama": {"cra_mbit": -1, "request_grant_ms": 5, "idle_release_ms": 5}})
        })
        .unwrap_err();
        assert!(e.0.starts_with("return.access.dama.cra_mbit"), "{e}");
        let e = with(|v| v["return"]["access"] = serde_json::json!({"dama": {"cra_mbit": 1}}))
            .unwrap_err();
        assert!(e.0.contains("request_grant_ms"), "{e}");
        let c = with(|v| {
            v["forward"]["access"] = serde_json::json!({"frame_loss": {"frame_bytes": 5000}})
        })
        .unwrap();
        assert_eq!(
            c.forward.access.unwrap().frame_loss,
            Some(FrameLossConfig {
                frame_bytes: 5000,
                carriage: Carriage::Padded { datagrams: 1 },
                hold_frames: None,
            })
        );
        let c = with(|v| {
            v["forward"]["access"] =
                serde_json::json!({"frame_loss": {"frame_bytes": 6000, "datagram_bytes": 1472}})
        })
        .unwrap();
        assert_eq!(
            c.forward.access.unwrap().frame_loss.unwrap().carriage,
            Carriage::Unpadded {
                datagram_bytes: 1472
            }
        );
        let e = with(|v| {
            v["forward"]["access"] = serde_json::json!({"frame_loss": {"frame_bytes": 6000, "datagrams": 2, "datagram_bytes": 1472}})
        })
        .unwrap_err();
        assert!(e.0.contains("datagrams or datagram_bytes"), "{e}");
        let e = with(|v| {
            v["forward"]["access"] =
                serde_json::json!({"frame_loss": {"frame_bytes": 5000, "datagrams": 0}})
        })
        .unwrap_err();
        assert!(
            e.0.starts_with("forward.access.frame_loss.datagrams"),
            "{e}"
        );
        let e =
            with(|v| v["forward"]["access"] = serde_json::json!({"frame_loss": {}})).unwrap_err();
        assert!(e.0.contains("frame_bytes"), "{e}");
    }

    #[test]
    fn the_slot_process_parses_and_bad_values_are_named() {
        let slots = serde_json::json!({"period_s": 15, "boundary_at_s": 12, "delay_min_ms": 10,
            "delay_max_ms": 25, "spike_ms": 15, "spike_s": 0.3, "loss_p": 0.5, "loss_s": 0.1});
        let c = with(|v| v["forward"]["slots"] = slots.clone()).unwrap();
        let s = c.forward.slots.unwrap();
        assert_eq!(
            s.phase,
            SlotPhase::WallClock {
                boundary_at_s: 12.0
            }
        );
        assert_eq!(
            (s.delay_min_ms, s.delay_max_ms, s.loss_p),
            (10.0, 25.0, 0.5)
        );
        let bad = |key: &str, val: Value| {
            let mut sl = slots.clone();
            sl[key] = val;
            with(|v| v["forward"]["slots"] = sl).unwrap_err().0
        };
        let e = bad("period_s", 0.into());
        assert!(e.starts_with("forward.slots.period_s: must be > 0"), "{e}");
        let e = bad("delay_min_ms", (-1).into());
        assert!(
            e.starts_with("forward.slots.delay_min_ms: must be >= 0"),
            "{e}"
        );
        let e = bad("loss_p", 1.5.into());
        assert!(
            e.starts_with("forward.slots.loss_p: must be between 0 and 1"),
            "{e}"
        );
        let e = bad("loss_p", (-0.1).into());
        assert!(e.starts_with("forward.slots.loss_p"), "{e}");
        let e = bad("delay_max_ms", 5.into());
        assert!(e.starts_with("forward.slots: delay_max_ms (5)"), "{e}");
        let e = bad("phase_s", 3.into());
        assert!(e.contains("phase_s or boundary_at_s"), "{e}");
        let e = bad("period", 3.into());
        assert!(e.starts_with("forward.slots.period: unknown field"), "{e}");
    }

    #[test]
    fn slot_outages_parse_and_bad_values_are_named() {
        let slots = serde_json::json!({"period_s": 15, "phase_s": 0, "delay_min_ms": 10,
            "delay_max_ms": 25, "outages": {"mean_gap_s": 30, "min_s": 0.2, "max_s": 2}});
        let c = with(|v| v["return"]["slots"] = slots.clone()).unwrap();
        assert_eq!(
            c.ret.slots.unwrap().outages,
            Some(OutagesConfig {
                mean_gap_s: 30.0,
                min_s: 0.2,
                max_s: 2.0
            })
        );
        let mut none = slots.clone();
        none["outages"] = Value::Null;
        assert_eq!(
            with(|v| v["return"]["slots"] = none)
                .unwrap()
                .ret
                .slots
                .unwrap()
                .outages,
            None
        );
        let bad = |key: &str, val: Value| {
            let mut sl = slots.clone();
            sl["outages"][key] = val;
            with(|v| v["return"]["slots"] = sl).unwrap_err().0
        };
        let e = bad("mean_gap_s", 0.into());
        assert!(
            e.starts_with("return.slots.outages.mean_gap_s: must be > 0"),
            "{e}"
        );
        let e = bad("min_s", (-0.1).into());
        assert!(
            e.starts_with("return.slots.outages.min_s: must be >= 0"),
            "{e}"
        );
        let e = bad("max_s", 0.into());
        assert!(
            e.starts_with("return.slots.outages.max_s: must be > 0"),
            "{e}"
        );
        let e = bad("max_s", 0.1.into());
        assert!(
            e.starts_with("return.slots.outages: max_s (0.1) is below min_s (0.2)"),
            "{e}"
        );
        let e = bad("every", 1.into());
        assert!(
            e.starts_with("return.slots.outages.every: unknown field"),
            "{e}"
        );
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
