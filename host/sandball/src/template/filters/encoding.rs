//! Encoding and digest filters: `b64encode`, `b64decode`, `hash`, `checksum`, `md5`,
//! `sha1`, `password_hash`, `to_uuid`. Non-string input is digested as its Python
//! `str()`, as Ansible does.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE};
use md5::Md5;
use minijinja::value::Kwargs;
use minijinja::{Error, ErrorKind, State, Value};
use sha1::Sha1;
use sha2::{Digest, Sha224, Sha256, Sha384, Sha512};

use crate::template::python::text_arg;
use crate::template::undefined::Plugins;

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_filter("b64encode", b64encode);
    env.add_filter("b64decode", b64decode);
    env.add_filter(
        "hash",
        |state: &State, value: &Value, hashtype: Option<String>, kwargs: Kwargs| {
            let hashtype = super::positional_or_named(hashtype, &kwargs, "hashtype")?;
            kwargs.assert_all_used()?;
            hash(state, value, hashtype)
        },
    );
    env.add_filter("checksum", |state: &State, value: &Value| {
        hash(state, value, None)
    });
    env.add_filter("sha1", |state: &State, value: &Value| {
        hash(state, value, None)
    });
    env.add_filter("md5", |state: &State, value: &Value| {
        hash(state, value, Some("md5".into()))
    });
    env.add_filter("password_hash", password_hash);
    env.add_filter("to_uuid", to_uuid);
}

/// `password_hash(hashtype='sha512', salt=None, rounds=None, salt_size=16)`: a crypt(3)
/// hash as Ansible makes it with passlib (see [`crate::template::crypt`]).
fn password_hash(
    state: &State,
    value: &Value,
    hashtype: Option<String>,
    salt: Option<String>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    let secret = text_arg(state, value)?;
    let hashtype = match hashtype {
        Some(h) => h,
        None => kwargs
            .get::<Option<String>>("hashtype")?
            .unwrap_or_else(|| "sha512".into()),
    };
    let salt = match salt {
        Some(s) => Some(s),
        None => kwargs.get::<Option<String>>("salt")?,
    };
    // ansible-core's names (and passlib's) for the schemes it takes.
    const SCHEMES: &[&str] = &[
        "md5",
        "blowfish",
        "sha256",
        "sha512",
        "md5_crypt",
        "bcrypt",
        "sha256_crypt",
        "sha512_crypt",
    ];
    if !SCHEMES.contains(&hashtype.as_str()) {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "{hashtype} is not in the list of supported passlib algorithms: md5, blowfish, sha256, sha512"
            ),
        ));
    }
    let rounds = kwargs.get::<Option<usize>>("rounds")?;
    let salt_size = match kwargs.get::<Option<Value>>("salt_size")? {
        None => None,
        Some(size) => Some(usize::try_from(size).ok().ok_or_else(|| {
            Error::new(ErrorKind::InvalidOperation, "salt_size must be an integer")
        })?),
    };
    if let Some(r) = rounds.filter(|r| *r < 1000) {
        let scheme = hashtype.trim_end_matches("_crypt");
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "Could not hash the secret: {scheme}_crypt: min_desired_rounds ({r}) is too low, must be at least 1000"
            ),
        ));
    }
    if let Some(ident) = kwargs.get::<Option<String>>("ident")? {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("password_hash: ident {ident:?} is for bcrypt, which sandball does not have"),
        ));
    }
    kwargs.assert_all_used()?;
    let salt = salt.or_else(|| salt_size.map(crate::template::crypt::random_salt));
    crate::template::crypt::hash(&secret, &hashtype, salt.as_deref(), rounds)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("password_hash: {e}")))
}

/// The `encoding` and `urlsafe` options of `b64encode`/`b64decode`.
fn b64_options(kwargs: &Kwargs) -> Result<(String, bool), Error> {
    let encoding: Option<String> = kwargs.get("encoding")?;
    let urlsafe: Option<bool> = kwargs.get("urlsafe")?;
    kwargs.assert_all_used()?;
    Ok((
        encoding.unwrap_or_else(|| "utf-8".into()),
        urlsafe.unwrap_or(false),
    ))
}

