//! Path filters with Python's `os.path` (POSIX) semantics: `basename`, `dirname`,
//! `expanduser`, `expandvars`, `splitext`, `path_join`, `normpath`, `realpath`,
//! `relpath`, `commonpath`, and `fileglob` (the regular files a glob matches on the
//! controller).

use minijinja::value::ValueKind;
use minijinja::{Error, ErrorKind, State, Value};

use sandball_guest_sdk::files::{abspath, normpath};

use crate::template::python::text_arg;
use crate::template::undefined::Plugins;

pub(super) fn register(env: &mut Plugins<'_>) {
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
    env.add_filter("normpath", |state: &State, value: &Value| {
        Ok::<_, Error>(normpath(&text_arg(state, value)?))
    });
    env.add_filter("realpath", |state: &State, value: &Value| {
        Ok::<_, Error>(realpath(&text_arg(state, value)?))
    });
    env.add_filter(
        "relpath",
        |state: &State, value: &Value, start: Option<Value>| {
            let start = match start {
                Some(start) => text_arg(state, &start)?,
                None => ".".to_string(),
            };
            relpath(&text_arg(state, value)?, &start)
        },
    );
    env.add_filter("expandvars", |state: &State, value: &Value| {
        Ok::<_, Error>(sandball_pycompat::expand::expand_vars(
            &text_arg(state, value)?,
            &|name| crate::config::settings().get(name).map(str::to_string),
        ))
    });
    env.add_filter("commonpath", commonpath);
    env.add_filter("fileglob", |state: &State, value: &Value| {
        Ok::<_, Error>(fileglob(&text_arg(state, value)?))
    });
}

fn error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.into())
}

/// `os.path.realpath`: the absolute path with every symbolic link resolved; what does
/// not exist is kept as written (as Python does without `strict`).
fn realpath(path: &str) -> String {
    let mut resolved = std::path::PathBuf::from("/");
    resolve_into(&mut resolved, &abspath(path), 0);
    resolved.display().to_string()
}

/// Follows `path`'s components from `resolved` on, a link at a time (at most 40 deep:
/// a loop of links is left as it is).
fn resolve_into(resolved: &mut std::path::PathBuf, path: &str, depth: usize) {
    if path.starts_with('/') {
        *resolved = std::path::PathBuf::from("/");
    }
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                resolved.pop();
            }
            name => {
                resolved.push(name);
                if depth < 40
                    && let Ok(target) = std::fs::read_link(&*resolved)
                {
                    resolved.pop();
                    resolve_into(resolved, &target.display().to_string(), depth + 1);
                }
            }
        }
    }
}

/// `os.path.relpath(path, start)`: the way from `start` to `path`, both taken from the
/// current directory when relative.
fn relpath(path: &str, start: &str) -> Result<String, Error> {
    if path.is_empty() {
        return Err(error("no path specified"));
    }
    let (path, start) = (abspath(path), abspath(start));
    let parts = |p: &str| -> Vec<String> {
        p.split('/')
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect()
    };
    let (to, from) = (parts(&path), parts(&start));
    let common = to.iter().zip(&from).take_while(|(a, b)| a == b).count();
    let mut way: Vec<String> = vec!["..".to_string(); from.len() - common];
    way.extend(to[common..].iter().cloned());
    Ok(if way.is_empty() {
        ".".into()
    } else {
        way.join("/")
    })
}

/// `commonpath`: `os.path.commonpath` of a list of paths, the longest path all of them
/// start with.
fn commonpath(state: &State, paths: &Value) -> Result<String, Error> {
    if !matches!(paths.kind(), ValueKind::Seq | ValueKind::Iterable) {
        return Err(error(format!(
            "|commonpath expects sequence, got <class '{}'> instead.",
            crate::template::filters::python_type(paths)
        )));
    }
    let paths: Vec<String> = paths
        .try_iter()?
        .map(|p| text_arg(state, &p))
        .collect::<Result<_, _>>()?;
    let Some(first) = paths.first() else {
        return Err(error("commonpath() arg is an empty sequence"));
    };
    let absolute = first.starts_with('/');
    if paths.iter().any(|p| p.starts_with('/') != absolute) {
        return Err(error("Can't mix absolute and relative paths"));
    }
    let split = |p: &str| -> Vec<String> {
        p.split('/')
            .filter(|x| !x.is_empty() && *x != ".")
            .map(str::to_string)
            .collect()
    };
    let mut common = split(first);
    for path in &paths[1..] {
        let parts = split(path);
        let same = common
            .iter()
            .zip(&parts)
            .take_while(|(a, b)| a == b)
            .count();
        common.truncate(same);
    }
    Ok(format!(
        "{}{}",
        if absolute { "/" } else { "" },
        common.join("/")
    ))
}

