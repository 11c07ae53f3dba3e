//! gzip for what the controller uploads to nodes over a network (the shim, module
//! components): each content is compressed once per run, keyed by its sha256, however
//! many nodes it goes to, off the async threads. A node checks the sha256 of the
//! uncompressed bytes, so compression changes nothing of what it keeps.

use flate2::Compression;
use flate2::write::GzEncoder;
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, LazyLock, Mutex};
use tokio::sync::OnceCell;

/// The compressed contents of this run, by sha256 (`None`: compressing failed).
type Compressed = HashMap<String, Arc<OnceCell<Option<Arc<Vec<u8>>>>>>;
static COMPRESSED: LazyLock<Mutex<Compressed>> = LazyLock::new(Mutex::default);

/// `bytes` (whose sha256 is `sha256`) gzip-compressed, made once per run; `None` when
/// they could not be (the caller sends them as they are).
pub async fn compressed(sha256: &str, bytes: &[u8]) -> Option<Arc<Vec<u8>>> {
    let cell = COMPRESSED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(sha256.to_string())
        .or_default()
        .clone();
    cell.get_or_init(|| async {
        let owned = bytes.to_vec();
        let packed = tokio::task::spawn_blocking(move || compress(&owned))
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

/// `bytes` as one gzip stream (what `gzip -d` and the shim read).
pub fn compress(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut encoder = GzEncoder::new(Vec::with_capacity(bytes.len() / 3), Compression::default());
    encoder.write_all(bytes)?;
    encoder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[tokio::test]
    async fn an_upload_is_compressed_once_and_decompresses_to_itself() {
        let bytes: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let sha = "c".repeat(64);
        let first = compressed(&sha, &bytes).await.unwrap();
        assert!(first.len() < bytes.len() / 10, "{}", first.len());
        // The same content again is the same compressed copy, not compressed anew.
        let again = compressed(&sha, b"not looked at").await.unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        let mut back = vec![];
        flate2::read::GzDecoder::new(&first[..])
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, bytes);
    }
}
