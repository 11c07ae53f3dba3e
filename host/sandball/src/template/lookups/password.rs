//! The `password` lookup: a password kept in a file on the controller, made at random
//! the first time, hashed with a kept salt when `encrypt` asks.

use serde_json::Value as Json;

use super::{LookupContext, LookupError, Options, text, texts};

/// `password`: see [`kept_password`].
pub(super) fn password(
    terms: &[Json],
    _options: &Options,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    let kept: Result<Vec<Json>, String> =
        texts(terms).iter().map(|t| kept_password(t, ctx)).collect();
    Ok(kept?)
}

/// `password`: the password kept in a file on the controller (made with `length`
/// characters of `chars` when the file does not exist yet; `/dev/null` keeps nothing).
/// With `encrypt` (a hash scheme) it is returned hashed, with a salt kept beside it in
/// the file (`PASSWORD salt=SALT`) so that the hash stays the same from run to run.
fn kept_password(term: &str, ctx: &dyn LookupContext) -> Result<Json, String> {
    let mut words = term.split_whitespace();
    let path = words.next().unwrap_or("/dev/null").to_string();
    let mut length = 20usize;
    let mut chars = String::new();
    let mut encrypt = None;
    for w in words {
        match w.split_once('=') {
            Some(("length", n)) => {
                length = n
                    .parse()
                    .map_err(|_| format!("password: length must be a number, got {n}"))?;
            }
            Some(("chars", set)) => {
                for part in set.split(',') {
                    chars.push_str(match part {
                        "ascii_letters" => "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                        "ascii_lowercase" => "abcdefghijklmnopqrstuvwxyz",
                        "ascii_uppercase" => "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                        "digits" => "0123456789",
                        "hexdigits" => "0123456789abcdefABCDEF",
                        "punctuation" => "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
                        other => other,
                    });
                }
            }
            Some(("encrypt", scheme)) => encrypt = Some(scheme.to_string()),
            Some((other, _)) => return Err(format!("password: unknown option {other}")),
            None => return Err(format!("password: cannot read '{w}'")),
        }
    }
    if chars.is_empty() {
        chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,:-_".into();
    }
    let file = if path == "/dev/null" || std::path::Path::new(&path).is_absolute() {
        std::path::PathBuf::from(&path)
    } else {
        let base = ctx
            .var("playbook_dir")
            .map(|v| text(&v))
            .unwrap_or_else(|| ".".into());
        std::path::Path::new(&base).join(&path)
    };
    let kept = if path == "/dev/null" {
        None
    } else {
        std::fs::read_to_string(&file).ok()
    };
    let (plain, salt) = match &kept {
        Some(existing) => {
            let line = existing.lines().next().unwrap_or_default();
            match line.split_once(" salt=") {
                Some((pw, salt)) => (pw.to_string(), Some(salt.trim().to_string())),
                None => (line.to_string(), None),
            }
        }
        None => {
            use rand::seq::IndexedRandom;
            let pool: Vec<char> = chars.chars().collect();
            let mut rng = rand::rng();
            let made: String = (0..length)
                .filter_map(|_| pool.choose(&mut rng).copied())
                .collect();
            (made, None)
        }
    };
    let Some(scheme) = encrypt else {
        if kept.is_none() && path != "/dev/null" {
            keep_password(&file, &format!("{plain}\n"))?;
        }
        return Ok(Json::String(plain));
    };
    let salt = match salt {
        Some(s) => s,
        None => {
            let s = crate::template::crypt::random_salt(8);
            if path != "/dev/null" {
                keep_password(&file, &format!("{plain} salt={s}\n"))?;
            }
            s
        }
    };
    crate::template::crypt::hash(&plain, &scheme, Some(&salt), None)
        .map(Json::String)
        .map_err(|e| format!("password: {e}"))
}

/// Writes the `password` lookup's file (its directory made first).
fn keep_password(file: &std::path::Path, text: &str) -> Result<(), String> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("password: cannot make {}: {e}", dir.display()))?;
    }
    write_private(file, text).map_err(|e| format!("password: cannot write {}: {e}", file.display()))
}

/// Writes a secret file readable by its owner only, atomically.
fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".sandball-")
        .tempfile_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
