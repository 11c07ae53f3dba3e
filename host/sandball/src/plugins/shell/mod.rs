//! The `sh` shell plugin: how commands sent over a connection are written for a POSIX
//! shell on the node.

use serde_json::{Map, Value};

use sandball_pycompat::shell::quote;

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

/// `K=V ` words for the task's environment (keys must be shell names).
pub fn env_prefix(env: &Map<String, Value>) -> Result<String, String> {
    Ok(env_vars(env)?
        .into_iter()
        .map(|(k, v)| format!("{k}={} ", quote(&v)))
        .collect())
}

/// The task's environment as text (keys must be shell names).
pub fn env_vars(env: &Map<String, Value>) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (k, v) in env {
        let valid = k
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(format!(
                "environment: '{k}' is not a valid environment variable name"
            ));
        }
        // As ansible-core writes them: `True`, `None`.
        out.push((k.clone(), sandball_pycompat::pyfmt::py_str(v)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn home_stays_expandable() {
        assert_eq!(quote_path("~/.sandball/x y"), "~/'.sandball/x y'");
        assert_eq!(quote_path("/tmp/$x"), "'/tmp/$x'");
        assert_eq!(quote_path("~"), "~");
        assert_eq!(quote_path("~app/.sandball"), "~app/.sandball");
        assert_eq!(quote_path("~app/a b"), "~app/'a b'");
        assert_eq!(quote_path("~a;b/x"), "'~a;b/x'");
    }

    #[test]
    fn environment_becomes_quoted_assignments() {
        let env = json!({"A": "x y", "B_2": 3, "C": true, "D": null});
        assert_eq!(
            env_prefix(env.as_object().unwrap()).unwrap(),
            "A='x y' B_2=3 C=True D=None "
        );
        let bad = json!({"A;rm": "x"});
        assert!(
            env_prefix(bad.as_object().unwrap())
                .unwrap_err()
                .contains("A;rm")
        );
    }
}
