use std::io::Write;

use satbench_bulk::{cli, client, server};

fn runtime() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("tokio runtime: {e}");
            std::process::exit(2);
        }
    }
}

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
            println!("satbulk {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Ok(cli::Command::Serve(args)) => match runtime().block_on(server::run(args)) {
            Ok(()) => 0,
            Err(msg) => {
                eprintln!("{msg}");
                2
            }
        },
        Ok(cli::Command::Get(args)) => {
            let json = args.json;
            match runtime().block_on(client::get(args)) {
                Ok(report) => {
                    if json {
                        println!("{}", serde_json::to_string(&report).unwrap_or_default());
                    } else {
                        println!("{}", report.human());
                    }
                    if report.ok {
                        0
                    } else {
                        1
                    }
                }
                Err(msg) => {
                    eprintln!("{msg}");
                    2
                }
            }
        }
    };
    let _ = std::io::stdout().flush();
    // exit without waiting for in-flight blocking work of the runtime
    std::process::exit(code);
}
