//! Framing of messages on a session's byte stream.
//!
//! A frame is `u32` big-endian header length, the header as JSON, `u64` big-endian
//! payload length, then the payload bytes. Binary data (modules, files, module
//! output) travels as the raw payload, so nothing is ever base64-encoded inside JSON.

use serde::{Serialize, de::DeserializeOwned};
use std::io::{Read, Write};

/// Largest header accepted (16 MiB): headers are small JSON documents.
pub const MAX_HEADER: u32 = 16 << 20;
/// Largest payload accepted (1 GiB).
pub const MAX_PAYLOAD: u64 = 1 << 30;

/// Errors reading or writing frames.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The stream ended cleanly before a new frame started.
    #[error("the session closed")]
    Closed,
    /// Reading or writing the stream failed.
    #[error("session I/O failed: {0}")]
    Io(#[from] std::io::Error),
    /// A length field was larger than this side accepts.
    #[error("frame too large: {what} of {len} bytes (limit {limit})")]
    TooLarge {
        /// "header" or "payload".
        what: &'static str,
        /// The announced length.
        len: u64,
        /// The limit it exceeded.
        limit: u64,
    },
    /// The header was not the JSON this side expected.
    #[error("malformed frame header: {0}")]
    Json(#[from] serde_json::Error),
}

/// One decoded frame: a typed header and its raw payload.
#[derive(Debug)]
pub struct Frame<H> {
    /// The JSON header, decoded.
    pub header: H,
    /// Raw payload bytes (empty when the message has none).
    pub payload: Vec<u8>,
}

/// Encodes a frame into one buffer, ready for a single write. A header or payload
/// larger than the other side accepts is refused here ([`FrameError::TooLarge`]),
/// before anything is written.
pub fn encode<H: Serialize>(header: &H, payload: &[u8]) -> Result<Vec<u8>, FrameError> {
    let json = serde_json::to_vec(header)?;
    let hlen = u32::try_from(json.len()).unwrap_or(u32::MAX);
    if hlen > MAX_HEADER {
        return Err(FrameError::TooLarge {
            what: "header",
            len: json.len() as u64,
            limit: MAX_HEADER as u64,
        });
    }
    check_payload_len(payload.len() as u64)?;
    let mut out = Vec::with_capacity(4 + json.len() + 8 + payload.len());
    out.extend_from_slice(&hlen.to_be_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(&(payload.len() as u64).to_be_bytes());
    out.extend_from_slice(payload);
    Ok(out)
}

fn check_header_len(len: u32) -> Result<usize, FrameError> {
    if len > MAX_HEADER {
        return Err(FrameError::TooLarge {
            what: "header",
            len: len as u64,
            limit: MAX_HEADER as u64,
        });
    }
    Ok(len as usize)
}

fn check_payload_len(len: u64) -> Result<usize, FrameError> {
    if len > MAX_PAYLOAD {
        return Err(FrameError::TooLarge {
            what: "payload",
            len,
            limit: MAX_PAYLOAD,
        });
    }
    Ok(len as usize)
}

/// What a reader reserves before bytes arrive: memory grows with what is received,
/// not with what a length field announces.
const RESERVE: usize = 64 << 10;

/// Reads exactly `len` bytes.
fn read_announced<R: Read>(r: &mut R, len: usize) -> Result<Vec<u8>, FrameError> {
    let mut buf = Vec::with_capacity(len.min(RESERVE));
    r.take(len as u64).read_to_end(&mut buf)?;
    if buf.len() < len {
        return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
    }
    Ok(buf)
}

/// Writes one frame and flushes (blocking).
pub fn write<H: Serialize, W: Write>(
    w: &mut W,
    header: &H,
    payload: &[u8],
) -> Result<(), FrameError> {
    w.write_all(&encode(header, payload)?)?;
    w.flush()?;
    Ok(())
}

/// Reads one frame (blocking). Returns [`FrameError::Closed`] on a clean end of stream.
pub fn read<H: DeserializeOwned, R: Read>(r: &mut R) -> Result<Frame<H>, FrameError> {
    let mut len4 = [0u8; 4];
    match r.read_exact(&mut len4) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(FrameError::Closed),
        Err(e) => return Err(e.into()),
    }
    let hlen = check_header_len(u32::from_be_bytes(len4))?;
    let json = read_announced(r, hlen)?;
    let mut len8 = [0u8; 8];
    r.read_exact(&mut len8)?;
    let payload = read_announced(r, check_payload_len(u64::from_be_bytes(len8))?)?;
    Ok(Frame {
        header: serde_json::from_slice(&json)?,
        payload,
    })
}

/// Async frame I/O for the controller.
#[cfg(feature = "tokio")]
pub mod asynchronous {
    use super::*;
    use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

    /// Writes one frame and flushes.
    pub async fn write<H: Serialize, W: AsyncWrite + Unpin>(
        w: &mut W,
        header: &H,
        payload: &[u8],
    ) -> Result<(), FrameError> {
        w.write_all(&encode(header, payload)?).await?;
        w.flush().await?;
        Ok(())
    }

    /// Reads exactly `len` bytes, memory growing with what arrives.
    async fn read_announced<R: AsyncRead + Unpin>(
        r: &mut R,
        len: usize,
    ) -> Result<Vec<u8>, FrameError> {
        let mut buf = Vec::with_capacity(len.min(RESERVE));
        r.take(len as u64).read_to_end(&mut buf).await?;
        if buf.len() < len {
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
        }
        Ok(buf)
    }

    /// Reads one frame. Returns [`FrameError::Closed`] on a clean end of stream.
    pub async fn read<H: DeserializeOwned, R: AsyncRead + Unpin>(
        r: &mut R,
    ) -> Result<Frame<H>, FrameError> {
        let mut len4 = [0u8; 4];
        match r.read_exact(&mut len4).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(FrameError::Closed);
            }
            Err(e) => return Err(e.into()),
        }
        let hlen = check_header_len(u32::from_be_bytes(len4))?;
        let json = read_announced(r, hlen).await?;
        let mut len8 = [0u8; 8];
        r.read_exact(&mut len8).await?;
        let payload = read_announced(r, check_payload_len(u64::from_be_bytes(len8))?).await?;
        Ok(Frame {
            header: serde_json::from_slice(&json)?,
            payload,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn round_trip_keeps_header_and_raw_payload() {
        let bytes = encode(&json!({"op": "put-module"}), &[0, 159, 255]).unwrap();
        let frame: Frame<Value> = read(&mut bytes.as_slice()).unwrap();
        assert_eq!(frame.header, json!({"op": "put-module"}));
        assert_eq!(frame.payload, vec![0, 159, 255]);
    }

    #[test]
    fn empty_stream_is_closed_and_truncated_stream_is_io_error() {
        let r: Result<Frame<Value>, _> = read(&mut [].as_slice());
        assert!(matches!(r, Err(FrameError::Closed)));
        let bytes = encode(&json!(1), b"abc").unwrap();
        let r: Result<Frame<Value>, _> = read(&mut &bytes[..bytes.len() - 1]);
        assert!(matches!(r, Err(FrameError::Io(_))));
    }

    #[test]
    fn oversized_header_is_refused_before_allocation() {
        let mut bytes = u32::MAX.to_be_bytes().to_vec();
        bytes.extend_from_slice(b"{}");
        let r: Result<Frame<Value>, _> = read(&mut bytes.as_slice());
        assert!(matches!(
            r,
            Err(FrameError::TooLarge { what: "header", .. })
        ));
    }

    /// A small deterministic generator (splitmix64) for the property test.
    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    #[test]
    fn any_byte_stream_is_read_or_refused_cleanly() {
        let mut seed = 0xf4a3e_u64;
        let mut next = move || splitmix(&mut seed);
        let valid = encode(
            &json!({"op": "run", "id": 1, "args": {"a": [1, 2]}}),
            b"payload",
        )
        .unwrap();
        for i in 0..50_000 {
            let mut bytes = match i % 4 {
                // Noise.
                0 => (0..next() % 48).map(|_| next() as u8).collect::<Vec<u8>>(),
                // A valid frame with a few bytes changed.
                1 => {
                    let mut b = valid.clone();
                    for _ in 0..1 + next() % 3 {
                        let at = (next() % b.len() as u64) as usize;
                        b[at] = next() as u8;
                    }
                    b
                }
                // A valid frame cut short.
                2 => valid[..(next() % valid.len() as u64) as usize].to_vec(),
                // Length fields announcing anything, followed by a little data.
                _ => {
                    let mut b = (next() as u32 >> (next() % 32)).to_be_bytes().to_vec();
                    b.extend_from_slice(b"{}");
                    b.extend_from_slice(&(next() >> (next() % 64)).to_be_bytes());
                    b.extend_from_slice(b"xyz");
                    b
                }
            };
            if i % 7 == 0 {
                bytes.extend_from_slice(&valid);
            }
            match read::<Value, _>(&mut bytes.as_slice()) {
                Ok(frame) => {
                    // Whatever was accepted encodes back to a frame read the same.
                    let again = encode(&frame.header, &frame.payload).unwrap();
                    let back: Frame<Value> = read(&mut again.as_slice()).unwrap();
                    assert_eq!((back.header, back.payload), (frame.header, frame.payload));
                }
                Err(FrameError::TooLarge { len, limit, .. }) => assert!(len > limit),
                Err(e) => assert!(!e.to_string().is_empty()),
            }
        }
    }

    #[test]
    fn frames_beyond_the_limits_are_refused_when_encoded() {
        let big = vec![0u8; MAX_HEADER as usize + 1];
        let e = encode(
            &serde_json::Value::String(String::from_utf8(vec![b'x'; big.len()]).unwrap()),
            &[],
        );
        assert!(matches!(
            e,
            Err(FrameError::TooLarge { what: "header", .. })
        ));
    }
}
