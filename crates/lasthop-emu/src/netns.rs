//! The emulator's footprint on the machine: one network namespace per endpoint node, named
//! `lh-<pid>-<node index>`, holding that node's TUN device `lh<pid>t<node index>` (≤ 15 bytes,
//! IFNAMSIZ) with the node's address (`wire::node_address`, 10.x.y.z/8 on-link, so every other
//! node is reached through the TUN, which has no neighbour discovery), loopback up and IPv6 off
//! (no router solicitations or MLD reports on the emulated links).
//!
//! Safety: only names of exactly that shape are ever created or removed; [`Footprint`] removes
//! its namespaces when dropped (normal exit, error, SIGINT/SIGTERM once the driver has stopped);
//! [`clean_stale`] removes the `lh-<pid>-<n>` namespaces whose process is gone (after SIGKILL),
//! and is run before every start. A TUN device dies with the emulator's file descriptor, so
//! namespaces are all there is to clean.
//!
//! Configuration goes through `ip` (iproute2) and `sysctl` run inside the namespace with
//! `ip netns exec`: a few dozen commands at start-up, none per packet, every one printable for a
//! user who wants to see what lasthop did, and `ip netns` keeps the bind mounts under
//! /run/netns that other tools (and `lasthop emu shell`) use. Netlink through a crate
//! (`rtnetlink` needs an async runtime; `neli` is lower level) would save a few milliseconds of
//! start-up and add a dependency tree for no behaviour the user can see.

use crate::EmuError;
use std::path::Path;
use std::process::Command;

/// Where `ip netns` keeps its namespaces.
pub const NETNS_DIR: &str = "/run/netns";

/// The namespace of node `node` in the emulator process `pid`.
pub fn namespace_name(pid: u32, node: usize) -> String {
    format!("lh-{pid}-{node}")
}

/// The TUN device of node `node` in the emulator process `pid` (`lh` + pid ≤ 7 digits + `t` +
/// node index: at most 13 bytes for up to 1000 nodes, within IFNAMSIZ).
pub fn tun_name(pid: u32, node: usize) -> String {
    format!("lh{pid}t{node}")
}

/// `(pid, node)` if `name` is exactly `lh-<pid>-<node>` (decimal digits only): the only names
/// lasthop's emulator creates, and so the only ones [`clean_stale`] may remove.
pub fn parse_namespace_name(name: &str) -> Option<(u32, usize)> {
    parse_owned_name(name, "-")
}

/// `lh-<pid><sep><index>`, both decimal, → (pid, index): the shape of every name the emulator
/// gives what it creates; anything else → None.
pub(crate) fn parse_owned_name(name: &str, sep: &str) -> Option<(u32, usize)> {
    let (pid, index) = name.strip_prefix("lh-")?.split_once(sep)?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(index) {
        return None;
    }
    Some((pid.parse().ok()?, index.parse().ok()?))
}

/// What the emulator needs from the machine and lacks in this process, one line per missing
/// thing; empty when it can run. Inside a user namespace (see [`user_namespace_missing`]) the
/// process is root of its own namespaces and this is empty where the machine allows it.
pub fn missing_requirements() -> Vec<String> {
    let mut missing = Vec::new();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        let userns = user_namespace_missing();
        missing.push(if userns.is_empty() {
            "root (CAP_NET_ADMIN and CAP_SYS_ADMIN, to create network namespaces and TUN devices) in this process: \
             `lasthop emu run` and `emu shell` enter a user namespace themselves, which this machine allows"
                .into()
        } else {
            format!(
                "root (CAP_NET_ADMIN and CAP_SYS_ADMIN, to create network namespaces and TUN devices): run as root or with sudo; \
                 without root, lasthop emu runs inside an unprivileged user namespace, which needs: {}",
                userns.join("; ")
            )
        });
        // The user namespace's needs include the device and the tools.
        return missing;
    }
    missing.extend(device_and_tools_missing());
    missing
}

