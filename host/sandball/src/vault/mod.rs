//! Ansible Vault, format 1.1 and 1.2 (`$ANSIBLE_VAULT;1.2;AES256;label`), as
//! ansible-vault writes it: the body is hex of `hex(salt)\nhex(hmac)\nhex(ciphertext)`;
//! PBKDF2-HMAC-SHA256 (10,000 rounds) turns the password and salt into an AES-256 key,
//! an HMAC-SHA256 key and a CTR counter block; the HMAC covers the ciphertext; the
//! plaintext is PKCS#7-padded. Encrypted files (vars files, `group_vars`, `host_vars`,
//! role vars) and `!vault` values are opened with the passwords the command line gave
//! ([`set_secrets`]): `--vault-password-file`, `--vault-id`, `--ask-vault-pass`,
//! `ANSIBLE_VAULT_PASSWORD_FILE`. Decrypted text is never logged.

use aes::Aes256;
use cipher::{KeyIvInit, StreamCipher};
use hmac::{KeyInit, Mac};
use std::path::Path;
use std::sync::OnceLock;

type Sha256 = sha2_11::Sha256;
type HmacSha256 = hmac::Hmac<Sha256>;
type Aes256Ctr = ctr::Ctr128BE<Aes256>;

/// The header every vault text starts with.
pub const HEADER: &str = "$ANSIBLE_VAULT;";

/// PBKDF2 rounds ansible-vault uses.
const ROUNDS: u32 = 10_000;

/// A password and the vault id (label) it is for.
#[derive(Clone)]
pub struct Secret {
    /// The vault id (`default` when none was given).
    pub label: String,
    /// The password.
    pub password: Vec<u8>,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret({}, ********)", self.label)
    }
}

/// Why a vault text could not be opened or made.
#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    /// No password was given.
    #[error("Attempting to decrypt but no vault secrets found")]
    NoSecrets,
    /// The text is not a vault text sandball reads.
    #[error("not a vault text sandball can read: {0}")]
    Format(String),
    /// No password given opens it.
    #[error("Decryption failed (no vault secrets were found that could decrypt)")]
    WrongPassword,
    /// A password source could not be read.
    #[error("cannot read the vault password from {source_name}: {why}")]
    Password {
        /// The file or program.
        source_name: String,
        /// Why.
        why: String,
    },
}

static SECRETS: OnceLock<Vec<Secret>> = OnceLock::new();

/// What was decrypted in this run, to be masked wherever it would be shown (longest
/// first, so a secret holding another is masked whole).
static DECRYPTED: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// What a masked secret is shown as.
pub const MASK: &str = "********";

/// Texts shorter than this are not masked: a secret of one to three characters would
/// take those characters out of every line.
const MASKED_FROM: usize = 4;

/// Remembers decrypted texts so that they are never shown.
pub(crate) fn remember<'a>(texts: impl IntoIterator<Item = &'a str>) {
    let mut known = DECRYPTED.write().unwrap_or_else(|e| e.into_inner());
    for t in texts {
        let t = t.trim();
        if t.chars().count() >= MASKED_FROM && !known.iter().any(|k| k == t) {
            known.push(t.to_string());
        }
    }
    known.sort_by_key(|k| std::cmp::Reverse(k.len()));
}

/// `text` with every decrypted secret of the run replaced by [`MASK`].
pub fn mask(text: &str) -> std::borrow::Cow<'_, str> {
    let known = DECRYPTED.read().unwrap_or_else(|e| e.into_inner());
    if !known.iter().any(|k| text.contains(k.as_str())) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = text.to_string();
    for k in known.iter() {
        out = out.replace(k.as_str(), MASK);
    }
    std::borrow::Cow::Owned(out)
}

/// Whether anything was decrypted in this run (so that output must be masked).
pub fn any_decrypted() -> bool {
    !DECRYPTED
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .is_empty()
}

/// Sets the passwords of the run (once, before anything is loaded).
pub fn set_secrets(secrets: Vec<Secret>) {
    let _ = SECRETS.set(secrets);
}

/// The passwords of the run.
fn secrets() -> &'static [Secret] {
    SECRETS.get().map(Vec::as_slice).unwrap_or_default()
}

/// Whether a text is vault-encrypted.
pub fn is_vault(text: &str) -> bool {
    text.trim_start().starts_with(HEADER)
}

