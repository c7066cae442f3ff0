//! What the binaries' command lines share (clap): the QUIC transport flags,
//! and how `--help`, `--version` and usage errors end the process. A usage
//! error is one line on stderr, `FLAG: what is wrong`, and exit code 2.

use std::ffi::OsString;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, Parser};

use crate::process::{self, EXIT_OK, EXIT_USAGE};
use crate::quic::QuicOptions;
use crate::quic_keys::{one_of, Key, Kind};

/// The QUIC transport flags, `--quic-KEY` for each key of
/// `quic-options.json` (`--bdp-bytes` and `--idle-timeout-ms` without the
/// prefix too); flatten it into a command. Each value is checked as it is
/// read, by `QuicOptions::set`.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq)]
#[command(next_help_heading = "QUIC transport")]
pub struct QuicArgs {
    #[arg(long = "quic-cc", value_name = value_name(Key::Cc), help = help(Key::Cc),
          value_parser = checked(Key::Cc))]
    pub cc: Option<String>,
    #[arg(long = "quic-initial-window", value_name = value_name(Key::InitialWindow),
          help = help(Key::InitialWindow), value_parser = checked(Key::InitialWindow))]
    pub initial_window: Option<String>,
    #[arg(long = "quic-initial-mtu", value_name = value_name(Key::InitialMtu),
          help = help(Key::InitialMtu), value_parser = checked(Key::InitialMtu))]
    pub initial_mtu: Option<String>,
    #[arg(long = "quic-ack-frequency", help = help(Key::AckFrequency))]
    pub ack_frequency: bool,
    #[arg(long = "quic-ack-eliciting-threshold", value_name = value_name(Key::AckElicitingThreshold),
          help = help(Key::AckElicitingThreshold), value_parser = checked(Key::AckElicitingThreshold))]
    pub ack_eliciting_threshold: Option<String>,
    #[arg(long = "quic-max-ack-delay-ms", value_name = value_name(Key::MaxAckDelayMs),
          help = help(Key::MaxAckDelayMs), value_parser = checked(Key::MaxAckDelayMs))]
    pub max_ack_delay_ms: Option<String>,
    // the harness's (and the origin's first) spelling, without the prefix
    #[arg(long = "bdp-bytes", visible_alias = "quic-bdp-bytes", value_name = value_name(Key::BdpBytes),
          help = help(Key::BdpBytes), value_parser = checked(Key::BdpBytes))]
    pub bdp_bytes: Option<String>,
    #[arg(long = "idle-timeout-ms", visible_alias = "quic-idle-timeout-ms",
          value_name = value_name(Key::IdleTimeoutMs), help = help(Key::IdleTimeoutMs),
          value_parser = checked(Key::IdleTimeoutMs))]
    pub idle_timeout_ms: Option<String>,
    #[arg(long = "quic-careful-resume", value_name = value_name(Key::CarefulResume),
          help = help(Key::CarefulResume), value_parser = checked(Key::CarefulResume))]
    pub careful_resume: Option<String>,
}

fn value_name(key: Key) -> &'static str {
    key.spec().value_name.as_deref().unwrap_or("VALUE")
}

/// The table's help line; a choice lists its values.
fn help(key: Key) -> String {
    let s = key.spec();
    match s.kind {
        Kind::Choice => format!("{}: {}", s.help, one_of(&s.values)),
        _ => s.help.clone(),
    }
}

/// A clap value parser that lets through what `QuicOptions::set` takes.
fn checked(key: Key) -> impl Fn(&str) -> Result<String, String> + Clone + Send + Sync + 'static {
    move |v: &str| {
        QuicOptions::default()
            .set(key, Some(v))
            .map(|()| v.to_string())
    }
}