/// The TUN device and the tools, for root and user namespace alike.
fn device_and_tools_missing() -> Vec<String> {
    let mut missing = Vec::new();
    if !Path::new("/dev/net/tun").exists() {
        missing.push("/dev/net/tun: the kernel's TUN driver (CONFIG_TUN; `modprobe tun`)".into());
    } else if !may_read_write("/dev/net/tun") {
        let mode = std::fs::metadata("/dev/net/tun").map(|m| format!("{:o}", std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o7777)).unwrap_or_default();
        missing.push(format!(
            "/dev/net/tun readable and writable by this user (it is mode {mode}, root's only): `chmod 0666 /dev/net/tun` (the usual mode; \
             a TUN device is then still created only inside a namespace one owns), or run as root"
        ));
    }
    for tool in ["ip", "sysctl"] {
        if which(tool).is_none() {
            missing.push(format!("`{tool}` on PATH (Debian: apt-get install {})", if tool == "ip" { "iproute2" } else { "procps" }));
        }
    }
    missing
}

/// True if this process may open `path` for reading and writing (`access(2)`, which checks the
/// real user: inside a user namespace, the user outside it).
fn may_read_write(path: &str) -> bool {
    let c = std::ffi::CString::new(path).expect("no NUL in a constant path");
    // SAFETY: access with a valid NUL-terminated path.
    unsafe { libc::access(c.as_ptr(), libc::R_OK | libc::W_OK) == 0 }
}

/// The kernel settings (sysctl files) that forbid an unprivileged user namespace: (file, value
/// that forbids, what to do).
const USERNS_SWITCHES: [(&str, &str, &str); 3] = [
    ("/proc/sys/kernel/unprivileged_userns_clone", "0", "Debian's switch is off: sysctl -w kernel.unprivileged_userns_clone=1"),
    ("/proc/sys/user/max_user_namespaces", "0", "no user namespace may exist: sysctl -w user.max_user_namespaces=15000"),
    (
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
        "1",
        "AppArmor restricts unprivileged user namespaces (Ubuntu 23.10+): sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile for python",
    ),
];

/// What an unprivileged user namespace (`unshare --user --map-root-user --net --mount`, in
/// which this user is root of its own network and mount namespaces) lacks on this machine, one
/// line each; empty when `lasthop emu` can run in one. A setting file that is absent does not
/// forbid (the kernel has no such switch).
pub fn user_namespace_missing() -> Vec<String> {
    let mut missing = Vec::new();
    for (file, forbids, fix) in USERNS_SWITCHES {
        if let Ok(v) = std::fs::read_to_string(file) {
            if v.trim() == forbids {
                missing.push(format!("{file} is {forbids}: {fix}"));
            }
        }
    }
    if which("unshare").is_none() {
        missing.push("`unshare` on PATH (Debian: apt-get install util-linux)".into());
    }
    if which("mount").is_none() {
        missing.push("`mount` on PATH (Debian: apt-get install mount)".into());
    }
    missing.extend(device_and_tools_missing());
    missing
}

fn which(tool: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(tool)).find(|p| p.is_file())
}

