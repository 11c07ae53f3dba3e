//! Compression for what the controller uploads to nodes over a network: the shim (xz
//! or gzip, whichever the node has: its own `xz -dc` or `gzip -dc` reads it) and the
//! modules a node lacks (one xz stream for all of them, which the shim reads: modules
//! share much of their code, which gzip's 32 KiB window cannot see). Each content is
//! compressed once, keyed by its format and a sha256 that names it (the shim's; for a
//! batch of modules, that of their addresses), however many nodes it goes to, off the
//! async threads. The compressed copy is kept in the controller's own cache
//! (`<cache>/gzip/<sha256>.gz`, `<cache>/xz/<sha256>.xz`, [`keep_in`]; written to a
//! temporary file and renamed), so that later runs read it instead of compressing
//! again (a debug build's shim is tens of MB). A node checks the sha256 of the
//! uncompressed bytes, so compression changes nothing of what it keeps; a kept copy is
//! used only when its trailer (gzip) or its index (xz) gives the length of the content
//! it stands for, and the CRC32 too for gzip.

use flate2::Compression;
use flate2::write::GzEncoder;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};
use tokio::sync::OnceCell;

/// How an upload is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// One gzip stream (`gzip -dc` on the node).
    Gzip,
    /// One xz stream made at this preset (`xz -dc` on the node, or the shim's own
    /// reader).
    Xz(u32),
}

/// The shim for a node that has `xz`: preset 6 in a release build (the release shim,
/// 22.9 MB: 5.59 MB in 14 s, once per build since the copy is kept; gzip -6 gives
/// 8.0 MB), 0 in a debug build (its 45.8 MB shim in 3.3 s), whose shim goes to the
/// test suite's nodes on this machine.
pub const XZ_SHIM: Format = Format::Xz(if cfg!(debug_assertions) { 0 } else { 6 });

/// The modules a new session lacks, one stream: preset 3 in a release build (the ten
/// modules of the network benchmark's play, 10.5 MB: 0.96 MB in 1.3 s; preset 6 gives
/// 0.84 MB in 6.9 s, paid again for every new set of modules; gzip one by one gave
/// 3.64 MB), 0 in a debug build.
pub const XZ_MODULES: Format = Format::Xz(if cfg!(debug_assertions) { 0 } else { 3 });

impl Format {
    /// The node's command that reads the format on its standard input.
    pub fn decoder(self) -> &'static str {
        match self {
            Format::Gzip => "gzip -dc",
            Format::Xz(_) => "xz -dc",
        }
    }

    /// The directory of the controller's cache the kept copies are in, and their
    /// extension.
    fn place(self) -> (&'static str, &'static str) {
        match self {
            Format::Gzip => ("gzip", "gz"),
            Format::Xz(_) => ("xz", "xz"),
        }
    }

    /// `bytes` compressed.
    pub fn compress(self, bytes: &[u8]) -> std::io::Result<Vec<u8>> {
        match self {
            Format::Gzip => {
                let mut encoder = GzEncoder::new(
                    Vec::with_capacity(bytes.len() / 3),
                    Compression::new(GZIP_LEVEL),
                );
                encoder.write_all(bytes)?;
                encoder.finish()
            }
            Format::Xz(preset) => {
                let mut options = lzma_rust2::XzOptions::with_preset(preset);
                // No larger a dictionary than the content: the node's reader allocates it.
                let fits = u32::try_from(bytes.len().next_power_of_two()).unwrap_or(u32::MAX);
                options.lzma_options.dict_size =
                    options.lzma_options.dict_size.min(fits.max(1 << 16));
                let mut writer =
                    lzma_rust2::XzWriter::new(Vec::with_capacity(bytes.len() / 4), options)?;
                writer.write_all(bytes)?;
                writer.finish()
            }
        }
    }

    /// Whether `packed`, a kept copy, stands for `bytes`: a gzip stream whose trailer
    /// holds their length and CRC32, an xz stream whose index gives their length.
    fn holds(self, packed: &[u8], bytes: &[u8]) -> bool {
        match self {
            Format::Gzip => {
                let Some(trailer) = packed.len().checked_sub(8).map(|at| &packed[at..]) else {
                    return false;
                };
                let mut crc = flate2::Crc::new();
                crc.update(bytes);
                packed.starts_with(&[0x1f, 0x8b])
                    && trailer[..4] == crc.sum().to_le_bytes()
                    && trailer[4..] == (bytes.len() as u32).to_le_bytes()
            }
            Format::Xz(_) => lzma_rust2::xz_uncompressed_size(std::io::Cursor::new(packed))
                .is_ok_and(|n| n == bytes.len() as u64),
        }
    }
}

