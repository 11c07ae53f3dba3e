//! `os.path.expanduser(os.path.expandvars(p))`: environment variables (`$VAR`,
//! `${VAR}`) and then a leading `~` (from `HOME`). Unknown variables and `~user` are
//! left as written. Variables are read through a function, so that a module reads its
//! host's environment and the controller its own.

/// Expands variables and `~` in `path`, reading variables through `env`.
pub fn expand_path(path: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let vars = expand_vars(path, env);
    expand_user(&vars, env)
}

/// `$NAME` and `${NAME}` replaced by the variables `env` gives; unknown ones are left
/// as written.
pub fn expand_vars(text: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        let (name, consumed) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(end) => (&braced[..end], end + 2),
                None => ("", 0),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        match (name.is_empty(), env(name)) {
            (false, Some(value)) => out.push_str(&value),
            _ => out.push_str(&rest[pos..pos + 1 + consumed]),
        }
        rest = &after[consumed..];
    }
    out.push_str(rest);
    out
}

/// A leading `~` (alone or as `~/…`) made `HOME`; `~user` and paths without a `~` as
/// written.
pub fn expand_user(path: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let Some(after) = path.strip_prefix('~') else {
        return path.to_string();
    };
    if !(after.is_empty() || after.starts_with('/')) {
        return path.to_string();
    }
    match env("HOME") {
        Some(home) if !home.is_empty() => {
            let home = if home.len() > 1 {
                home.trim_end_matches('/')
            } else {
                &home
            };
            if home == "/" && after.starts_with('/') {
                after.to_string()
            } else {
                format!("{home}{after}")
            }
        }
        _ => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/me/".into()),
            "X" => Some("ex".into()),
            "LONG_NAME1" => Some("L".into()),
            _ => None,
        }
    }

    #[test]
    fn expands_variables_then_home() {
        assert_eq!(expand_path("~/a/$X", &env), "/home/me/a/ex");
        assert_eq!(expand_path("~", &env), "/home/me");
        assert_eq!(expand_path("/p/${X}y/$LONG_NAME1.d", &env), "/p/exy/L.d");
        assert_eq!(
            expand_path("/p/$UNSET/${UNSET}/$", &env),
            "/p/$UNSET/${UNSET}/$"
        );
        assert_eq!(expand_path("~other/x", &env), "~other/x");
        assert_eq!(expand_path("a~/b", &env), "a~/b");
        assert_eq!(expand_path("${X", &env), "${X");
    }

    #[test]
    fn leaves_tilde_without_home() {
        assert_eq!(expand_path("~/x", &|_| None), "~/x");
        assert_eq!(expand_path("~/x", &|_| Some("/".into())), "/x");
    }
}
