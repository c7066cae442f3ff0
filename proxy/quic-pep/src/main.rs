use std::sync::Arc;

use satbench_quic_pep::cli::{Cli, Config};
use satbench_quic_pep::log::Log;
use satbench_quic_pep::proxy::Proxy;
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
    proxy.clone().run(shutdown.requested()).await;
    stats_task.abort();
    write_stats();
    log.line("stopped");
    Ok(())
}