/// The compressed contents of this run, by format and sha256 (`None`: compressing
/// failed).
type Compressed = HashMap<(Format, String), Arc<OnceCell<Option<Arc<Vec<u8>>>>>>;
static COMPRESSED: LazyLock<Mutex<Compressed>> = LazyLock::new(Mutex::default);

/// The gzip level: 6 (gzip's default) for a release build, whose copies are made once
/// and sent to every cold node; 1 for a debug build, whose shim (three times the size)
/// goes to the test suite's nodes on this machine. Measured on the release shim: level
/// 1 9.62 MB in 0.45 s, level 6 7.89 MB in 3.5 s, level 9 7.86 MB in 6.2 s; the debug
/// shim: level 1 in 1 s, level 6 in 7 s (docs/BENCHMARKS.md).
const GZIP_LEVEL: u32 = if cfg!(debug_assertions) { 1 } else { 6 };

/// Where this run keeps the compressed copies ([`keep_in`]); unset, nothing is kept.
static KEPT_DIR: OnceLock<PathBuf> = OnceLock::new();

/// Has this run keep the compressed copies in the controller's cache `cache`
/// ([`super::pool::controller_cache`]; `None`: [`super::deploy::DEFAULT_CACHE`]). Set
/// once, when the run starts.
pub fn keep_in(cache: Option<&str>) {
    let cache = cache.unwrap_or(super::deploy::DEFAULT_CACHE);
    let _ = KEPT_DIR.set(crate::local_files::expand_user(cache));
}

/// `bytes` (whose sha256 is `sha256`) compressed in `format`, made once per run and
/// read from the controller's cache when a run before made it (see [`keep_in`]);
/// `None` when they could not be compressed (the caller sends them as they are).
pub async fn compressed(format: Format, sha256: &str, bytes: &[u8]) -> Option<Arc<Vec<u8>>> {
    let cell = COMPRESSED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry((format, sha256.to_string()))
        .or_default()
        .clone();
    cell.get_or_init(|| async {
        let owned = bytes.to_vec();
        let sha = sha256.to_string();
        let dir = KEPT_DIR.get().map(|d| d.join(format.place().0));
        let packed = tokio::task::spawn_blocking(move || match dir {
            Some(dir) => kept_or_compressed(format, &dir, &sha, &owned),
            None => format.compress(&owned),
        })
        .await
        .map_err(std::io::Error::other)
        .and_then(|packed| packed);
        match packed {
            Ok(packed) => Some(Arc::new(packed)),
            Err(e) => {
                tracing::warn!(sha256, error = %e, "cannot compress an upload; it is sent as it is");
                None
            }
        }
    })
    .await
    .clone()
}

/// The copy of `bytes` kept in `dir` when it is theirs, else `bytes` compressed and
/// kept there (when that fails, the run goes on with its own copy).
fn kept_or_compressed(
    format: Format,
    dir: &Path,
    sha256: &str,
    bytes: &[u8],
) -> std::io::Result<Vec<u8>> {
    let kept = dir.join(format!("{sha256}.{}", format.place().1));
    match std::fs::read(&kept) {
        Ok(packed) if format.holds(&packed, bytes) => {
            tracing::debug!(sha256, path = %kept.display(), "the compressed copy is the controller's cache's");
            return Ok(packed);
        }
        Ok(_) => {
            tracing::debug!(path = %kept.display(), "a kept compressed copy is not of its content: made again")
        }
        Err(_) => {}
    }
    let started = std::time::Instant::now();
    let packed = format.compress(bytes)?;
    tracing::debug!(
        sha256,
        ?format,
        bytes = bytes.len(),
        compressed = packed.len(),
        ms = started.elapsed().as_millis() as u64,
        "compressed an upload"
    );
    if let Err(e) = keep(dir, &kept, &packed) {
        tracing::debug!(path = %kept.display(), error = %e, "cannot keep the compressed copy");
    }
    Ok(packed)
}

