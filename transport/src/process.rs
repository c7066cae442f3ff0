//! What every server binary of the workspace does around its work: the
//! tokio runtime, the `ready` line, SIGTERM/SIGINT, exit codes.

use std::future::Future;
use std::io::Write;

use tokio::signal::unix::{signal, Signal, SignalKind};

/// The work was done (or the server was told to stop).
pub const EXIT_OK: i32 = 0;
/// The work ran and failed (e.g. `satbulk get`'s download).
pub const EXIT_FAILED: i32 = 1;
/// A usage error, or an error that kept the work from starting.
pub const EXIT_USAGE: i32 = 2;

/// A multi-thread runtime: `threads` workers, or tokio's default (one per
/// CPU).
pub fn runtime(threads: Option<usize>) -> Result<tokio::runtime::Runtime, String> {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = threads {
        b.worker_threads(n);
    }
    b.enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))
}

/// Runs `work` to completion on a fresh runtime (see `runtime`).
pub fn block_on<T>(
    threads: Option<usize>,
    work: impl Future<Output = Result<T, String>>,
) -> Result<T, String> {
    runtime(threads)?.block_on(work)
}

/// Runs `work` to completion on exactly `threads` threads: one is this
/// thread alone (no worker pool at all, not a pool of one beside it), more
/// a pool of that many workers.
pub fn block_on_threads<T>(
    threads: usize,
    work: impl Future<Output = Result<T, String>>,
) -> Result<T, String> {
    if threads != 1 {
        return block_on(Some(threads), work);
    }
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?
        .block_on(work)
}

/// CPU time this process has used so far (user + system, every thread),
/// in ms: a record says whether a run was CPU-bound.
pub fn cpu_ms() -> Option<f64> {
    use nix::sys::resource::{getrusage, UsageWho};
    let u = getrusage(UsageWho::RUSAGE_SELF).ok()?;
    let ms = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 * 1e3 + t.tv_usec() as f64 / 1e3;
    Some(ms(u.user_time()) + ms(u.system_time()))
}

/// Tells whoever started us (the harness, a test) that we listen: exactly
/// `ready` and a newline on stdout, flushed at once.
pub fn say_ready() {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(b"ready\n");
    let _ = out.flush();
}

/// SIGTERM and SIGINT, caught from `listen` on: install it before `ready`,
/// so a signal that follows at once stops us cleanly rather than kills us.
pub struct Shutdown {
    term: Signal,
    int: Signal,
}

impl Shutdown {
    /// Needs a running tokio runtime.
    pub fn listen() -> Result<Shutdown, String> {
        let sig = |k: SignalKind| signal(k).map_err(|e| format!("signal handler: {e}"));
        Ok(Shutdown {
            term: sig(SignalKind::terminate())?,
            int: sig(SignalKind::interrupt())?,
        })
    }

    /// Waits for the first of the two.
    pub async fn requested(mut self) {
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.int.recv() => {}
        }
    }
}

/// The exit code for `result`, printing an error as it is: one line on
/// stderr.
pub fn exit_code(result: Result<i32, String>) -> i32 {
    match result {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("{msg}");
            EXIT_USAGE
        }
    }
}

/// Flushes stdout and exits with `code`, without waiting for the runtime's
/// blocking threads (a read that never ends must not keep us alive).
pub fn exit(code: i32) -> ! {
    let _ = std::io::stdout().flush();
    std::process::exit(code)
}

/// `exit(exit_code(result))`.
pub fn finish(result: Result<i32, String>) -> ! {
    exit(exit_code(result))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_exit_2_and_codes_pass_through() {
        assert_eq!(exit_code(Ok(EXIT_OK)), 0);
        assert_eq!(exit_code(Ok(EXIT_FAILED)), 1);
        assert_eq!(exit_code(Err("x".into())), 2);
    }

    #[test]
    fn runs_work_on_the_threads_asked_for() {
        let n = block_on(Some(2), async {
            Ok::<_, String>(tokio::runtime::Handle::current().metrics().num_workers())
        });
        assert_eq!(n, Ok(2));
        assert_eq!(
            block_on(None, async { Err::<(), _>("no".to_string()) }),
            Err("no".into())
        );
    }

    #[test]
    fn one_thread_is_this_thread_alone() {
        use tokio::runtime::{Handle, RuntimeFlavor};
        let flavor = |threads| {
            block_on_threads(threads, async {
                let h = Handle::current();
                Ok::<_, String>((h.runtime_flavor(), h.metrics().num_workers()))
            })
        };
        assert_eq!(flavor(1), Ok((RuntimeFlavor::CurrentThread, 1)));
        assert_eq!(flavor(3), Ok((RuntimeFlavor::MultiThread, 3)));
    }

    #[test]
    fn shutdown_waits_for_a_signal() {
        block_on(Some(1), async {
            let s = Shutdown::listen()?;
            // no signal: still waiting after a while
            let waited =
                tokio::time::timeout(std::time::Duration::from_millis(20), s.requested()).await;
            assert!(waited.is_err());
            Ok::<_, String>(())
        })
        .unwrap();
    }
}