impl QuicArgs {
    /// The flags given, as (key, value), in the table's order.
    fn given(&self) -> Vec<(Key, Option<&str>)> {
        let text = [
            (Key::Cc, &self.cc),
            (Key::InitialWindow, &self.initial_window),
            (Key::InitialMtu, &self.initial_mtu),
            (Key::AckElicitingThreshold, &self.ack_eliciting_threshold),
            (Key::MaxAckDelayMs, &self.max_ack_delay_ms),
            (Key::BdpBytes, &self.bdp_bytes),
            (Key::IdleTimeoutMs, &self.idle_timeout_ms),
            (Key::CarefulResume, &self.careful_resume),
        ];
        let mut out: Vec<(Key, Option<&str>)> = text
            .into_iter()
            .filter_map(|(k, v)| v.as_deref().map(|v| (k, Some(v))))
            .collect();
        if self.ack_frequency {
            out.push((Key::AckFrequency, None));
        }
        out
    }

    /// The default options with these flags on top.
    pub fn options(&self) -> Result<QuicOptions, String> {
        let mut o = QuicOptions::default();
        for (key, value) in self.given() {
            o.set(key, value)
                .map_err(|e| format!("--quic-{}: {e}", key.name()))?;
        }
        Ok(o)
    }
}

/// What parsing ends with when it does not give a command to run.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    /// `--help` or `--version`: this text on stdout, exit 0.
    Print(String),
    /// A usage error: this line on stderr, exit 2.
    Usage(String),
}

/// Parses `args` (the program name first) into `P`.
pub fn parse_from<P, I, T>(args: I) -> Result<P, Stop>
where
    P: Parser,
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    P::try_parse_from(args).map_err(|e| match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => Stop::Print(e.render().to_string()),
        _ => Stop::Usage(one_line(&e, &P::command())),
    })
}

/// Parses the process's arguments into `P`, or prints and exits.
pub fn parse<P: Parser>() -> P {
    match parse_from(std::env::args_os()) {
        Ok(p) => p,
        Err(Stop::Print(text)) => {
            print!("{text}");
            process::exit(EXIT_OK)
        }
        Err(Stop::Usage(line)) => {
            eprintln!("{line}");
            process::exit(EXIT_USAGE)
        }
    }
}

/// `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [init @ .., last] if !init.is_empty() => format!("{} and {last}", init.join(", ")),
        _ => items.join(""),
    }
}

/// `--quic-cc <CC>` → `--quic-cc`.
fn flag_of(arg: &str) -> &str {
    arg.split([' ', '=']).next().unwrap_or(arg)
}

