//! Moving a thread into a named network namespace, as `ip netns exec` does.
//!
//! `setns(2)` changes the namespace of the calling thread only, so a process
//! can hold sockets and tun devices in several namespaces at once: enter a
//! namespace, open what is needed there, and return. File descriptors keep
//! the namespace they were opened in.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::path::PathBuf;

use rustix::thread::{move_into_link_name_space, LinkNameSpaceType};

/// Where `ip netns add NAME` mounts the namespace handle.
pub fn path_of(name: &str) -> PathBuf {
    PathBuf::from("/var/run/netns").join(name)
}

fn setns(file: &File) -> io::Result<()> {
    Ok(move_into_link_name_space(
        file.as_fd(),
        Some(LinkNameSpaceType::Network),
    )?)
}

fn open_named(name: &str) -> io::Result<File> {
    File::open(path_of(name)).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "network namespace {name:?} ({}): {e}",
                path_of(name).display()
            ),
        )
    })
}

/// Moves the calling thread into namespace `name` for good (for a thread
/// whose whole life belongs to one namespace).
pub fn enter(name: &str) -> io::Result<()> {
    let target = open_named(name)?;
    setns(&target).map_err(|e| io::Error::new(e.kind(), format!("setns into {name:?}: {e}")))
}

/// Runs `f` with the calling thread in namespace `name`, then returns the
/// thread to the namespace it was in.
pub fn within<T>(name: &str, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    let home = File::open("/proc/thread-self/ns/net")?;
    enter(name)?;
    let out = f();
    setns(&home).map_err(|e| io::Error::new(e.kind(), format!("returning from {name:?}: {e}")))?;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_is_under_var_run_netns() {
        assert_eq!(
            path_of("sbt-a-client"),
            PathBuf::from("/var/run/netns/sbt-a-client")
        );
    }

    #[test]
    fn unknown_namespace_names_itself_in_the_error() {
        let err = enter("satbench-no-such-namespace").unwrap_err();
        assert!(
            err.to_string().contains("satbench-no-such-namespace"),
            "{err}"
        );
    }

    #[test]
    fn within_enters_the_namespace_and_comes_back() {
        let name = format!("satbench-netns-test-{}", std::process::id());
        let ip = |verb: &str| {
            std::process::Command::new("ip")
                .args(["netns", verb, &name])
                .status()
                .is_ok_and(|s| s.success())
        };
        if !ip("add") {
            eprintln!("skipped: cannot create a network namespace (not root?)");
            return;
        }
        let here = || std::fs::read_link("/proc/thread-self/ns/net");
        let home = here().unwrap();
        let inside = within(&name, here);
        let after = here().unwrap();
        ip("del");
        assert_ne!(inside.unwrap(), home);
        assert_eq!(after, home);
    }
}
