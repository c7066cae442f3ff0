//! tcp-pep: see `tcp-pep --help` and proxy/README.md.

use satbench_transport::process::{self, EXIT_OK, EXIT_USAGE};
use tcp_pep::{cli, server};

fn main() {
    let code = match cli::parse(std::env::args_os()) {
        Err(msg) => {
            eprintln!("tcp-pep: {msg}");
            EXIT_USAGE
        }
        Ok(cli::Command::Print(text)) => {
            print!("{text}");
            EXIT_OK
        }
        Ok(cli::Command::Run(o)) => {
            // One thread means no worker pool at all, not a pool of one.
            let rt = if o.threads == 1 {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| format!("tokio runtime: {e}"))
            } else {
                process::runtime(Some(o.threads))
            };
            match rt.and_then(|rt| rt.block_on(server::run(*o))) {
                Ok(()) => EXIT_OK,
                Err(msg) => {
                    eprintln!("tcp-pep: {msg}");
                    EXIT_USAGE
                }
            }
        }
    };
    // Open connections are not waited for: the kernel closes their sockets.
    process::exit(code);
}
