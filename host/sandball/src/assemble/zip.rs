//! A minimal zip writer for Ansiballz payloads: deflated entries, a central directory,
//! fixed timestamps (so the same files always give the same bytes, and the same
//! content address).

use flate2::Compression;
use flate2::write::DeflateEncoder;
use std::io::Write;

/// Errors writing a zip.
#[derive(Debug, thiserror::Error)]
pub enum ZipError {
    /// More entries or bytes than the classic zip format holds.
    #[error("the module payload is too large for a zip file ({0})")]
    TooLarge(&'static str),
    /// Compression failed.
    #[error("cannot compress the module payload: {0}")]
    Io(#[from] std::io::Error),
}

/// 1980-01-01 00:00, the earliest zip date: payloads do not depend on when they were built.
const DOS_TIME: u16 = 0;
const DOS_DATE: u16 = (1 << 5) | 1;

/// Builds a zip of `(name, contents)` entries, in the order given.
pub fn write<'a>(
    entries: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Result<Vec<u8>, ZipError> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    let mut count: u16 = 0;
    for (name, data) in entries {
        let mut enc = DeflateEncoder::new(Vec::new(), Compression::default());
        enc.write_all(data)?;
        let compressed = enc.finish()?;
        let crc = crc32fast::hash(data);
        let offset = u32::try_from(out.len()).map_err(|_| ZipError::TooLarge("offset"))?;
        let csize = u32::try_from(compressed.len()).map_err(|_| ZipError::TooLarge("entry"))?;
        let usize_ = u32::try_from(data.len()).map_err(|_| ZipError::TooLarge("entry"))?;
        let name_len = u16::try_from(name.len()).map_err(|_| ZipError::TooLarge("name"))?;
        // Local file header.
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        out.extend_from_slice(&20u16.to_le_bytes()); // version needed
        out.extend_from_slice(&0u16.to_le_bytes()); // flags
        out.extend_from_slice(&8u16.to_le_bytes()); // deflate
        out.extend_from_slice(&DOS_TIME.to_le_bytes());
        out.extend_from_slice(&DOS_DATE.to_le_bytes());
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&csize.to_le_bytes());
        out.extend_from_slice(&usize_.to_le_bytes());
        out.extend_from_slice(&name_len.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes()); // extra length
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&compressed);
        // Central directory entry.
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&((3u16 << 8) | 20).to_le_bytes()); // made by: unix
        central.extend_from_slice(&20u16.to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes());
        central.extend_from_slice(&8u16.to_le_bytes());
        central.extend_from_slice(&DOS_TIME.to_le_bytes());
        central.extend_from_slice(&DOS_DATE.to_le_bytes());
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&csize.to_le_bytes());
        central.extend_from_slice(&usize_.to_le_bytes());
        central.extend_from_slice(&name_len.to_le_bytes());
        central.extend_from_slice(&[0; 8]); // extra, comment, disk, internal attrs
        central.extend_from_slice(&(0o100644u32 << 16).to_le_bytes()); // external: -rw-r--r--
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
        count = count
            .checked_add(1)
            .ok_or(ZipError::TooLarge("entry count"))?;
    }
    let cd_offset = u32::try_from(out.len()).map_err(|_| ZipError::TooLarge("offset"))?;
    let cd_size = u32::try_from(central.len()).map_err(|_| ZipError::TooLarge("directory"))?;
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0; 4]); // disk numbers
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&cd_size.to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes()); // comment length
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_reads_what_we_write() {
        let zip = write([
            ("a/__init__.py", b"".as_slice()),
            ("a/b.py", b"X = 'hello' * 100\n".as_slice()),
        ])
        .unwrap();
        // The same input gives the same bytes.
        assert_eq!(
            zip,
            write([
                ("a/__init__.py", b"".as_slice()),
                ("a/b.py", b"X = 'hello' * 100\n".as_slice())
            ])
            .unwrap()
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.zip");
        std::fs::write(&path, &zip).unwrap();
        let out = std::process::Command::new("python3")
            .arg("-c")
            .arg("import sys, zipfile; sys.path.insert(0, sys.argv[1]); import a.b; zipfile.ZipFile(sys.argv[1]).testzip(); print(len(a.b.X))")
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "500");
    }
}