/// A clap error as one line that names the flag first, e.g.
/// `--quic-cc: expected cubic, newreno, bbr or sat, got 'vegas'`.
/// `cmd` (what was parsed) names the program and its subcommands when the
/// error does not.
pub fn one_line(e: &clap::Error, cmd: &clap::Command) -> String {
    let strings = |k: ContextKind| -> Vec<String> {
        match e.get(k) {
            Some(ContextValue::String(s)) => vec![s.clone()],
            Some(ContextValue::Strings(v)) => v.clone(),
            _ => Vec::new(),
        }
    };
    let first = |k: ContextKind| strings(k).into_iter().next();
    let arg = first(ContextKind::InvalidArg);
    let flag = arg.as_deref().map(flag_of);
    // the command's shape is wrong: say where to look
    let program = usage_name(e).unwrap_or_else(|| cmd.get_name().to_string());
    let see = format!("; see {program} --help");
    let line = match (e.kind(), flag) {
        (ErrorKind::ValueValidation, Some(f)) => {
            std::error::Error::source(e).map(|why| format!("{f}: {why}"))
        }
        (ErrorKind::InvalidValue, Some(f)) => {
            let value = first(ContextKind::InvalidValue).unwrap_or_default();
            let valid = strings(ContextKind::ValidValue);
            Some(if value.is_empty() {
                format!("{f}: needs a value")
            } else if valid.is_empty() {
                format!("{f}: invalid value '{value}'")
            } else {
                format!("{f}: expected {}, got '{value}'", one_of(&valid))
            })
        }
        (ErrorKind::MissingRequiredArgument, Some(_)) => {
            let flags: Vec<String> = strings(ContextKind::InvalidArg)
                .iter()
                .map(|a| flag_of(a).to_string())
                .collect();
            Some(match flags.as_slice() {
                [first, more @ ..] if !more.is_empty() => {
                    format!("{first} is required (so are {}){see}", and_list(more))
                }
                _ => format!("{} is required{see}", flags.join("")),
            })
        }
        (ErrorKind::UnknownArgument, Some(f)) => Some(format!("unknown argument '{f}'{see}")),
        (ErrorKind::ArgumentConflict, Some(f)) => Some(match first(ContextKind::PriorArg) {
            Some(other) => format!("{f}: not with {}", flag_of(&other)),
            None => format!("{f}: not with the arguments before it"),
        }),
        (ErrorKind::InvalidSubcommand, _) => {
            first(ContextKind::InvalidSubcommand).map(|s| format!("unknown subcommand '{s}'{see}"))
        }
        (ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand, _) => {
            let valid: Vec<String> = cmd
                .get_subcommands()
                .filter(|c| !c.is_hide_set())
                .map(|c| c.get_name().to_string())
                .collect();
            Some(match valid.is_empty() {
                true => format!("missing subcommand{see}"),
                false => format!("missing subcommand ({}){see}", one_of(&valid)),
            })
        }
        _ => None,
    };
    line.unwrap_or_else(|| {
        // clap's own first line, without its `error: `
        let text = e.render().to_string();
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        format!("{}{see}", first.trim_start_matches("error: "))
    })
}

