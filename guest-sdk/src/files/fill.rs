//! `fill`: writes a new file's content by positioned writes. On a node these reach the
//! filesystem's own write (WASI `descriptor.write`), whose error says what went wrong —
//! a full disk is "No space left on device" — where a stream write (what `io::copy`
//! and `write_all` use there) reports any failure as a bare I/O error.

use std::fs::File;
use std::io::{self, Read};

/// Copies all of `from` into `to` from its start; returns the bytes written.
pub fn fill(to: &File, from: &mut dyn Read) -> io::Result<u64> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut offset = 0u64;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok(offset),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut chunk = &buf[..n];
        while !chunk.is_empty() {
            match write_at(to, chunk, offset) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(w) => {
                    chunk = &chunk[w..];
                    offset += w as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// One positioned write: `pwrite`, which WASI's C library makes a `descriptor.write`
/// (std's positioned writes are not stable on WASI).
#[cfg(target_os = "wasi")]
fn write_at(file: &File, buf: &[u8], offset: u64) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let offset =
        libc::off_t::try_from(offset).map_err(|_| io::Error::from(io::ErrorKind::FileTooLarge))?;
    // SAFETY: the descriptor stays open while `file` is borrowed, and `buf` is valid
    // for `buf.len()` bytes.
    let n = unsafe { libc::pwrite(file.as_raw_fd(), buf.as_ptr().cast(), buf.len(), offset) };
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

/// One positioned write.
#[cfg(not(target_os = "wasi"))]
fn write_at(file: &File, buf: &[u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::write_at(file, buf, offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_a_file_with_all_it_reads() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let content: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let file = File::create(&p).unwrap();
        assert_eq!(fill(&file, &mut content.as_slice()).unwrap(), 200_000);
        drop(file);
        assert_eq!(std::fs::read(&p).unwrap(), content);
    }
}