/// Writes `packed` to `kept` through a temporary file, in a directory only the user
/// can read (as the shim's cache).
fn keep(dir: &Path, kept: &Path, packed: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    crate::local_files::write_atomically(kept, packed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn content() -> Vec<u8> {
        (0..200_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect()
    }

    fn gunzip(packed: &[u8]) -> Vec<u8> {
        let mut back = vec![];
        flate2::read::GzDecoder::new(packed)
            .read_to_end(&mut back)
            .unwrap();
        back
    }

    #[tokio::test]
    async fn an_upload_is_compressed_once_and_decompresses_to_itself() {
        let bytes = content();
        let sha = "c".repeat(64);
        let first = compressed(Format::Gzip, &sha, &bytes).await.unwrap();
        assert!(first.len() < bytes.len() / 10, "{}", first.len());
        // The same content again is the same compressed copy, not compressed anew.
        let again = compressed(Format::Gzip, &sha, b"not looked at")
            .await
            .unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(gunzip(&first), bytes);
    }

    #[test]
    fn a_copy_is_kept_for_later_runs_and_used_only_for_its_own_content() {
        let dir = tempfile::tempdir().unwrap();
        let kept_dir = dir.path().join("cache/gzip");
        let bytes = content();
        let sha = "e".repeat(64);
        let packed = kept_or_compressed(Format::Gzip, &kept_dir, &sha, &bytes).unwrap();
        let kept = kept_dir.join(format!("{sha}.gz"));
        assert_eq!(std::fs::read(&kept).unwrap(), packed);
        // Nothing but the kept file is left in the directory (no temporary file).
        assert_eq!(std::fs::read_dir(&kept_dir).unwrap().count(), 1);
        // A later run reads it: a marked copy with the right trailer is what it gets.
        let mut marked = packed.clone();
        marked[4] ^= 1; // the header's modification time, which no reader checks
        std::fs::write(&kept, &marked).unwrap();
        assert_eq!(
            kept_or_compressed(Format::Gzip, &kept_dir, &sha, &bytes).unwrap(),
            marked
        );
        // A copy of other content under that name is not used, and is replaced.
        let other = Format::Gzip.compress(b"other content").unwrap();
        std::fs::write(&kept, &other).unwrap();
        let made = kept_or_compressed(Format::Gzip, &kept_dir, &sha, &bytes).unwrap();
        assert_eq!(gunzip(&made), bytes);
        assert_eq!(std::fs::read(&kept).unwrap(), made);
        // A torn copy (its trailer cut) is not used either.
        std::fs::write(&kept, &packed[..packed.len() - 3]).unwrap();
        assert_eq!(
            gunzip(&kept_or_compressed(Format::Gzip, &kept_dir, &sha, &bytes).unwrap()),
            bytes
        );
    }

    #[test]
    fn an_xz_copy_reads_back_to_its_content_and_is_kept_only_for_it() {
        let dir = tempfile::tempdir().unwrap();
        let kept_dir = dir.path().join("cache/xz");
        let bytes = content();
        let sha = "9".repeat(64);
        let packed = kept_or_compressed(XZ_MODULES, &kept_dir, &sha, &bytes).unwrap();
        assert!(packed.len() < bytes.len() / 10, "{}", packed.len());
        let mut back = vec![];
        lzma_rust2::XzReader::new(&packed[..], false)
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, bytes);
        let kept = kept_dir.join(format!("{sha}.xz"));
        assert_eq!(std::fs::read(&kept).unwrap(), packed);
        // A copy of other content under that name, or a torn one, is made again.
        for bad in [
            XZ_MODULES.compress(b"other").unwrap(),
            packed[..packed.len() - 5].to_vec(),
        ] {
            std::fs::write(&kept, &bad).unwrap();
            assert_eq!(
                kept_or_compressed(XZ_MODULES, &kept_dir, &sha, &bytes).unwrap(),
                packed
            );
        }
    }

    #[test]
    fn a_cache_that_cannot_be_written_costs_only_the_keeping() {
        let dir = tempfile::tempdir().unwrap();
        // A file where the directory would be.
        let blocked = dir.path().join("gzip");
        std::fs::write(&blocked, "").unwrap();
        let bytes = content();
        let packed = kept_or_compressed(Format::Gzip, &blocked, &"f".repeat(64), &bytes).unwrap();
        assert_eq!(gunzip(&packed), bytes);
    }
}
