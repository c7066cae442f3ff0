//! The validators of what the origin serves (RFC 9110 §8.8): a strong
//! `ETag` made from the body's bytes and a `Last-Modified` from the file's
//! modification time. The I/O edge: the files are read here, once per
//! version of a file (`Memo`).

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use ring::digest;

/// Bytes of SHA-256 an ETag keeps: 128 bits tell any two versions of a
/// file apart as well as the whole digest would, in half the header.
const ETAG_BYTES: usize = 16;

/// A strong entity tag for `bytes`: the first 128 bits of their SHA-256,
/// in hex, quoted.
pub fn etag_of(bytes: &[u8]) -> String {
    let mut ctx = digest::Context::new(&digest::SHA256);
    ctx.update(bytes);
    quoted_hex(ctx.finish().as_ref())
}

fn quoted_hex(digest: &[u8]) -> String {
    let hex: String = digest[..ETAG_BYTES]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("\"{hex}\"")
}

/// The ETag of the file at `path`, read in chunks (the same as `etag_of`
/// its whole content).
pub fn etag_of_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut ctx = digest::Context::new(&digest::SHA256);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        ctx.update(&buf[..n]);
    }
    Ok(quoted_hex(ctx.finish().as_ref()))
}

/// Files larger than this are not read for their ETag: a bulk download's
/// file is sparse and up to 64 GiB, which hashing before `ready` would take
/// minutes to read. Their tag is weak and made from the file's length and
/// modification time, as H2O's and nginx's are; `If-None-Match` compares
/// weakly (RFC 9110 §13.1.2), so they are revalidated all the same.
pub const HASHED_MAX_BYTES: u64 = 64 << 20;

/// The weak entity tag of a file too large to hash.
pub fn weak_etag(len: u64, modified: SystemTime) -> String {
    let ns = modified
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("W/\"{len:x}-{ns:x}\"")
}

/// The ETag of the file at `path` whose metadata says `len` and
/// `modified`: its bytes' hash, or its weak tag when it is too large.
fn etag_for(path: &Path, len: u64, modified: SystemTime) -> std::io::Result<String> {
    if len > HASHED_MAX_BYTES {
        Ok(weak_etag(len, modified))
    } else {
        etag_of_file(path)
    }
}

/// An HTTP-date (IMF-fixdate), as `Last-Modified` carries it.
pub fn http_date(t: SystemTime) -> String {
    httpdate::fmt_http_date(t)
}

/// A file's validators: its ETag and its Last-Modified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Validators {
    pub etag: String,
    pub last_modified: String,
}

/// The validators of a file, or None if it cannot be read.
pub fn of_file(path: &Path) -> Option<Validators> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta.modified().ok()?;
    Some(Validators {
        etag: etag_for(path, meta.len(), modified).ok()?,
        last_modified: http_date(modified),
    })
}

/// The validators of a site directory's files, each computed once per
/// version of the file (its length and modification time): a file is not
/// read again for every request of it.
#[derive(Default)]
pub struct Memo {
    known: Mutex<HashMap<PathBuf, (u64, SystemTime, Validators)>>,
}

impl Memo {
    /// The validators of the file at `path` (its canonical path), or None
    /// if it cannot be read.
    pub fn of(&self, path: &Path) -> Option<Validators> {
        let meta = std::fs::metadata(path).ok()?;
        let (len, modified) = (meta.len(), meta.modified().ok()?);
        let known = || self.known.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((l, m, v)) = known().get(path) {
            if (*l, *m) == (len, modified) {
                return Some(v.clone());
            }
        }
        // hashed without the lock: other requests go on meanwhile
        let v = Validators {
            etag: etag_for(path, len, modified).ok()?,
            last_modified: http_date(modified),
        };
        known().insert(path.to_path_buf(), (len, modified, v.clone()));
        Some(v)
    }

    /// Hashes every file under `root` (canonical) now, before the server
    /// says it is ready, so that no request of a page load waits for a
    /// file's hash. Symlinks are not followed (a file reached through one
    /// is hashed when first asked for).
    pub fn warm(&self, root: &Path) {
        let Ok(dir) = std::fs::read_dir(root) else {
            return;
        };
        for entry in dir.flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => self.warm(&entry.path()),
                Ok(t) if t.is_file() => {
                    self.of(&entry.path());
                }
                _ => {}
            }
        }
    }

    /// How many file versions it knows.
    pub fn len(&self) -> usize {
        self.known.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use satbench_transport::testkit::temp_dir;
    use std::time::Duration;

    #[test]
    fn a_file_too_large_to_hash_gets_a_weak_tag_without_being_read() {
        let dir = temp_dir("origin-validators-large");
        let path = dir.join("timed.bin");
        // sparse: 64 GiB that reading would take minutes for
        std::fs::File::create(&path)
            .unwrap()
            .set_len(64 << 30)
            .unwrap();
        let started = std::time::Instant::now();
        let v = of_file(&path).unwrap();
        assert!(started.elapsed() < Duration::from_secs(1), "read it");
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        assert_eq!(v.etag, weak_etag(64 << 30, modified));
        assert!(v.etag.starts_with("W/\"1000000000-"), "{}", v.etag);
        assert_eq!(Memo::default().of(&path).unwrap(), v);
        // at the limit it is still hashed
        let small = dir.join("limit.bin");
        std::fs::File::create(&small)
            .unwrap()
            .set_len(HASHED_MAX_BYTES)
            .unwrap();
        assert!(!of_file(&small).unwrap().etag.starts_with("W/"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn etags_are_strong_quoted_and_follow_the_bytes() {
        let a = etag_of(b"hello");
        // SHA-256("hello") begins 2cf24dba5fb0a30e26e83b2ac5b9e29e
        assert_eq!(a, "\"2cf24dba5fb0a30e26e83b2ac5b9e29e\"");
        assert_ne!(etag_of(b"hellp"), a);
        assert!(!a.starts_with("W/"));
    }

    #[test]
    fn http_dates_are_imf_fixdate() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777);
        assert_eq!(http_date(t), "Sun, 06 Nov 1994 08:49:37 GMT");
    }

    #[test]
    fn a_file_is_hashed_again_only_when_it_changed() {
        let dir = temp_dir("validators");
        let f = dir.join("a.css");
        std::fs::write(&f, vec![7u8; 200_000]).unwrap();
        let memo = Memo::default();
        let first = memo.of(&f).unwrap();
        assert_eq!(first.etag, etag_of(&vec![7u8; 200_000]));
        assert_eq!(Some(first.clone()), of_file(&f));
        assert_eq!(memo.of(&f).unwrap(), first);
        std::fs::write(&f, b"changed").unwrap();
        assert_eq!(memo.of(&f).unwrap().etag, etag_of(b"changed"));
        assert_eq!(memo.of(&dir.join("none")), None);
    }

    #[test]
    fn warming_hashes_every_file_under_the_root() {
        let dir = temp_dir("validators-warm");
        std::fs::create_dir_all(dir.join("css/deep")).unwrap();
        for f in ["index.html", "css/a.css", "css/deep/b.css"] {
            std::fs::write(dir.join(f), f).unwrap();
        }
        let memo = Memo::default();
        assert!(memo.is_empty());
        memo.warm(&dir);
        assert_eq!(memo.len(), 3);
        assert_eq!(
            memo.of(&dir.join("css/deep/b.css")).unwrap().etag,
            etag_of(b"css/deep/b.css")
        );
        assert_eq!(memo.len(), 3, "known already");
    }
}
