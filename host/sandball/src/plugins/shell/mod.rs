//! The `sh` shell plugin: how commands sent over a connection are written for a POSIX
//! shell on the node.

/// One shell word (Python's `shlex.quote`) and a command line of them (`shlex.join`),
/// as the node's modules quote them too.
pub use sandball_wire::python::{shlex_join as join, shlex_quote as quote};

/// A path for the shell: a leading `~/` (or `~user/`, for a plain user name) stays
/// outside the quotes so the node's shell expands it to the user's home.
pub fn quote_path(path: &str) -> String {
    let Some(tilde) = path.strip_prefix('~') else {
        return quote(path);
    };
    let (user, rest) = tilde.split_once('/').unwrap_or((tilde, ""));
    if !user
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    {
        return quote(path);
    }
    if rest.is_empty() {
        format!("~{user}{}", if tilde.ends_with('/') { "/" } else { "" })
    } else {
        format!("~{user}/{}", quote(rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_shlex() {
        assert_eq!(quote(""), "''");
        assert_eq!(quote("/usr/bin/env"), "/usr/bin/env");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), "'it'\"'\"'s'");
        assert_eq!(join(&["echo", "a;b"]), "echo 'a;b'");
    }

    #[test]
    fn home_stays_expandable() {
        assert_eq!(quote_path("~/.sandball/x y"), "~/'.sandball/x y'");
        assert_eq!(quote_path("/tmp/$x"), "'/tmp/$x'");
        assert_eq!(quote_path("~"), "~");
        assert_eq!(quote_path("~app/.sandball"), "~app/.sandball");
        assert_eq!(quote_path("~app/a b"), "~app/'a b'");
        assert_eq!(quote_path("~a;b/x"), "'~a;b/x'");
    }
}
