use std::io::Write;
use std::sync::Arc;

use satbench_quic_pep::cli::{self, Command, Config};
use satbench_quic_pep::log::Log;
use satbench_quic_pep::proxy::Proxy;

fn main() {
    let argv: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let code = match cli::parse(&argv) {
        Err(msg) => {
            eprintln!("{msg}");
            2
        }
        Ok(Command::Help) => {
            print!("{}", cli::USAGE);
            0
        }
        Ok(Command::Version) => {
            println!("quic-pep {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Ok(Command::Run(cfg)) => match run(*cfg) {
            Ok(()) => 0,
            Err(msg) => {
                eprintln!("{msg}");
                2
            }
        },
    };
    let _ = std::io::stdout().flush();
    // exit without waiting for the runtime's blocking threads
    std::process::exit(code);
}

fn run(cfg: Config) -> Result<(), String> {
    let threads = cfg.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(4)
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    runtime.block_on(serve(cfg))
}

async fn serve(cfg: Config) -> Result<(), String> {
    use tokio::signal::unix::{signal, SignalKind};
    let log = Arc::new(match &cfg.log {
        Some(p) => Log::file(&cfg.label, p).map_err(|e| format!("--log {}: {e}", p.display()))?,
        None => Log::stderr(&cfg.label),
    });
    let stats_path = cfg.stats.clone();
    let proxy = Proxy::bind(cfg, log.clone())?;
    let write_stats = {
        let proxy = proxy.clone();
        move || {
            if let Some(p) = &stats_path {
                if let Err(e) = proxy.stats.write(p, &proxy.cfg.label, proxy.mode_name()) {
                    proxy.log.line(&format!("--stats {}: {e}", p.display()));
                }
            }
        }
    };
    // Handlers before `ready`: a signal that comes right after must not kill us.
    let sig = |k: SignalKind| signal(k).map_err(|e| format!("signal handler: {e}"));
    let (mut term, mut int, mut usr1) = (
        sig(SignalKind::terminate())?,
        sig(SignalKind::interrupt())?,
        sig(SignalKind::user_defined1())?,
    );
    write_stats();
    {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(b"ready\n");
        let _ = out.flush();
    }
    let on_usr1 = write_stats.clone();
    let stats_task = tokio::spawn(async move {
        while usr1.recv().await.is_some() {
            on_usr1();
        }
    });
    let shutdown = async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    };
    proxy.clone().run(shutdown).await;
    stats_task.abort();
    write_stats();
    log.line("stopped");
    Ok(())
}