/// A controller file's content, decrypted with the run's passwords when it is
/// vault-encrypted (`None` when it is not: use the file as it is), for the actions
/// that send files (`copy`, `assemble`: their `decrypt` option).
pub fn decrypted_file(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(HEADER.len() + 8);
    std::fs::File::open(path)?
        .take((HEADER.len() + 8) as u64)
        .read_to_end(&mut head)?;
    if !is_vault(&String::from_utf8_lossy(&head)) {
        return Ok(None);
    }
    decrypted_content(&std::fs::read(path)?, path)
}

/// As [`decrypted`], for a file's content that may be shown (a diff): each of its
/// lines is remembered as a secret.
pub fn decrypted_content(bytes: &[u8], path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    let plain = decrypted(bytes, path)?;
    if let Some(text) = plain.as_deref().and_then(|p| std::str::from_utf8(p).ok()) {
        remember(text.lines());
    }
    Ok(plain)
}

/// The content `bytes` of the file `path`, decrypted with the run's passwords when it is
/// vault-encrypted (`None` when it is not).
pub(crate) fn decrypted(bytes: &[u8], path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) if is_vault(text) => text,
        _ => return Ok(None),
    };
    decrypt(text, secrets())
        .map(Some)
        .map_err(|e| std::io::Error::other(format!("{e} for {}", path.display())))
}

/// A `!vault` value decrypted with the run's passwords.
pub fn decrypt_value(text: &str) -> Result<String, VaultError> {
    let plain = decrypt(text, secrets())?;
    let plain =
        String::from_utf8(plain).map_err(|_| VaultError::Format("the value is not text".into()))?;
    remember([plain.as_str()]);
    Ok(plain)
}

/// The three derived pieces: AES key, HMAC key, counter block.
fn derive(password: &[u8], salt: &[u8]) -> ([u8; 32], [u8; 32], [u8; 16]) {
    let mut out = [0u8; 80];
    pbkdf2::pbkdf2_hmac::<Sha256>(password, salt, ROUNDS, &mut out);
    let mut key = [0u8; 32];
    let mut mac = [0u8; 32];
    let mut iv = [0u8; 16];
    key.copy_from_slice(&out[..32]);
    mac.copy_from_slice(&out[32..64]);
    iv.copy_from_slice(&out[64..]);
    (key, mac, iv)
}

/// Decrypts a vault text with the first secret that opens it (the one of its label
/// first).
pub fn decrypt(text: &str, secrets: &[Secret]) -> Result<Vec<u8>, VaultError> {
    if secrets.is_empty() {
        return Err(VaultError::NoSecrets);
    }
    let mut lines = text.trim().lines();
    let header = lines.next().unwrap_or_default().trim();
    let parts: Vec<&str> = header.split(';').collect();
    match parts.as_slice() {
        ["$ANSIBLE_VAULT", "1.1" | "1.2", "AES256", ..] => {}
        _ => return Err(VaultError::Format(format!("unknown header '{header}'"))),
    }
    let label = parts.get(3).copied();
    let body: String = lines.flat_map(|l| l.trim().chars()).collect();
    let inner = hex::decode(&body).map_err(|e| VaultError::Format(e.to_string()))?;
    let inner = String::from_utf8(inner).map_err(|e| VaultError::Format(e.to_string()))?;
    let fields: Vec<&str> = inner.split('\n').collect();
    let [salt, tag, data] = fields.as_slice() else {
        return Err(VaultError::Format(
            "the body does not have three parts".into(),
        ));
    };
    let salt = hex::decode(salt).map_err(|e| VaultError::Format(e.to_string()))?;
    let tag = hex::decode(tag).map_err(|e| VaultError::Format(e.to_string()))?;
    let data = hex::decode(data).map_err(|e| VaultError::Format(e.to_string()))?;
    let mut ordered: Vec<&Secret> = secrets
        .iter()
        .filter(|s| Some(s.label.as_str()) == label)
        .collect();
    ordered.extend(secrets.iter().filter(|s| Some(s.label.as_str()) != label));
    for secret in ordered {
        let (key, mac_key, iv) = derive(&secret.password, &salt);
        let Ok(mut mac) = <HmacSha256 as KeyInit>::new_from_slice(&mac_key) else {
            continue;
        };
        mac.update(&data);
        if mac.verify_slice(&tag).is_err() {
            continue;
        }
        let mut plain = data.clone();
        Aes256Ctr::new(&key.into(), &iv.into()).apply_keystream(&mut plain);
        return unpad(plain);
    }
    Err(VaultError::WrongPassword)
}

