//! Path filters with Python's `os.path` (POSIX) semantics: `basename`, `dirname`,
//! `expanduser`, `splitext`, `path_join`.

use minijinja::value::ValueKind;
use minijinja::{Environment, Error, State, Value};

use crate::template::python::text_arg;

pub(super) fn register(env: &mut Environment<'static>) {
    env.add_filter("basename", |state: &State, value: &Value| {
        Ok::<_, Error>(basename(&text_arg(state, value)?).to_string())
    });
    env.add_filter("dirname", |state: &State, value: &Value| {
        Ok::<_, Error>(dirname(&text_arg(state, value)?))
    });
    env.add_filter("expanduser", |state: &State, value: &Value| {
        Ok::<_, Error>(expanduser(
            &text_arg(state, value)?,
            std::env::var("HOME").ok(),
        ))
    });
    env.add_filter("splitext", |state: &State, value: &Value| {
        let (root, ext) = splitext(&text_arg(state, value)?);
        Ok::<_, Error>(Value::from(vec![root, ext]))
    });
    env.add_filter("path_join", path_join);
}

/// `os.path.basename`: what follows the last `/`.
fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `os.path.dirname`: what precedes the last `/`, without trailing slashes (unless it
/// is all slashes).
fn dirname(path: &str) -> String {
    let head = match path.rfind('/') {
        Some(at) => &path[..=at],
        None => "",
    };
    if !head.is_empty() && head.chars().any(|c| c != '/') {
        head.trim_end_matches('/').to_string()
    } else {
        head.to_string()
    }
}

/// `os.path.expanduser` for the current user: a leading `~` becomes `$HOME`.
fn expanduser(path: &str, home: Option<String>) -> String {
    match (path.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            let home = if rest.is_empty() {
                home.as_str()
            } else {
                home.trim_end_matches('/')
            };
            format!("{home}{rest}")
        }
        _ => path.to_string(),
    }
}

/// `os.path.splitext`: the extension is from the last dot of the last component, unless
/// that component only starts with dots.
fn splitext(path: &str) -> (String, String) {
    let component_start = path.rfind('/').map_or(0, |at| at + 1);
    if let Some(dot) = path.rfind('.')
        && dot > component_start
        && path[component_start..dot].chars().any(|c| c != '.')
    {
        return (path[..dot].to_string(), path[dot..].to_string());
    }
    (path.to_string(), String::new())
}

/// `path_join`: `os.path.join` of a list of parts (a string is returned as it is).
fn path_join(state: &State, paths: &Value) -> Result<String, Error> {
    if paths.kind() == ValueKind::String {
        return text_arg(state, paths);
    }
    let mut joined = String::new();
    for part in paths.try_iter()?.checked() {
        let part = text_arg(state, &part?)?;
        if part.starts_with('/') {
            joined = part;
        } else {
            if !joined.is_empty() && !joined.ends_with('/') {
                joined.push('/');
            }
            joined.push_str(&part);
        }
    }
    Ok(joined)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::filters::testing::eval;
    use serde_json::json;

    #[test]
    fn basename_and_dirname() {
        assert_eq!(eval("'/etc/asdf/foo.txt' | basename"), json!("foo.txt"));
        assert_eq!(eval("'/etc/asdf/' | basename"), json!(""));
        assert_eq!(eval("'foo' | basename"), json!("foo"));
        assert_eq!(eval("'/etc/asdf/foo.txt' | dirname"), json!("/etc/asdf"));
        assert_eq!(eval("'/etc//foo' | dirname"), json!("/etc"));
        assert_eq!(eval("'/foo' | dirname"), json!("/"));
        assert_eq!(eval("'foo' | dirname"), json!(""));
    }

    #[test]
    fn expanduser_uses_home() {
        let home = Some("/home/u".to_string());
        assert_eq!(expanduser("~/x", home.clone()), "/home/u/x");
        assert_eq!(expanduser("~", home.clone()), "/home/u");
        assert_eq!(expanduser("~other/x", home.clone()), "~other/x");
        assert_eq!(expanduser("/abs", home), "/abs");
        assert_eq!(expanduser("~/x", None), "~/x");
    }

    #[test]
    fn splitext_like_python() {
        assert_eq!(eval("'/a/b.tar.gz' | splitext"), json!(["/a/b.tar", ".gz"]));
        assert_eq!(eval("'.bashrc' | splitext"), json!([".bashrc", ""]));
        assert_eq!(eval("'a.b/c' | splitext"), json!(["a.b/c", ""]));
        assert_eq!(eval("'x.' | splitext"), json!(["x", "."]));
        assert_eq!(eval("'..x.y' | splitext"), json!(["..x", ".y"]));
    }

    #[test]
    fn path_join_like_os_path() {
        assert_eq!(
            eval("['/etc', 'subdir', 'file'] | path_join"),
            json!("/etc/subdir/file")
        );
        assert_eq!(eval("['a/', 'b'] | path_join"), json!("a/b"));
        assert_eq!(eval("['a', '/abs', 'b'] | path_join"), json!("/abs/b"));
        assert_eq!(eval("'single' | path_join"), json!("single"));
    }
}
