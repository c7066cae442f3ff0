use satbench_origin::cli::{Cli, Command};
use satbench_origin::serve;
use satbench_transport::{cert, cli, process};

fn main() {
    let result = match cli::parse::<Cli>().command {
        Command::GenCert(flags) => flags.settings().and_then(|g| {
            let c = cert::generate(&g.names, &g.ips)?;
            cert::write(&g.out, &c)
        }),
        Command::Serve(flags) => flags
            .settings()
            .and_then(|args| process::block_on(None, serve::run(args))),
    };
    process::finish(result.map(|()| process::EXIT_OK))
}
