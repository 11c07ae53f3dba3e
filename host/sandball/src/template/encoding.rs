//! Character sets by their Python codec names, for `template`'s `output_encoding` and
//! the `b64encode`/`b64decode` filters' `encoding`: rendered text becomes the bytes
//! Python's `str.encode(name)` gives (and bytes the text `bytes.decode(name)` gives),
//! and a character the set cannot hold is an error worded as Python words it. UTF-8/16/32, ASCII and
//! Latin-1 are written here; the other sets (`windows-1252`, `iso8859-15`, `koi8_r`,
//! `shift_jis`, `gbk`…) come from `encoding_rs`.

use encoding_rs::{EncoderResult, Encoding};

/// `text` in the character set Python calls `name` (`""` is UTF-8, as in Ansible).
pub fn encode(text: &str, name: &str) -> Result<Vec<u8>, String> {
    let codec = name.trim().to_ascii_lowercase().replace(['-', ' '], "_");
    let utf16 = |big: bool| -> Vec<u8> {
        text.encode_utf16()
            .flat_map(|u| {
                if big {
                    u.to_be_bytes()
                } else {
                    u.to_le_bytes()
                }
            })
            .collect()
    };
    let utf32 = |big: bool| -> Vec<u8> {
        text.chars()
            .flat_map(|c| {
                let c = u32::from(c);
                if big {
                    c.to_be_bytes()
                } else {
                    c.to_le_bytes()
                }
            })
            .collect()
    };
    let with_bom = |bom: &[u8], body: Vec<u8>| [bom, &body].concat();
    Ok(match codec.as_str() {
        "" | "utf_8" | "utf8" | "u8" | "utf" | "cp65001" => text.as_bytes().to_vec(),
        "utf_8_sig" | "utf8_sig" => with_bom(&[0xef, 0xbb, 0xbf], text.as_bytes().to_vec()),
        // Python writes the machine's byte order after a byte-order mark; ours is little.
        "utf_16" | "utf16" | "u16" => with_bom(&[0xff, 0xfe], utf16(false)),
        "utf_16_le" | "utf_16le" => utf16(false),
        "utf_16_be" | "utf_16be" => utf16(true),
        "utf_32" | "utf32" | "u32" => with_bom(&[0xff, 0xfe, 0, 0], utf32(false)),
        "utf_32_le" | "utf_32le" => utf32(false),
        "utf_32_be" | "utf_32be" => utf32(true),
        "ascii" | "us_ascii" | "646" | "us" => below(text, 128, "ascii")?,
        "latin_1" | "latin1" | "latin" | "l1" | "iso8859_1" | "iso_8859_1" | "8859" | "cp819"
        | "iso_ir_100" => below(text, 256, "latin-1")?,
        _ => by_label(text, &codec)?,
    })
}

/// The text `bytes` hold in the character set Python calls `name` (`""` is UTF-8).
pub fn decode(bytes: &[u8], name: &str) -> Result<String, String> {
    let codec = name.trim().to_ascii_lowercase().replace(['-', ' '], "_");
    let undecodable =
        || format!("'{codec}' codec can't decode the bytes: they are not {name} text");
    let units = |width: usize, big: bool| -> Result<Vec<u32>, String> {
        if !bytes.len().is_multiple_of(width) {
            return Err(format!(
                "'{codec}' codec can't decode the bytes: truncated data"
            ));
        }
        Ok(bytes
            .chunks(width)
            .map(|c| {
                let mut v = 0u32;
                for i in 0..width {
                    let b = if big { c[i] } else { c[width - 1 - i] };
                    v = (v << 8) | u32::from(b);
                }
                v
            })
            .collect())
    };
    let utf16 = |big: bool| -> Result<String, String> {
        let units: Vec<u16> = units(2, big)?.into_iter().map(|u| u as u16).collect();
        String::from_utf16(&units).map_err(|_| undecodable())
    };
    let utf32 = |big: bool| -> Result<String, String> {
        units(4, big)?
            .into_iter()
            .map(|u| char::from_u32(u).ok_or_else(undecodable))
            .collect()
    };
    let utf8 = |body: &[u8]| String::from_utf8(body.to_vec()).map_err(|_| undecodable());
    match codec.as_str() {
        "" | "utf_8" | "utf8" | "u8" | "utf" | "cp65001" => utf8(bytes),
        "utf_8_sig" | "utf8_sig" => utf8(bytes.strip_prefix(&[0xef, 0xbb, 0xbf]).unwrap_or(bytes)),
        "utf_16" | "utf16" | "u16" => match bytes {
            [0xfe, 0xff, rest @ ..] => decode(rest, "utf-16-be"),
            [0xff, 0xfe, rest @ ..] => decode(rest, "utf-16-le"),
            _ => utf16(false),
        },
        "utf_16_le" | "utf_16le" => utf16(false),
        "utf_16_be" | "utf_16be" => utf16(true),
        "utf_32" | "utf32" | "u32" => match bytes {
            [0, 0, 0xfe, 0xff, rest @ ..] => decode(rest, "utf-32-be"),
            [0xff, 0xfe, 0, 0, rest @ ..] => decode(rest, "utf-32-le"),
            _ => utf32(false),
        },
        "utf_32_le" | "utf_32le" => utf32(false),
        "utf_32_be" | "utf_32be" => utf32(true),
        "ascii" | "us_ascii" | "646" | "us" if bytes.is_ascii() => {
            Ok(bytes.iter().map(|b| char::from(*b)).collect())
        }
        "ascii" | "us_ascii" | "646" | "us" => Err(undecodable()),
        "latin_1" | "latin1" | "latin" | "l1" | "iso8859_1" | "iso_8859_1" | "8859" | "cp819"
        | "iso_ir_100" => Ok(bytes.iter().map(|b| char::from(*b)).collect()),
        _ => {
            let encoding = Encoding::for_label(codec.replace('_', "-").as_bytes())
                .ok_or_else(|| format!("unknown encoding: {codec}"))?;
            encoding
                .decode_without_bom_handling_and_without_replacement(bytes)
                .map(|text| text.into_owned())
                .ok_or_else(undecodable)
        }
    }
}

