//! tcp-pep: see `tcp-pep --help` and proxy/README.md.

use std::io::Write;

use tcp_pep::{cli, server};

fn main() {
    let code = match cli::parse(std::env::args_os()) {
        Err(msg) => {
            eprintln!("tcp-pep: {msg}");
            2
        }
        Ok(cli::Command::Print(text)) => {
            print!("{text}");
            0
        }
        Ok(cli::Command::Run(o)) => {
            let rt = if o.threads == 1 {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
            } else {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(o.threads)
                    .enable_all()
                    .build()
            };
            match rt
                .map_err(|e| format!("tokio runtime: {e}"))
                .and_then(|rt| rt.block_on(server::run(*o)))
            {
                Ok(()) => 0,
                Err(msg) => {
                    eprintln!("tcp-pep: {msg}");
                    2
                }
            }
        }
    };
    let _ = std::io::stdout().flush();
    // Open connections are not waited for: the kernel closes their sockets.
    std::process::exit(code);
}