/// `b64encode(encoding='utf-8', urlsafe=False)`: the text's bytes in that character
/// set, in base64 (the URL-safe alphabet with `urlsafe`).
fn b64encode(state: &State, value: &Value, kwargs: Kwargs) -> Result<String, Error> {
    let (encoding, urlsafe) = b64_options(&kwargs)?;
    let bytes = crate::template::encoding::encode(&text_arg(state, value)?, &encoding)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, e))?;
    Ok(if urlsafe {
        URL_SAFE.encode(bytes)
    } else {
        STANDARD.encode(bytes)
    })
}

/// Python's `b64decode`: characters outside the alphabet (line breaks) are skipped, the
/// padding must be right, and the bytes must be text in `encoding` (UTF-8 by default);
/// `urlsafe` reads the URL-safe alphabet.
fn b64decode(state: &State, value: &Value, kwargs: Kwargs) -> Result<String, Error> {
    let (encoding, urlsafe) = b64_options(&kwargs)?;
    let text = text_arg(state, value)?;
    let (plus, slash) = if urlsafe { ('-', '_') } else { ('+', '/') };
    let cleaned: String = text
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == plus || *c == slash || *c == '=')
        .collect();
    let engine = if urlsafe { &URL_SAFE } else { &STANDARD };
    let bytes = engine.decode(cleaned).map_err(|err| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("b64decode: invalid base64 input: {err}"),
        )
    })?;
    crate::template::encoding::decode(&bytes, &encoding)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("b64decode: {e}")))
}

/// `hash(hashtype='sha1')`: the hex digest of the value.
fn hash(state: &State, value: &Value, hashtype: Option<String>) -> Result<String, Error> {
    let data = text_arg(state, value)?;
    let hashtype = hashtype.unwrap_or_else(|| "sha1".into());
    let digest = match hashtype.to_ascii_lowercase().as_str() {
        "md5" => hex::encode(Md5::digest(&data)),
        "sha1" => hex::encode(Sha1::digest(&data)),
        "sha224" => hex::encode(Sha224::digest(&data)),
        "sha256" => hex::encode(Sha256::digest(&data)),
        "sha384" => hex::encode(Sha384::digest(&data)),
        "sha512" => hex::encode(Sha512::digest(&data)),
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                // Python's hashlib words it so; sandball has md5, sha1 and the sha2 set.
                format!("unsupported hash type {hashtype}"),
            ));
        }
    };
    Ok(digest)
}

/// Ansible's namespace for `to_uuid`.
const UUID_NAMESPACE: &str = "361E6D51-FAEC-444A-9079-341386DA8E2E";

/// `to_uuid(namespace=…)`: the name-based (SHA-1, version 5) UUID of the text in the
/// namespace, as Python's `uuid.uuid5` makes it.
fn to_uuid(state: &State, value: &Value, kwargs: Kwargs) -> Result<String, Error> {
    let name = text_arg(state, value)?;
    let namespace: Option<Value> = kwargs.get("namespace")?;
    kwargs.assert_all_used()?;
    let namespace = match namespace {
        None => UUID_NAMESPACE.to_string(),
        Some(ns) => ns.as_str().map(str::to_string).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "Invalid value '{ns}' for 'namespace': '{}' object has no attribute 'replace'",
                    crate::template::filters::python_type(&ns)
                ),
            )
        })?,
    };
    let digits: String = namespace
        .trim_start_matches("urn:")
        .trim_start_matches("uuid:")
        .trim_matches(|c| c == '{' || c == '}')
        .replace('-', "");
    let bytes = match hex::decode(&digits) {
        Ok(bytes) if bytes.len() == 16 => bytes,
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "Invalid value '{namespace}' for 'namespace': badly formed hexadecimal UUID string"
                ),
            ));
        }
    };
    let mut hasher = Sha1::new();
    hasher.update(&bytes);
    hasher.update(name.as_bytes());
    let mut uuid = hasher.finalize()[..16].to_vec();
    uuid[6] = (uuid[6] & 0x0f) | 0x50;
    uuid[8] = (uuid[8] & 0x3f) | 0x80;
    let hex = hex::encode(uuid);
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