/// Runs a command; its stderr becomes the error.
pub fn run(program: &str, args: &[&str]) -> Result<(), EmuError> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| EmuError::Io { what: format!("running {program}"), source: e })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(EmuError::Command {
            command: format!("{program} {}", args.join(" ")),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

/// Route attributes for TCP from a namespace (ip-route(8): `initcwnd`, `initrwnd`, `rto_min`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpRoute {
    /// Initial congestion (and receive) window, segments.
    pub initcwnd: u32,
    /// Lower bound of the retransmission timeout, ms.
    pub rto_min_ms: u64,
}

/// The settings of a namespace with a TCP flow's end that make Linux's TCP what the simulator
/// models (ip-sysctl.rst): no timestamps (the model sends none; with them Linux's segments carry
/// 12 bytes less payload, MSS 1448 for 1460), no slow start after idle (RFC 5681 §4.1's optional
/// restart is left out of the model), no metrics cached from an earlier connection to the same
/// peer (a fresh namespace has none; said for the record, as `ip tcp_metrics` would otherwise
/// hand a second run an ssthresh).
pub const TCP_AS_MODELLED: [&str; 3] = ["net.ipv4.tcp_timestamps=0", "net.ipv4.tcp_slow_start_after_idle=0", "net.ipv4.tcp_no_metrics_save=1"];

/// The namespaces of one emulation; removed when dropped.
#[derive(Debug, Default)]
pub struct Footprint {
    namespaces: Vec<String>,
}

impl Footprint {
    /// Creates namespace `name` (loopback up, IPv6 off) and records it for removal.
    pub fn add_namespace(&mut self, name: &str) -> Result<(), EmuError> {
        run("ip", &["netns", "add", name])?;
        self.namespaces.push(name.to_string());
        run("ip", &["-n", name, "link", "set", "lo", "up"])?;
        for key in ["net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"] {
            sysctl(name, key)?;
        }
        Ok(())
    }

    /// Moves TUN device `dev` into namespace `ns`, gives it `addr`/8 and `mtu`, brings it up;
    /// `tcp` sets the route attributes of TCP connections from this namespace.
    pub fn attach_tun(&self, ns: &str, dev: &str, addr: [u8; 4], mtu: u32, tcp: Option<TcpRoute>) -> Result<(), EmuError> {
        run("ip", &["link", "set", "dev", dev, "netns", ns])?;
        let cidr = format!("{}.{}.{}.{}/8", addr[0], addr[1], addr[2], addr[3]);
        run("ip", &["-n", ns, "addr", "add", &cidr, "dev", dev])?;
        run("ip", &["-n", ns, "link", "set", "dev", dev, "mtu", &mtu.to_string(), "up"])?;
        if let Some(t) = tcp {
            let (w, rto) = (t.initcwnd.to_string(), format!("{}ms", t.rto_min_ms));
            run("ip", &["-n", ns, "route", "replace", "10.0.0.0/8", "dev", dev, "initcwnd", &w, "rto_min", &rto])?;
        }
        Ok(())
    }

    pub fn namespaces(&self) -> &[String] {
        &self.namespaces
    }

    /// Removes every namespace; returns what could not be removed.
    pub fn remove(&mut self) -> Vec<String> {
        let mut failed = Vec::new();
        for ns in self.namespaces.drain(..) {
            if let Err(e) = run("ip", &["netns", "delete", &ns]) {
                failed.push(format!("{ns}: {e}"));
            }
        }
        failed
    }
}

impl Drop for Footprint {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Sets `key=value` with sysctl inside namespace `ns` (per-namespace keys: net.*).
pub fn sysctl(ns: &str, assignment: &str) -> Result<(), EmuError> {
    run("ip", &["netns", "exec", ns, "sysctl", "-q", "-w", assignment])
}

/// The emulator namespaces on this machine whose process is gone: `lh-<pid>-<node>` only.
pub fn stale_namespaces() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(NETNS_DIR) else { return Vec::new() };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| parse_namespace_name(n).is_some_and(|(pid, _)| !lasthop_gen::workdir::alive(pid)))
        .collect();
    names.sort();
    names
}

/// Removes the namespaces [`stale_namespaces`] lists; returns the names removed, and an error
/// naming any it could not remove.
pub fn clean_stale() -> Result<Vec<String>, EmuError> {
    let mut removed = Vec::new();
    for ns in stale_namespaces() {
        run("ip", &["netns", "delete", &ns])?;
        removed.push(ns);
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_emulator_names_are_recognised() {
        assert_eq!(parse_namespace_name("lh-1234-0"), Some((1234, 0)));
        assert_eq!(parse_namespace_name("lh-99-12"), Some((99, 12)));
        // Other lasthop tests' namespaces (lh-<pid>-<word>) and everything else are never touched.
        for other in ["lh-1234-gen", "lh-1234", "lh--0", "lh-12a-0", "xlh-1-0", "lh-1-0-1", "lh-1-", "netns0"] {
            assert_eq!(parse_namespace_name(other), None, "{other}");
        }
    }

    #[test]
    fn tun_names_fit_ifnamsiz() {
        // IFNAMSIZ is 16 with the terminating NUL (linux/if.h): 15 visible bytes. The largest
        // pid (2^22, PID_MAX_LIMIT) and node index 999 give 2 + 7 + 1 + 3 = 13.
        assert_eq!(tun_name(4_194_304, 999), "lh4194304t999");
        assert_eq!(namespace_name(42, 3), "lh-42-3");
    }
}
