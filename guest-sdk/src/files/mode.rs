//! Permission modes as file arguments give them: a number (`0o644`, which YAML's
//! `0644` already is), octal text (`"0644"`, `"644"`, `"0o644"`) or symbolic text
//! (`"u=rw,g=r,o="`, `"u+x,go-w"`, `"a+X"`), resolved against the file's current mode.

use serde_json::Value;

/// Why a mode argument cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModeError {
    /// Neither octal nor valid symbolic text.
    #[error("mode must be in octal or symbolic form")]
    NotAMode {
        /// What was wrong with it.
        details: String,
    },
    /// More than permission bits (above `0o7777`).
    #[error("Invalid mode supplied, only permission info is allowed")]
    TooLarge {
        /// The mode given.
        mode: u64,
    },
}

impl ModeError {
    /// The `details` field of the failed result.
    pub fn details(&self) -> Value {
        match self {
            ModeError::NotAMode { details } => Value::String(details.clone()),
            ModeError::TooLarge { mode } => Value::from(*mode),
        }
    }
}

/// Reads an octal mode: an integer as is, or octal digits with an optional `0o`.
fn octal(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => {
            let t = s.trim();
            let digits = t
                .strip_prefix("0o")
                .or_else(|| t.strip_prefix("0O"))
                .unwrap_or(t);
            if digits.is_empty() || !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
                return None;
            }
            u64::from_str_radix(digits, 8).ok()
        }
        _ => None,
    }
}

/// The mode `value` asks for, given the file's `current` permission bits and whether
/// it is a directory. `umask` is read only for symbolic clauses without a user part
/// (`+x`), whose bits the umask filters.
pub fn resolve_mode(
    value: &Value,
    current: u32,
    is_dir: bool,
    umask: impl Fn() -> u32,
) -> Result<u32, ModeError> {
    let mode = match (octal(value), value) {
        (Some(m), _) => m,
        (None, Value::String(s)) => u64::from(
            symbolic_mode(current, is_dir, s, umask)
                .map_err(|details| ModeError::NotAMode { details })?,
        ),
        (None, other) => {
            return Err(ModeError::NotAMode {
                details: format!("{other} is not a permission mode"),
            });
        }
    };
    if mode > 0o7777 {
        return Err(ModeError::TooLarge { mode });
    }
    Ok(mode as u32)
}

const SETUID: u32 = 0o4000;
const SETGID: u32 = 0o2000;
const STICKY: u32 = 0o1000;

/// Applies a symbolic mode (`chmod(1)` syntax) to `current`.
pub fn symbolic_mode(
    current: u32,
    is_dir: bool,
    spec: &str,
    umask: impl Fn() -> u32,
) -> Result<u32, String> {
    let mut mode = current & 0o7777;
    for clause in spec.split(',') {
        let bad = || format!("bad symbolic permission for mode: {clause}");
        let Some(op_at) = clause.find(['+', '-', '=']) else {
            return Err(bad());
        };
        let (who, mut rest) = clause.split_at(op_at);
        if !who.chars().all(|c| "ugoa".contains(c)) {
            return Err(bad());
        }
        let use_umask = who.is_empty();
        let users: Vec<char> = if who.is_empty() || who.contains('a') {
            vec!['u', 'g', 'o']
        } else {
            who.chars().collect()
        };
        let rev_umask = if use_umask { !umask() & 0o7777 } else { 0o7777 };
        while let Some(op) = rest.chars().next() {
            let perms_end = rest[1..]
                .find(['+', '-', '='])
                .map_or(rest.len(), |i| i + 1);
            let perms = &rest[1..perms_end];
            if !perms.chars().all(|c| "rwxXstugo".contains(c)) {
                return Err(bad());
            }
            for &user in &users {
                let bits = perms.chars().fold(0, |acc, p| {
                    acc | perm_bits(user, p, mode, is_dir, rev_umask)
                });
                mode = apply(user, op, bits, mode);
            }
            rest = &rest[perms_end..];
        }
    }
    Ok(mode)
}