/// Whether a path component has glob characters.
fn has_magic(part: &str) -> bool {
    part.contains(['*', '?', '['])
}

/// `fileglob`: the regular files `pattern` matches (Python's `glob.glob`: wildcards in
/// any component, names starting with `.` matched only by a pattern that does), sorted.
fn fileglob(pattern: &str) -> Vec<String> {
    let absolute = pattern.starts_with('/');
    let mut found: Vec<String> = vec![if absolute { "/".into() } else { String::new() }];
    for part in pattern.split('/').filter(|p| !p.is_empty()) {
        let mut next = Vec::new();
        for base in &found {
            let join = |name: &str| {
                format!(
                    "{base}{}{name}",
                    if base.is_empty() || base.ends_with('/') {
                        ""
                    } else {
                        "/"
                    }
                )
            };
            if !has_magic(part) {
                next.push(join(part));
                continue;
            }
            let dir = if base.is_empty() { "." } else { base.as_str() };
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if (!name.starts_with('.') || part.starts_with('.'))
                    && sandball_pycompat::fnmatch::fnmatch(part, &name)
                {
                    next.push(join(&name));
                }
            }
        }
        found = next;
    }
    let mut files: Vec<String> = found
        .into_iter()
        .filter(|p| !p.is_empty() && std::path::Path::new(p).is_file())
        .collect();
    files.sort();
    files
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
    if !matches!(paths.kind(), ValueKind::Seq | ValueKind::Iterable) {
        crate::template::convert::ensure_defined(state, paths)?;
        return Err(error(format!(
            "|path_join expects string or sequence, got <class '{}'> instead.",
            crate::template::filters::python_type(paths)
        )));
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
    fn normpath_relpath_and_commonpath_like_os_path() {
        assert_eq!(eval("'/a//b/./c/../d/' | normpath"), json!("/a/b/d"));
        assert_eq!(relpath("/a/b/c", "/a/d").ok(), Some("../b/c".into()));
        assert_eq!(relpath("/a", "/a").ok(), Some(".".into()));
        assert_eq!(
            eval("['/a/b/c', '/a/b/d', '/a/bc'] | commonpath"),
            json!("/a")
        );
        assert_eq!(eval("['a/b', 'a/./b/c'] | commonpath"), json!("a/b"));
    }

    #[test]
    fn realpath_and_fileglob_on_the_file_system() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let root = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir(root.join("sub")).expect("mkdir");
        std::fs::write(root.join("sub/a.txt"), "").expect("write");
        std::fs::write(root.join("sub/.hidden.txt"), "").expect("write");
        std::fs::create_dir(root.join("sub/dir.txt")).expect("mkdir");
        std::os::unix::fs::symlink(root.join("sub"), root.join("link")).expect("symlink");
        let root = root.display().to_string();
        assert_eq!(
            realpath(&format!("{root}/link/a.txt")),
            format!("{root}/sub/a.txt")
        );
        assert_eq!(realpath(&format!("{root}/link/../x")), format!("{root}/x"));
        assert_eq!(
            fileglob(&format!("{root}/*/*.txt")),
            vec![format!("{root}/link/a.txt"), format!("{root}/sub/a.txt")]
        );
        assert_eq!(
            fileglob(&format!("{root}/sub/.*")),
            vec![format!("{root}/sub/.hidden.txt")]
        );
        assert_eq!(
            fileglob(&format!("{root}/sub/a.txt")),
            vec![format!("{root}/sub/a.txt")]
        );
        assert!(fileglob(&format!("{root}/nope/*")).is_empty());
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
