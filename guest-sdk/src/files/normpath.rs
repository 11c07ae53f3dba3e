//! `join`, `normpath` and `abspath`: paths put together and normalised lexically as
//! Python's `os.path` does on POSIX (for modules that report paths as ansible-core's
//! would: `find`, `tempfile`).

/// Python's `os.path.join(a, b)`: `b` below `a`, or `b` itself when absolute.
pub fn join(a: &str, b: &str) -> String {
    if b.starts_with('/') {
        b.to_string()
    } else if a.is_empty() || a.ends_with('/') {
        format!("{a}{b}")
    } else {
        format!("{a}/{b}")
    }
}

/// Python's `os.path.normpath`: repeated separators, `.` and `..` (as text) go; a
/// path starting with exactly two slashes keeps them; empty is `.`.
pub fn normpath(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let initial = if path.starts_with("//") && !path.starts_with("///") {
        "//"
    } else if path.starts_with('/') {
        "/"
    } else {
        ""
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if !initial.is_empty() && parts.is_empty() => {}
            ".." if parts.last().is_some_and(|l| *l != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let joined = format!("{initial}{}", parts.join("/"));
    if joined.is_empty() {
        ".".into()
    } else {
        joined
    }
}

/// Python's `os.path.abspath`: `path` from the current directory, normalised.
pub fn abspath(path: &str) -> String {
    if path.starts_with('/') {
        return normpath(path);
    }
    let cwd = std::env::current_dir()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "/".into());
    normpath(&join(&cwd, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_normalised_as_python_does() {
        assert_eq!(normpath("/a//b/./c/../d/"), "/a/b/d");
        assert_eq!(normpath("//a"), "//a");
        assert_eq!(normpath("///a"), "/a");
        assert_eq!(normpath("/../a"), "/a");
        assert_eq!(normpath("../a/.."), "..");
        assert_eq!(normpath("a/.."), ".");
        assert_eq!(abspath("/x/./y"), "/x/y");
        assert_eq!(
            (join("/a/", "b"), join("/a", "b"), join("", "b")),
            ("/a/b".into(), "/a/b".into(), "b".into())
        );
        assert_eq!(join("/a", "/b"), "/b");
        assert!(abspath("rel").starts_with('/') && abspath("rel").ends_with("/rel"));
    }
}
