//! Password hashes in crypt(3) form, as Ansible makes them with passlib: SHA-512-crypt
//! (`$6$`) and SHA-256-crypt (`$5$`), with passlib's default rounds written out. One
//! piece for the `password_hash` filter, `vars_prompt`'s `encrypt` and the `password`
//! lookup's `encrypt`.

use sha_crypt::{Sha256Params, Sha512Params, sha256_crypt_b64, sha512_crypt_b64};

/// The characters a generated salt is made of (crypt's alphabet).
const SALT_CHARS: &[u8] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A scheme's crypt identifier and the rounds passlib uses when none are given.
fn scheme(name: &str) -> Result<(&'static str, usize), String> {
    match name {
        "sha512" | "sha512_crypt" => Ok(("6", 656_000)),
        "sha256" | "sha256_crypt" => Ok(("5", 535_000)),
        "md5" | "md5_crypt" | "blowfish" | "bcrypt" => Err(format!(
            "the {name} hash scheme is not supported by sandball: use sha512 (the default) or sha256"
        )),
        other => Err(format!(
            "{other} is not a hash scheme sandball knows: use sha512 (the default) or sha256"
        )),
    }
}

/// A random salt of `size` characters from crypt's alphabet.
pub fn random_salt(size: usize) -> String {
    (0..size)
        .map(|_| char::from(SALT_CHARS[rand::random_range(0..SALT_CHARS.len())]))
        .collect()
}

/// Hashes `secret` with the scheme (`sha512`, `sha512_crypt`, `sha256`,
/// `sha256_crypt`), `salt` (a random one of 16 characters when `None`) and `rounds`
/// (passlib's default when `None`).
pub fn hash(
    secret: &str,
    scheme_name: &str,
    salt: Option<&str>,
    rounds: Option<usize>,
) -> Result<String, String> {
    let (id, default_rounds) = scheme(scheme_name)?;
    let salt = match salt {
        Some(s) => {
            if s.is_empty() || !s.bytes().all(|b| SALT_CHARS.contains(&b)) {
                return Err(format!(
                    "invalid salt {s:?}: a salt is made of the characters ./0-9A-Za-z"
                ));
            }
            // crypt uses the first 16 characters.
            s.chars().take(16).collect()
        }
        None => random_salt(16),
    };
    let rounds = rounds.unwrap_or(default_rounds);
    let bad_rounds = |_| format!("invalid rounds {rounds}: between 1000 and 999999999");
    let digest = if id == "6" {
        let params = Sha512Params::new(rounds).map_err(bad_rounds)?;
        sha512_crypt_b64(secret.as_bytes(), salt.as_bytes(), &params)
    } else {
        let params = Sha256Params::new(rounds).map_err(bad_rounds)?;
        sha256_crypt_b64(secret.as_bytes(), salt.as_bytes(), &params)
    }
    .map_err(|e| format!("cannot hash the secret: {e:?}"))?;
    // crypt's own default number of rounds is not written, as passlib does not write it.
    Ok(if rounds == 5000 {
        format!("${id}${salt}${digest}")
    } else {
        format!("${id}$rounds={rounds}${salt}${digest}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_those_of_crypt_and_passlib() {
        // Python's crypt.crypt('secret', '$6$rounds=10000$mysalt') and passlib's.
        assert_eq!(
            hash("secret", "sha512", Some("mysalt"), Some(10_000)).unwrap(),
            "$6$rounds=10000$mysalt$9XTP7570fxVN/uTspSrH6kRPdR4KKGzGz7.TmJjDYGrKSwZuavW/3YaLur8JX6WP75Czcxa.megIO0lKreY0R."
        );
        assert_eq!(
            hash("secret", "sha256_crypt", Some("mysalt"), Some(535_000)).unwrap(),
            "$5$rounds=535000$mysalt$GnEktJhWXRuwViyPsEWK9s63HYW1GqXFqU5SdKDqol6"
        );
        let random = hash("secret", "sha512", None, Some(1000)).unwrap();
        assert!(random.starts_with("$6$rounds=1000$"), "{random}");
        assert_eq!(random.len(), "$6$rounds=1000$".len() + 16 + 1 + 86);
    }

    #[test]
    fn unknown_schemes_and_bad_salts_are_refused() {
        assert!(hash("s", "md5", None, None).unwrap_err().contains("sha512"));
        assert!(
            hash("s", "rot13", None, None)
                .unwrap_err()
                .contains("rot13")
        );
        assert!(
            hash("s", "sha512", Some("my$alt"), Some(1000))
                .unwrap_err()
                .contains("invalid salt")
        );
        assert!(
            hash("s", "sha512", Some("ab"), Some(10))
                .unwrap_err()
                .contains("rounds")
        );
    }
}
