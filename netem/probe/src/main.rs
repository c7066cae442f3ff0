//! `satprobe`: see README.md. Sockets are opened inside the named network
//! namespaces (with `netns::within`), then driven by threads of this one
//! process, which share one monotonic clock: one-way delays need no clock
//! synchronisation. Each mode's driver is a module of `drive/`; this file
//! only dispatches and prints.

mod drive;
mod sys;

use satprobe::cli::{self, Command};

fn main() {
    let out = match cli::parse(std::env::args_os()) {
        Ok(Command::Print(text)) => {
            print!("{text}");
            return;
        }
        Ok(Command::Rtt(o)) => drive::rtt::run(&o).map(|v| serde_json::to_string(&v)),
        Ok(Command::Owd(o)) => drive::owd::run(&o).map(|v| serde_json::to_string(&v)),
        Ok(Command::Rate(o)) => drive::rate::run(&o).map(|v| serde_json::to_string(&v)),
        Ok(Command::Connect(o)) => drive::connect::run(&o).map(|v| serde_json::to_string(&v)),
        Ok(Command::Burst(o)) => drive::burst::run(&o).map(|v| serde_json::to_string(&v)),
        Err(e) => Err(e),
    };
    match out {
        Ok(Ok(json)) => println!("{json}"),
        Ok(Err(e)) => fail(&format!("cannot write JSON: {e}")),
        Err(e) => fail(&e),
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("satprobe: {}", msg.replace('\n', " "));
    std::process::exit(2);
}