/// The command the error came from, as its usage line names it (`origin
/// serve`).
fn usage_name(e: &clap::Error) -> Option<String> {
    let Some(ContextValue::StyledStr(s)) = e.get(ContextKind::Usage) else {
        return None;
    };
    let s = s.to_string();
    let words: Vec<&str> = s
        .trim_start_matches("Usage:")
        .split_whitespace()
        .take_while(|w| !w.starts_with(['[', '<', '-']))
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quic::Cc;
    use crate::quic_keys;

    #[derive(Parser, Debug)]
    #[command(name = "tool", version)]
    struct Tool {
        #[arg(long, required = true)]
        addr: String,
        #[arg(long, conflicts_with = "addr")]
        other: Option<String>,
        #[arg(long, value_parser = ["a", "b"])]
        pick: Option<String>,
        #[command(flatten)]
        quic: QuicArgs,
    }

    fn parse(s: &str) -> Result<Tool, Stop> {
        parse_from(std::iter::once("tool").chain(s.split_whitespace()))
    }

    fn usage(s: &str) -> String {
        match parse(s) {
            Err(Stop::Usage(l)) => l,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_key_of_the_table_has_its_flag() {
        let cmd = <Tool as clap::CommandFactory>::command();
        for spec in quic_keys::specs() {
            let flag = format!("quic-{}", spec.name);
            let arg = cmd
                .get_arguments()
                .find(|a| {
                    a.get_long() == Some(flag.as_str())
                        || a.get_all_aliases()
                            .is_some_and(|al| al.contains(&flag.as_str()))
                })
                .unwrap_or_else(|| panic!("no --{flag}"));
            assert_eq!(
                arg.get_action().takes_values(),
                spec.kind != Kind::Flag,
                "{flag}"
            );
            assert!(
                arg.get_help().unwrap().to_string().starts_with(&spec.help),
                "{flag}"
            );
        }
        let quic_flags = cmd
            .get_arguments()
            .filter(|a| a.get_help_heading() == Some("QUIC transport"))
            .count();
        assert_eq!(quic_flags, quic_keys::specs().len());
    }

    #[test]
    fn quic_flags_make_options() {
        let t = parse(
            "--addr x --quic-cc bbr --quic-initial-window=32 --quic-initial-mtu 1400 \
             --quic-ack-eliciting-threshold 9 --quic-max-ack-delay-ms 40 --bdp-bytes 1000000 \
             --quic-idle-timeout-ms 5000 --quic-careful-resume on",
        )
        .unwrap();
        let q = t.quic.options().unwrap();
        assert!(q.careful_resume);
        assert_eq!(
            (q.cc, q.initial_window_packets, q.initial_mtu),
            (Cc::Bbr, 32, 1400)
        );
        assert!(q.ack_frequency);
        assert_eq!(
            (q.ack_eliciting_threshold, q.max_ack_delay_ms),
            (Some(9), Some(40))
        );
        assert_eq!((q.bdp_bytes, q.idle_timeout_ms), (1_000_000, 5000));
        let t =
            parse("--addr x --quic-ack-frequency --quic-bdp-bytes 7 --idle-timeout-ms 0").unwrap();
        let q = t.quic.options().unwrap();
        assert!(q.ack_frequency);
        assert_eq!((q.bdp_bytes, q.idle_timeout_ms), (7, 0));
        assert_eq!(
            parse("--addr x").unwrap().quic.options().unwrap(),
            QuicOptions::default()
        );
    }

    #[test]
    fn errors_are_one_line_naming_the_flag() {
        let see = "; see tool --help";
        assert_eq!(
            usage("--addr x --quic-cc vegas"),
            "--quic-cc: expected cubic, newreno, bbr or sat, got 'vegas'"
        );
        assert_eq!(
            usage("--addr x --quic-initial-window 1"),
            "--quic-initial-window: at least 2 packets"
        );
        assert_eq!(usage("--addr x --bdp-bytes"), "--bdp-bytes: needs a value");
        assert_eq!(
            usage("--addr x --pick c"),
            "--pick: expected a or b, got 'c'"
        );
        assert_eq!(usage("--quic-cc bbr"), format!("--addr is required{see}"));
        assert_eq!(
            usage("--addr x --frob"),
            format!("unknown argument '--frob'{see}")
        );
        let e = usage("--addr x --other y");
        assert!(
            e == "--addr: not with --other" || e == "--other: not with --addr",
            "{e}"
        );
        assert!(
            usage("--addr x extra").contains("'extra'"),
            "{}",
            usage("--addr x extra")
        );
        for s in ["--quic-cc vegas", "--frob", "", "--addr"] {
            assert_eq!(usage(s).lines().count(), 1, "{s}");
        }
        // a value checked before the required flags are missed
        assert!(usage("--quic-cc vegas").starts_with("--quic-cc: "));
    }

    #[derive(Parser, Debug)]
    #[command(name = "multi")]
    struct Multi {
        #[command(subcommand)]
        cmd: Sub,
    }

    #[derive(clap::Subcommand, Debug)]
    enum Sub {
        Serve,
        Get {
            #[arg(long, required = true)]
            a: Option<String>,
            #[arg(long, required = true)]
            b: Option<String>,
            #[arg(long, required = true)]
            c: Option<String>,
        },
    }

    #[test]
    fn subcommand_errors_say_which_there_are() {
        let e = |args: &[&str]| match parse_from::<Multi, _, _>(args) {
            Err(Stop::Usage(l)) => l,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            e(&["multi"]),
            "missing subcommand (serve or get); see multi --help"
        );
        assert_eq!(
            e(&["multi", "frob"]),
            "unknown subcommand 'frob'; see multi --help"
        );
        assert_eq!(
            e(&["multi", "get", "--x"]),
            "unknown argument '--x'; see multi get --help"
        );
    }

    #[test]
    fn help_and_version_are_printed() {
        let Err(Stop::Print(help)) = parse("--help") else {
            panic!()
        };
        assert!(help.contains("--quic-initial-window <PACKETS>"), "{help}");
        assert!(help.contains("bdp-bytes"), "{help}");
        assert!(matches!(parse("--version"), Err(Stop::Print(v)) if v.starts_with("tool ")));
    }
}