#[cfg(test)]
mod tests {
    use crate::template::filters::testing::{error, eval};
    use serde_json::json;

    #[test]
    fn password_hash_refuses_as_ansible() {
        assert!(
            error("'hey' | password_hash(salt_size=[999])")
                .contains("salt_size must be an integer")
        );
        assert!(error("'hey' | password_hash('msdcc')").contains(
            "msdcc is not in the list of supported passlib algorithms: md5, blowfish, sha256, sha512"
        ));
        assert!(error("'hey' | password_hash(rounds=1)").contains(
            "Could not hash the secret: sha512_crypt: min_desired_rounds (1) is too low, must be at least 1000"
        ));
        assert_eq!(
            eval("'hey' | password_hash('sha256', 'abcdefgh', rounds=5000)"),
            json!("$5$abcdefgh$kV7QWlFv6LXL5/Zvx/J9UIXXNzyDkErJ/gQ.9xAtTq5")
        );
    }

    #[test]
    fn uuids_as_python_makes_them() {
        assert_eq!(
            eval("'example.com' | to_uuid"),
            json!("ae780c3a-a3ab-53c2-bfb4-098da300b3fe")
        );
        assert_eq!(
            eval("'é x' | to_uuid(namespace='{11111111-2222-3333-4444-555555555555}')"),
            json!("4fb8a052-f6b7-5404-904d-599fc567f944")
        );
        assert!(
            error("'x' | to_uuid(namespace=22)").contains("Invalid value '22' for 'namespace'")
        );
    }

    #[test]
    fn base64() {
        assert_eq!(eval("'hello' | b64encode"), json!("aGVsbG8="));
        assert_eq!(eval("'aGVsbG8=' | b64decode"), json!("hello"));
        assert_eq!(
            eval("'Ansible - く\n' | b64encode(encoding='utf-16-le')"),
            json!("QQBuAHMAaQBiAGwAZQAgAC0AIABPMAoA")
        );
        assert_eq!(
            eval("'QQBuAHMAaQBiAGwAZQAgAC0AIABPMAoA' | b64decode(encoding='utf-16-le')"),
            json!("Ansible - \u{304f}\n")
        );
        assert_eq!(
            eval("'https://www.python.org/example-1' | b64encode(urlsafe=True)"),
            json!("aHR0cHM6Ly93d3cucHl0aG9uLm9yZy9leGFtcGxlLTE=")
        );
        assert_eq!(
            eval("'-_8=' | b64decode(urlsafe=True, encoding='latin-1')"),
            json!("\u{fb}\u{ff}")
        );
        assert_eq!(eval("'aGVs\\nbG8=' | b64decode"), json!("hello"));
        assert_eq!(eval("'héllo' | b64encode | b64decode"), json!("héllo"));
        assert!(error("'aGVsbG8' | b64decode").contains("invalid base64"));
        assert!(error("'/w==' | b64decode").contains("can't decode"));
    }

    #[test]
    fn digests() {
        assert_eq!(
            eval("'hello' | hash('md5')"),
            json!("5d41402abc4b2a76b9719d911017c592")
        );
        assert_eq!(
            eval("'hello' | md5"),
            json!("5d41402abc4b2a76b9719d911017c592")
        );
        assert_eq!(
            eval("'hello' | hash"),
            json!("aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d")
        );
        assert_eq!(
            eval("'hello' | sha1"),
            json!("aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d")
        );
        assert_eq!(
            eval("'hello' | checksum"),
            json!("aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d")
        );
        assert_eq!(
            eval("'hello' | hash('sha256')"),
            json!("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
        );
        assert_eq!(eval("123 | md5"), eval("'123' | md5"));
        assert!(error("'x' | hash('whirlpool')").contains("unsupported hash type"));
    }
}
