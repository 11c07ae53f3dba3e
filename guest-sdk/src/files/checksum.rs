//! File checksums: Ansible's `checksum` (sha1, hex) and the digests `stat` offers.

use sha2::Digest;
use std::fmt::Write as _;
use std::io::{self, Read};
use std::path::Path;
use std::str::FromStr;

/// A digest algorithm of `checksum_algorithm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashAlgorithm {
    /// MD5.
    Md5,
    /// SHA-1 (Ansible's default checksum).
    Sha1,
    /// SHA-224.
    Sha224,
    /// SHA-256.
    Sha256,
    /// SHA-384.
    Sha384,
    /// SHA-512.
    Sha512,
}

impl FromStr for HashAlgorithm {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        Ok(match name {
            "md5" => HashAlgorithm::Md5,
            "sha1" => HashAlgorithm::Sha1,
            "sha224" => HashAlgorithm::Sha224,
            "sha256" => HashAlgorithm::Sha256,
            "sha384" => HashAlgorithm::Sha384,
            "sha512" => HashAlgorithm::Sha512,
            other => {
                return Err(format!(
                    "unknown checksum algorithm {other}: use md5, sha1, sha224, sha256, sha384 or sha512"
                ));
            }
        })
    }
}

fn hex_digest<D: Digest>(mut reader: impl Read) -> io::Result<String> {
    let mut hasher = D::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    let mut out = String::new();
    for byte in hasher.finalize() {
        let _ = write!(out, "{byte:02x}");
    }
    Ok(out)
}

/// Hex digest of everything `reader` yields.
pub fn digest_reader(reader: impl Read, algorithm: HashAlgorithm) -> io::Result<String> {
    match algorithm {
        HashAlgorithm::Md5 => hex_digest::<md5::Md5>(reader),
        HashAlgorithm::Sha1 => hex_digest::<sha1::Sha1>(reader),
        HashAlgorithm::Sha224 => hex_digest::<sha2::Sha224>(reader),
        HashAlgorithm::Sha256 => hex_digest::<sha2::Sha256>(reader),
        HashAlgorithm::Sha384 => hex_digest::<sha2::Sha384>(reader),
        HashAlgorithm::Sha512 => hex_digest::<sha2::Sha512>(reader),
    }
}

/// Hex digest of a file's content.
pub fn digest_file(path: impl AsRef<Path>, algorithm: HashAlgorithm) -> io::Result<String> {
    digest_reader(std::fs::File::open(path)?, algorithm)
}

/// Ansible's `checksum` of a file: SHA-1, hex.
pub fn sha1_file(path: impl AsRef<Path>) -> io::Result<String> {
    digest_file(path, HashAlgorithm::Sha1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests_of_abc() {
        let cases = [
            (HashAlgorithm::Md5, "900150983cd24fb0d6963f7d28e17f72"),
            (
                HashAlgorithm::Sha1,
                "a9993e364706816aba3e25717850c26c9cd0d89d",
            ),
            (
                HashAlgorithm::Sha224,
                "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7",
            ),
            (
                HashAlgorithm::Sha256,
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            ),
            (
                HashAlgorithm::Sha384,
                "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7",
            ),
            (
                HashAlgorithm::Sha512,
                "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
            ),
        ];
        for (alg, hex) in cases {
            assert_eq!(digest_reader(&b"abc"[..], alg).unwrap(), hex, "{alg:?}");
        }
        assert!("crc32".parse::<HashAlgorithm>().is_err());
        assert_eq!("sha256".parse(), Ok(HashAlgorithm::Sha256));
    }

    #[test]
    fn sha1_of_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"hello\n").unwrap();
        assert_eq!(
            sha1_file(&p).unwrap(),
            "f572d396fae9206628714fb2ce00f72e94f2258f"
        );
        assert!(sha1_file(dir.path().join("missing")).is_err());
    }
}