/// PKCS#7 padding removed.
fn unpad(mut plain: Vec<u8>) -> Result<Vec<u8>, VaultError> {
    let n = plain.last().copied().unwrap_or(0) as usize;
    if n == 0
        || n > 16
        || n > plain.len()
        || !plain[plain.len() - n..].iter().all(|b| *b as usize == n)
    {
        return Err(VaultError::Format("bad padding".into()));
    }
    plain.truncate(plain.len() - n);
    Ok(plain)
}

/// Encrypts `plain` as ansible-vault does (format 1.1, or 1.2 with a label other than
/// `default`).
pub fn encrypt(plain: &[u8], secret: &Secret) -> String {
    let salt: [u8; 32] = rand::random();
    encrypt_salted(plain, secret, &salt)
}

/// [`encrypt`] with the given salt (the `vault` filter's `salt`): the same text, the same
/// password and salt give the same vault text.
pub fn encrypt_salted(plain: &[u8], secret: &Secret, salt: &[u8]) -> String {
    let (key, mac_key, iv) = derive(&secret.password, salt);
    let pad = 16 - plain.len() % 16;
    let mut data = plain.to_vec();
    data.extend(std::iter::repeat_n(pad as u8, pad));
    Aes256Ctr::new(&key.into(), &iv.into()).apply_keystream(&mut data);
    let mut tag = Vec::new();
    if let Ok(mut mac) = <HmacSha256 as KeyInit>::new_from_slice(&mac_key) {
        mac.update(&data);
        tag = mac.finalize().into_bytes().to_vec();
    }
    let inner = format!(
        "{}\n{}\n{}",
        hex::encode(salt),
        hex::encode(tag),
        hex::encode(&data)
    );
    let body = hex::encode(inner.as_bytes());
    let header = if secret.label == "default" {
        "$ANSIBLE_VAULT;1.1;AES256".to_string()
    } else {
        format!("$ANSIBLE_VAULT;1.2;AES256;{}", secret.label)
    };
    let mut out = header;
    for chunk in body.as_bytes().chunks(80) {
        out.push('\n');
        out.push_str(&String::from_utf8_lossy(chunk));
    }
    out.push('\n');
    out
}

/// A password from a file, or from the program it is when it is executable (its
/// standard output), trailing newline removed.
pub fn password_from(path: &Path) -> Result<Vec<u8>, VaultError> {
    use std::os::unix::fs::PermissionsExt;
    let err = |why: String| VaultError::Password {
        source_name: path.display().to_string(),
        why,
    };
    let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
    let raw = if meta.permissions().mode() & 0o111 != 0 {
        // The script the path names, not a program of that name on PATH.
        let script = std::path::absolute(path).map_err(|e| err(e.to_string()))?;
        let out = std::process::Command::new(script)
            .envs(crate::config::settings().from_file())
            .output()
            .map_err(|e| err(e.to_string()))?;
        if !out.status.success() {
            return Err(err(format!("it exited with {}", out.status)));
        }
        out.stdout
    } else {
        std::fs::read(path).map_err(|e| err(e.to_string()))?
    };
    let text = String::from_utf8_lossy(&raw);
    let password = text.trim_end_matches(['\r', '\n']).as_bytes().to_vec();
    if password.is_empty() {
        return Err(err("it is empty".into()));
    }
    Ok(password)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(label: &str, pw: &str) -> Secret {
        Secret {
            label: label.into(),
            password: pw.as_bytes().to_vec(),
        }
    }

    #[test]
    fn encrypts_and_decrypts_and_refuses_the_wrong_password() {
        let s = secret("default", "pw");
        let text = encrypt(b"a: 1\n", &s);
        assert!(text.starts_with("$ANSIBLE_VAULT;1.1;AES256\n"));
        assert_eq!(decrypt(&text, std::slice::from_ref(&s)).unwrap(), b"a: 1\n");
        assert!(matches!(
            decrypt(&text, &[secret("default", "other")]),
            Err(VaultError::WrongPassword)
        ));
        assert!(matches!(decrypt(&text, &[]), Err(VaultError::NoSecrets)));
        let labelled = encrypt(b"x", &secret("prod", "p2"));
        assert!(labelled.starts_with("$ANSIBLE_VAULT;1.2;AES256;prod\n"));
        assert_eq!(
            decrypt(&labelled, &[secret("dev", "no"), secret("prod", "p2")]).unwrap(),
            b"x"
        );
    }
}
