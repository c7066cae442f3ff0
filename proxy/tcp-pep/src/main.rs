//! tcp-pep: see `tcp-pep --help` and proxy/README.md.

use satbench_transport::{cli, process};
use tcp_pep::cli::Cli;
use tcp_pep::server;

fn main() {
    let result = cli::parse::<Cli>()
        .options()
        .and_then(|o| process::block_on_threads(o.threads, server::run(o)));
    // Open connections are not waited for: the kernel closes their sockets.
    process::finish(result.map(|()| process::EXIT_OK))
}
