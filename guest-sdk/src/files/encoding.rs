//! [`Encoding`]: the text encodings the built-in modules read files in (`replace`'s
//! and `find`'s `encoding`), named as Python names them.

use crate::Fail;

/// The text encodings the built-in modules read and write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8.
    Utf8,
    /// One byte a character, every byte valid.
    Latin1,
    /// ASCII.
    Ascii,
}

impl Encoding {
    /// The encoding Python calls `name` (`utf-8`, `latin-1`, `ascii` and their
    /// aliases); any other is refused as not carried out, the message naming `module`:
    /// the controller hands the task to ansible-core's module (every codec of
    /// Python's), as policy allows.
    pub fn named(name: &str, module: &str) -> Result<Encoding, Fail> {
        let normal = name.to_ascii_lowercase().replace(['-', '_'], "");
        match normal.as_str() {
            "utf8" => Ok(Encoding::Utf8),
            "latin1" | "iso88591" | "l1" => Ok(Encoding::Latin1),
            "ascii" | "usascii" => Ok(Encoding::Ascii),
            _ => Err(Fail::not_carried_out(format!(
                "encoding {name} is not supported by the built-in {module} (utf-8, latin-1, ascii)"
            ))),
        }
    }

    /// The text of `bytes` (read from `path`, for the message).
    pub fn decode(self, bytes: &[u8], path: &str) -> Result<String, Fail> {
        let bad = || Fail::new(format!("{path} is not valid {}", self.name()));
        match self {
            Encoding::Utf8 => String::from_utf8(bytes.to_vec()).map_err(|_| bad()),
            Encoding::Latin1 => Ok(bytes.iter().map(|&b| char::from(b)).collect()),
            Encoding::Ascii if bytes.is_ascii() => {
                Ok(bytes.iter().map(|&b| char::from(b)).collect())
            }
            Encoding::Ascii => Err(bad()),
        }
    }

    /// How many bytes at the start of `bytes` are valid text (all of them when the
    /// whole is).
    pub fn valid_up_to(self, bytes: &[u8]) -> usize {
        match self {
            Encoding::Utf8 => std::str::from_utf8(bytes).map_or_else(|e| e.valid_up_to(), str::len),
            Encoding::Latin1 => bytes.len(),
            Encoding::Ascii => bytes
                .iter()
                .position(|b| !b.is_ascii())
                .unwrap_or(bytes.len()),
        }
    }

    /// The bytes of `text`; a character the encoding lacks is an error.
    pub fn encode(self, text: &str) -> Result<Vec<u8>, Fail> {
        let limit = match self {
            Encoding::Utf8 => return Ok(text.as_bytes().to_vec()),
            Encoding::Latin1 => 0xff,
            Encoding::Ascii => 0x7f,
        };
        text.chars()
            .map(|c| {
                u8::try_from(u32::from(c))
                    .ok()
                    .filter(|b| u32::from(*b) <= limit)
                    .ok_or_else(|| {
                        Fail::new(format!(
                            "the replaced text has {c:?}, which {} cannot encode",
                            self.name()
                        ))
                    })
            })
            .collect()
    }

    /// Python's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Latin1 => "latin-1",
            Encoding::Ascii => "ascii",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_decoding_and_valid_prefixes() {
        assert_eq!(Encoding::named("UTF_8", "m").unwrap(), Encoding::Utf8);
        assert_eq!(
            Encoding::named("ISO-8859-1", "m").unwrap(),
            Encoding::Latin1
        );
        let refused = Encoding::named("cp1252", "find").unwrap_err();
        assert!(refused.msg().contains("built-in find"), "{refused}");
        // Refused before anything changed: ansible-core's module may carry it out.
        assert_eq!(
            refused.fields().get(sandball_wire::NOT_CARRIED_OUT),
            Some(&serde_json::Value::Bool(true))
        );
        assert_eq!(Encoding::Latin1.decode(b"\xe9", "f").unwrap(), "\u{e9}");
        assert!(Encoding::Utf8.decode(b"a\xff", "f").is_err());
        assert_eq!(Encoding::Utf8.valid_up_to(b"ab\xffc"), 2);
        assert_eq!(Encoding::Ascii.valid_up_to("aé".as_bytes()), 1);
        assert_eq!(Encoding::Latin1.valid_up_to(b"\xff\xfe"), 2);
        assert_eq!(
            Encoding::Ascii.encode("é").unwrap_err().msg(),
            "the replaced text has 'é', which ascii cannot encode"
        );
    }
}
