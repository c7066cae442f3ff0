use std::sync::Arc;

use satbench_quic_pep::cli::{Cli, Config};
use satbench_quic_pep::log::Log;
use satbench_quic_pep::masque::client::Client;
use satbench_quic_pep::proxy::Proxy;
use satbench_quic_pep::stats::Stats;
use satbench_transport::cli;
use satbench_transport::process::{self, say_ready, Shutdown};

fn main() {
    let result = cli::parse::<Cli>().config().and_then(|cfg| {
        let threads = cfg.threads.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(4)
        });
        process::block_on(Some(threads), serve(cfg))
    });
    process::finish(result.map(|()| process::EXIT_OK))
}

/// What runs: the QUIC PEP, or Proxy-ST as a MASQUE client (`--masque-via`).
enum Running {
    Pep(Arc<Proxy>),
    Masque(Arc<Client>),
}

impl Running {
    fn stats(&self) -> &Stats {
        match self {
            Running::Pep(p) => &p.stats,
            Running::Masque(c) => &c.stats,
        }
    }

    fn mode(&self) -> &'static str {
        match self {
            Running::Pep(p) => p.mode_name(),
            Running::Masque(_) => "masque-client",
        }
    }

    async fn run(&self, shutdown: impl std::future::Future<Output = ()>) {
        match self {
            Running::Pep(p) => p.clone().run(shutdown).await,
            Running::Masque(c) => c.clone().run(shutdown).await,
        }
    }
}

async fn serve(cfg: Config) -> Result<(), String> {
    use tokio::signal::unix::{signal, SignalKind};
    let log = Arc::new(match &cfg.log {
        Some(p) => Log::file(&cfg.label, p).map_err(|e| format!("--log {}: {e}", p.display()))?,
        None => Log::stderr(&cfg.label),
    });
    let (stats_path, label) = (cfg.stats.clone(), cfg.label.clone());
    let running = Arc::new(match cfg.masque_via.clone() {
        Some(via) => Running::Masque(Client::bind(&cfg, via, log.clone())?),
        None => Running::Pep(Proxy::bind(cfg, log.clone())?),
    });
    let write_stats = {
        let (running, log) = (running.clone(), log.clone());
        move || {
            if let Some(p) = &stats_path {
                if let Err(e) = running.stats().write(p, &label, running.mode()) {
                    log.line(&format!("--stats {}: {e}", p.display()));
                }
            }
        }
    };
    // Handlers before `ready`: a signal that comes right after must not kill us.
    let shutdown = Shutdown::listen()?;
    let mut usr1 =
        signal(SignalKind::user_defined1()).map_err(|e| format!("signal handler: {e}"))?;
    write_stats();
    say_ready();
    let on_usr1 = write_stats.clone();
    let stats_task = tokio::spawn(async move {
        while usr1.recv().await.is_some() {
            on_usr1();
        }
    });
    running.run(shutdown.requested()).await;
    stats_task.abort();
    write_stats();
    log.line("stopped");
    Ok(())
}
