use std::io::Write;

use satbench_origin::{cert, cli, serve};

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
        Ok(cli::Command::Help) => {
            print!("{}", cli::USAGE);
            0
        }
        Ok(cli::Command::Version) => {
            println!("origin {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Ok(cli::Command::GenCert(g)) => {
            match cert::generate(&g.names, &g.ips).and_then(|c| cert::write(&g.out, &c)) {
                Ok(()) => 0,
                Err(msg) => {
                    eprintln!("{msg}");
                    2
                }
            }
        }
        Ok(cli::Command::Serve(args)) => {
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("tokio runtime: {e}");
                    std::process::exit(2);
                }
            };
            match runtime.block_on(serve::run(args)) {
                Ok(()) => 0,
                Err(msg) => {
                    eprintln!("{msg}");
                    2
                }
            }
        }
    };
    let _ = std::io::stdout().flush();
    // exit without waiting for in-flight blocking reads of the runtime
    std::process::exit(code);
}
