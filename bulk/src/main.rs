use satbench_bulk::cli::{Cli, Command};
use satbench_bulk::{client, server};
use satbench_transport::{cli, process};

fn main() {
    let result = match cli::parse::<Cli>().command {
        Command::Serve(flags) => flags
            .settings()
            .and_then(|args| process::block_on(None, server::run(args)))
            .map(|()| process::EXIT_OK),
        Command::Get(flags) => flags.settings().and_then(|args| {
            let json = args.json;
            let mut report = process::block_on(None, client::get(args))?;
            report.cpu_ms = process::cpu_ms();
            if json {
                println!("{}", serde_json::to_string(&report).unwrap_or_default());
            } else {
                println!("{}", report.human());
            }
            Ok(if report.ok {
                process::EXIT_OK
            } else {
                process::EXIT_FAILED
            })
        }),
    };
    process::finish(result)
}