/// The bits permission letter `perm` means for `user` (`u`, `g` or `o`).
fn perm_bits(user: char, perm: char, mode: u32, is_dir: bool, rev_umask: u32) -> u32 {
    // Shift from the owner's position to the user's.
    let shift = match user {
        'u' => 0,
        'g' => 3,
        _ => 6,
    };
    let copy = |from_shift: u32| ((mode >> (6 - from_shift)) & 0o7) << (6 - shift);
    match perm {
        'r' => (0o400 >> shift) & rev_umask,
        'w' => (0o200 >> shift) & rev_umask,
        'x' => (0o100 >> shift) & rev_umask,
        'X' if is_dir || mode & 0o111 != 0 => 0o100 >> shift,
        's' if user == 'u' => SETUID,
        's' if user == 'g' => SETGID,
        't' if user == 'o' => STICKY,
        'u' => copy(0),
        'g' => copy(3),
        'o' => copy(6),
        _ => 0,
    }
}

fn apply(user: char, op: char, bits: u32, mode: u32) -> u32 {
    match op {
        '+' => mode | bits,
        '-' => mode & !bits,
        _ => {
            let cleared = match user {
                'u' => 0o700 | SETUID,
                'g' => 0o070 | SETGID,
                _ => 0o007 | STICKY,
            };
            (mode & !cleared) | bits
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sym(current: u32, is_dir: bool, spec: &str) -> u32 {
        symbolic_mode(current, is_dir, spec, || {
            panic!("umask must not be read for {spec}")
        })
        .unwrap()
    }

    #[test]
    fn octal_forms() {
        let no_umask = || panic!("no umask for octal modes");
        assert_eq!(resolve_mode(&json!("0644"), 0, false, no_umask), Ok(0o644));
        assert_eq!(resolve_mode(&json!("644"), 0, false, no_umask), Ok(0o644));
        assert_eq!(
            resolve_mode(&json!("0o2755"), 0, false, no_umask),
            Ok(0o2755)
        );
        assert_eq!(resolve_mode(&json!(0o600), 0, false, no_umask), Ok(0o600));
        assert_eq!(
            resolve_mode(&json!("077777"), 0, false, no_umask),
            Err(ModeError::TooLarge { mode: 0o77777 })
        );
        assert!(matches!(
            resolve_mode(&json!(true), 0, false, no_umask),
            Err(ModeError::NotAMode { .. })
        ));
    }

    #[test]
    fn symbolic_clauses() {
        assert_eq!(sym(0o644, false, "u+x"), 0o744);
        assert_eq!(sym(0o666, false, "go-w"), 0o644);
        assert_eq!(sym(0o751, false, "a=r"), 0o444);
        assert_eq!(sym(0o000, false, "u=rwx,g=rx,o="), 0o750);
        assert_eq!(sym(0o777, false, "u=rw,g=r,o="), 0o640);
        assert_eq!(sym(0o640, false, "g=u"), 0o660);
        assert_eq!(sym(0o750, false, "o=g"), 0o755);
        assert_eq!(sym(0o644, false, "u+s,g+s,o+t"), 0o7644);
        assert_eq!(sym(0o4755, false, "u=rwx"), 0o755);
        assert_eq!(sym(0o600, false, "u-w+x"), 0o500);
        assert_eq!(sym(0o644, false, "ug+rw,o-r"), 0o660);
    }

    #[test]
    fn capital_x_depends_on_directory_or_existing_execute() {
        assert_eq!(sym(0o644, false, "a+X"), 0o644);
        assert_eq!(sym(0o644, true, "a+X"), 0o755);
        assert_eq!(sym(0o744, false, "a+X"), 0o755);
        assert_eq!(sym(0o600, false, "u+x,g+X"), 0o710);
    }

    #[test]
    fn no_user_part_uses_the_given_umask() {
        assert_eq!(symbolic_mode(0o644, false, "+x", || 0o022), Ok(0o755));
        assert_eq!(symbolic_mode(0o644, false, "+x", || 0o077), Ok(0o744));
        assert_eq!(symbolic_mode(0o600, false, "=rw", || 0o027), Ok(0o640));
    }

    #[test]
    fn rejects_bad_clauses() {
        for (spec, clause) in [
            ("z+x", "z+x"),
            ("u+q", "u+q"),
            ("u", "u"),
            ("rw", "rw"),
            ("u+x,,g+w", ""),
        ] {
            assert_eq!(
                symbolic_mode(0o644, false, spec, || 0),
                Err(format!("bad symbolic permission for mode: {clause}")),
                "{spec}"
            );
        }
    }
}