/// `text` as one byte per character, each below `limit` (ASCII, Latin-1).
fn below(text: &str, limit: u32, codec: &str) -> Result<Vec<u8>, String> {
    text.chars()
        .enumerate()
        .map(|(at, c)| {
            u8::try_from(u32::from(c))
                .ok()
                .filter(|b| u32::from(*b) < limit)
                .ok_or_else(|| unencodable(codec, c, at, &format!("ordinal not in range({limit})")))
        })
        .collect()
}

/// `text` in a character set `encoding_rs` knows by the label `codec` names.
fn by_label(text: &str, codec: &str) -> Result<Vec<u8>, String> {
    let unknown = || format!("unknown encoding: {codec}");
    let encoding = Encoding::for_label(codec.replace('_', "-").as_bytes()).ok_or_else(unknown)?;
    // Labels of sets encoding_rs can only read (UTF-16 aliases, "replacement").
    if encoding.output_encoding() != encoding {
        return Err(unknown());
    }
    let mut encoder = encoding.new_encoder();
    let mut out = Vec::with_capacity(
        encoder
            .max_buffer_length_from_utf8_without_replacement(text.len())
            .unwrap_or(text.len() * 4),
    );
    let (result, read) = encoder.encode_from_utf8_to_vec_without_replacement(text, &mut out, true);
    match result {
        EncoderResult::InputEmpty => Ok(out),
        EncoderResult::Unmappable(c) => {
            let at = text[..read - c.len_utf8()].chars().count();
            Err(if encoding.is_single_byte() {
                unencodable("charmap", c, at, "character maps to <undefined>")
            } else {
                unencodable(codec, c, at, "illegal multibyte sequence")
            })
        }
        // The buffer was sized for the worst case.
        EncoderResult::OutputFull => Err(format!("the text is too long to encode as {codec}")),
    }
}

/// Python's words for a character `codec` cannot hold.
fn unencodable(codec: &str, c: char, at: usize, why: &str) -> String {
    let code = u32::from(c);
    let shown = match code {
        0..=0xff => format!("\\x{code:02x}"),
        0x100..=0xffff => format!("\\u{code:04x}"),
        _ => format!("\\U{code:08x}"),
    };
    format!("'{codec}' codec can't encode character '{shown}' in position {at}: {why}")
}

#[cfg(test)]
mod tests {
    use super::encode;

    const TEXT: &str = "café € ok\n";

    #[test]
    fn writes_python_codecs_by_their_names() {
        assert_eq!(encode(TEXT, "").unwrap(), TEXT.as_bytes());
        assert_eq!(encode(TEXT, "UTF-8").unwrap(), TEXT.as_bytes());
        assert_eq!(encode("é", "utf-8-sig").unwrap(), b"\xef\xbb\xbf\xc3\xa9");
        assert_eq!(encode("a€", "utf-16").unwrap(), b"\xff\xfea\x00\xac\x20");
        assert_eq!(encode("a€", "UTF_16_BE").unwrap(), b"\x00a\x20\xac");
        assert_eq!(
            encode("a", "utf-32").unwrap(),
            b"\xff\xfe\x00\x00a\x00\x00\x00"
        );
        assert_eq!(encode("a", "utf_32_be").unwrap(), b"\x00\x00\x00a");
        assert_eq!(encode("é", "latin-1").unwrap(), b"\xe9");
        assert_eq!(encode("é€", "windows-1252").unwrap(), b"\xe9\x80");
        assert_eq!(encode("é€", "cp1252").unwrap(), b"\xe9\x80");
        assert_eq!(encode("é€", "iso8859-15").unwrap(), b"\xe9\xa4");
        assert_eq!(encode("ж", "koi8_r").unwrap(), b"\xd6");
        assert_eq!(encode("日本", "shift_jis").unwrap(), b"\x93\xfa\x96\x7b");
    }

    #[test]
    fn refuses_what_the_set_cannot_hold_in_pythons_words() {
        let e = |name| encode(TEXT, name).unwrap_err();
        assert_eq!(
            e("latin-1"),
            "'latin-1' codec can't encode character '\\u20ac' in position 5: ordinal not in range(256)"
        );
        assert_eq!(
            e("ascii"),
            "'ascii' codec can't encode character '\\xe9' in position 3: ordinal not in range(128)"
        );
        assert_eq!(
            e("shift_jis"),
            "'shift_jis' codec can't encode character '\\xe9' in position 3: illegal multibyte sequence"
        );
        assert_eq!(
            encode("a😀", "iso8859-15").unwrap_err(),
            "'charmap' codec can't encode character '\\U0001f600' in position 1: character maps to <undefined>"
        );
        assert_eq!(e("nope"), "unknown encoding: nope");
        assert_eq!(e("replacement"), "unknown encoding: replacement");
    }
}
