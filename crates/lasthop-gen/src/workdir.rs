//! The working directories the generator, the receiver and the emulator keep in the system's
//! temporary directory while a process runs: `lh-<pid>-<kind>-<suffix>`, `kind` one of
//! [`KINDS`]. A process killed with SIGKILL cannot remove its own; the owner's pid in the name
//! lets the next start (and `lasthop emu clean`) remove exactly those of processes that are
//! gone, and nothing else: only directories (never a symlink), only of this user, only names
//! of that form whose pid no longer runs.

use std::io;
use std::path::PathBuf;

/// What keeps a working directory: a sender's logs (`gen`), a receiver's records (`recv`),
/// an emulator's packet captures (`pcap`).
pub const KINDS: [&str; 3] = ["gen", "recv", "pcap"];

/// A new private directory `lh-<this pid>-<kind>-XXXXXX` in the temporary directory:
/// `mkdtemp(3)` creates it with mode 0700 and an unpredictable name, failing rather than
/// following anything that is already there.
pub fn private_dir(kind: &str) -> io::Result<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    debug_assert!(KINDS.contains(&kind));
    let name = format!("lh-{}-{kind}-XXXXXX", std::process::id());
    let mut template = std::env::temp_dir().join(name).into_os_string().into_vec();
    template.push(0);
    // SAFETY: a NUL-terminated, writable template ending in six X's, as mkdtemp requires.
    let p = unsafe { libc::mkdtemp(template.as_mut_ptr().cast()) };
    if p.is_null() {
        return Err(io::Error::last_os_error());
    }
    template.pop();
    Ok(PathBuf::from(std::ffi::OsString::from_vec(template)))
}

/// `lh-<pid>-<kind>-<suffix>` → (pid, kind), the suffix being letters, digits and `_`
/// (mkdtemp's and Python's `tempfile` names, an emulator's flow index); every other name → None.
pub fn parse_name(name: &str) -> Option<(u32, &'static str)> {
    let (pid, rest) = name.strip_prefix("lh-")?.split_once('-')?;
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (kind, suffix) = rest.split_once('-')?;
    let kind = KINDS.iter().find(|k| **k == kind)?;
    if suffix.is_empty() || !suffix.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    Some((pid.parse().ok()?, kind))
}

/// True while process `pid` exists (a zombie counts as gone: it runs no more code).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses (which may itself hold spaces).
        Ok(stat) => stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()).is_some_and(|s| s != "Z" && s != "X"),
        Err(_) => false,
    }
}

/// The working directories of processes that are gone, in the temporary directory: names of
/// [`parse_name`]'s form, real directories of this user, sorted.
pub fn stale_dirs() -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let tmp = std::env::temp_dir();
    let Ok(dir) = std::fs::read_dir(&tmp) else { return Vec::new() };
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let mut dirs: Vec<PathBuf> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| parse_name(n).is_some_and(|(pid, _)| !alive(pid)))
        .map(|n| tmp.join(n))
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir() && m.uid() == uid))
        .collect();
    dirs.sort();
    dirs
}

/// Removes what [`stale_dirs`] lists; returns their paths, or the first that could not be
/// removed and why.
pub fn remove_stale() -> Result<Vec<String>, (PathBuf, io::Error)> {
    let mut removed = Vec::new();
    for d in stale_dirs() {
        match std::fs::remove_dir_all(&d) {
            Ok(()) => removed.push(d.display().to_string()),
            // Another process's cleanup got there first.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err((d, e)),
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_exact_working_directory_names_are_recognised() {
        assert_eq!(parse_name("lh-1234-recv-aB3_x9"), Some((1234, "recv")));
        assert_eq!(parse_name("lh-7-gen-0"), Some((7, "gen")));
        assert_eq!(parse_name("lh-99-pcap-k2j4h_1q"), Some((99, "pcap")));
        // Namespaces (lh-<pid>-<n>), other kinds, other tests' names and everything else: never.
        for other in ["lh-1234-0", "lh-1234-gen", "lh-1234-gen-", "lh-x-gen-1", "lh--gen-1", "lh-1-tmp-abc", "lh-1-gen-a.b",
                      "lh-1-gen-../x", "xlh-1-gen-1", "lasthop-gen-abc", "lh-recv-abcdef"] {
            assert_eq!(parse_name(other), None, "{other}");
        }
    }

    #[test]
    fn this_process_is_alive_and_an_unused_pid_is_not() {
        assert!(alive(std::process::id()));
        // pid_max is at most 2^22 on Linux (kernel/pid.c PID_MAX_LIMIT).
        assert!(!alive(4_194_305));
    }

    #[test]
    fn private_directories_carry_this_pid_and_are_private_and_unpredictable() {
        let (a, b) = (private_dir("recv").unwrap(), private_dir("recv").unwrap());
        assert_ne!(a, b);
        for d in [&a, &b] {
            let meta = std::fs::symlink_metadata(d).unwrap();
            assert!(meta.is_dir() && !meta.file_type().is_symlink());
            assert_eq!(meta.permissions().mode() & 0o777, 0o700, "{}", d.display());
            let name = d.file_name().unwrap().to_string_lossy().into_owned();
            assert_eq!(parse_name(&name), Some((std::process::id(), "recv")), "{name}");
            std::fs::remove_dir(d).unwrap();
        }
    }

    #[test]
    fn the_directories_of_a_dead_process_are_stale_and_this_ones_and_a_symlink_are_not() {
        // A pid above the kernel's limit (PID_MAX_LIMIT is 2^22) never runs.
        let tmp = std::env::temp_dir();
        let dead = tmp.join(format!("lh-{}-recv-{}", 1u32 << 23, std::process::id()));
        let dead_link = tmp.join(format!("lh-{}-gen-{}", 1u32 << 23, std::process::id()));
        let ours = private_dir("gen").unwrap();
        std::fs::create_dir_all(dead.join("inner")).unwrap();
        let _ = std::fs::remove_file(&dead_link);
        std::os::unix::fs::symlink(&ours, &dead_link).unwrap();
        let stale = stale_dirs();
        assert!(stale.contains(&dead), "{stale:?}");
        assert!(!stale.contains(&ours) && !stale.contains(&dead_link), "{stale:?}");
        std::fs::remove_dir_all(&dead).unwrap();
        std::fs::remove_file(&dead_link).unwrap();
        std::fs::remove_dir(&ours).unwrap();
    }
}
