//! Files a user names, read as untrusted input: only regular files (a FIFO would block the
//! reader forever, `/dev/zero` would never end), at most a stated size (the cap and how to raise
//! it are in the message), and as text. Every file a scenario names goes through here; the
//! scenario file itself is capped at [`SCENARIO_MAX_BYTES`].

use std::io::Read;
use std::path::Path;

/// The largest scenario or flows file read.
pub const SCENARIO_MAX_BYTES: u64 = 8 << 20;
/// The largest traffic file (a D-ITG `-Ft`/`-Fs` file) read, unless raised.
pub const TRAFFIC_FILE_MAX_BYTES: u64 = 64 << 20;
/// Raises [`TRAFFIC_FILE_MAX_BYTES`]: a size in MiB.
pub const TRAFFIC_FILE_MAX_ENV: &str = "LASTHOP_MAX_TRAFFIC_FILE_MIB";

/// That `path` is a regular file, or why not (for a message naming it).
pub fn regular_file(path: &Path) -> Result<std::fs::Metadata, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.is_file() {
        return Ok(meta);
    }
    let kind = if meta.is_dir() {
        "a directory"
    } else {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            "a FIFO"
        } else if t.is_char_device() || t.is_block_device() {
            "a device"
        } else if t.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        }
    };
    Err(format!("is {kind}, not a regular file; give a file"))
}

/// The text of the regular file `path`, at most `max` bytes; errors say what is wrong in words
/// (never quoting the file).
pub fn read_text(path: &Path, max: u64, raise_with: Option<&str>) -> Result<String, String> {
    let meta = regular_file(path)?;
    let too_big = |size: u64| {
        let how = raise_with.map(|v| format!("; {v}=<MiB> raises the limit")).unwrap_or_default();
        format!("is {:.1} MiB, above the limit of {} MiB{how}", size as f64 / (1 << 20) as f64, max >> 20)
    };
    if meta.len() > max {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // The size can change between the check and the read: never more than `max` + 1 bytes.
    std::fs::File::open(path).and_then(|f| f.take(max + 1).read_to_end(&mut bytes)).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > max {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|e| format!("is not UTF-8 text (byte {} is not); a text file is expected", e.utf8_error().valid_up_to()))
}

/// The cap on traffic files: [`TRAFFIC_FILE_MAX_BYTES`], or [`TRAFFIC_FILE_MAX_ENV`] MiB.
pub fn traffic_file_max() -> u64 {
    std::env::var(TRAFFIC_FILE_MAX_ENV).ok().and_then(|v| v.trim().parse::<u64>().ok()).map_or(TRAFFIC_FILE_MAX_BYTES, |mib| mib << 20)
}

/// A line of an input file as a message may quote it: only when it is short and looks like a
/// number (what the file should hold), so that no other file's content is ever echoed.
pub fn quotable(line: &str) -> Option<&str> {
    (line.len() <= 32 && line.chars().all(|c| c.is_ascii_digit() || "+-.eE ".contains(c))).then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("lh-{}-input-test", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn only_regular_files_are_read_and_never_beyond_the_cap() {
        let d = dir();
        let f = d.join("values.txt");
        std::fs::write(&f, "10\n20\n").unwrap();
        assert_eq!(read_text(&f, 1 << 20, None).unwrap(), "10\n20\n");
        // 6 bytes against a cap of 5: refused, saying the size, the cap and the knob.
        let e = read_text(&f, 5, Some("LASTHOP_X")).unwrap_err();
        assert!(e.contains("above the limit of 0 MiB; LASTHOP_X=<MiB> raises the limit"), "{e}");
        assert_eq!(read_text(&d, 1 << 20, None).unwrap_err(), "is a directory, not a regular file; give a file");
        assert_eq!(read_text(Path::new("/dev/zero"), 1 << 20, None).unwrap_err(), "is a device, not a regular file; give a file");
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        let _ = std::fs::remove_file(&fifo);
        // SAFETY: mkfifo on a valid NUL-terminated path.
        assert_eq!(unsafe { libc_mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(read_text(&fifo, 1 << 20, None).unwrap_err(), "is a FIFO, not a regular file; give a file");
        std::fs::write(&f, [0x66, 0xff, 0x0a]).unwrap();
        assert!(read_text(&f, 1 << 20, None).unwrap_err().starts_with("is not UTF-8 text (byte 1"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    extern "C" {
        #[link_name = "mkfifo"]
        fn libc_mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
    }

    #[test]
    fn only_number_like_lines_are_quoted() {
        assert_eq!(quotable("12.5"), Some("12.5"));
        assert_eq!(quotable("-3e2"), Some("-3e2"));
        assert_eq!(quotable("root:*:19000:0:99999:7:::"), None);
        assert_eq!(quotable(&"1".repeat(33)), None);
    }
}
