//! tcp-pep: see `tcp-pep --help` and proxy/README.md.

use std::io::Write;

use tcp_pep::{cli, server};

fn main() {
    let argv: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let code = match cli::parse(&argv) {
        Err(msg) => {
            eprintln!("tcp-pep: {msg}");
            2
        }
        Ok(cli::Command::Help) => {
            print!("{}", cli::USAGE);
            0
        }
        Ok(cli::Command::Version) => {
            println!("tcp-pep {}", env!("CARGO_PKG_VERSION"));
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
