//! Which programs a grant allows `process.run` to start. A program is allowed when
//! `argv[0]` is literally a granted entry, or when both are found (names without a
//! `/` in `PATH`, others relative to the working directory) and are the same file, or
//! when the entry is an absolute pattern (`/etc/ansible/facts.d/*.fact`: `*` and `?`
//! within one path component) that the found file matches, every symlink resolved;
//! and the arguments after it match that entry's argument patterns, if it has any.

use sandball_wire::capability::{ExecGrant, glob};
use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// `PATH` used when the shim's environment has none.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// A program found on the node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The path to execute (as found, symlinks kept).
    pub path: PathBuf,
    /// The file it is, with every symlink resolved.
    pub file: PathBuf,
}

/// The result of checking `argv[0]` against the grant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// Allowed; run this path.
    Allowed(PathBuf),
    /// Allowed by name, but there is no such program.
    NotFound,
    /// The program is not granted.
    Denied,
    /// The program is granted, but not with these arguments.
    ArgumentsDenied,
}

fn executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Finds a program the way a shell does: a name containing `/` is a path (relative
/// ones are taken from `cwd`), others are looked up in `path_var`.
pub fn find(name: &str, cwd: &Path, path_var: Option<&OsStr>) -> Option<Found> {
    let found = |path: PathBuf| {
        let file = std::fs::canonicalize(&path).ok()?;
        Some(Found { path, file })
    };
    if name.is_empty() {
        return None;
    }
    if name.contains('/') {
        let path = cwd.join(name);
        return if executable_file(&path) {
            found(path)
        } else {
            None
        };
    }
    let dirs = path_var.unwrap_or(OsStr::new(DEFAULT_PATH));
    std::env::split_paths(dirs)
        .map(|dir| cwd.join(dir).join(name))
        .find(|p| executable_file(p))
        .and_then(found)
}

/// Checks `argv` (program and arguments) against the granted programs.
pub fn check(
    argv: &[String],
    granted: &[ExecGrant],
    cwd: &Path,
    path_var: Option<&OsStr>,
) -> Check {
    let Some((argv0, args)) = argv.split_first() else {
        return Check::Denied;
    };
    let found = find(argv0, cwd, path_var);
    let same_program = |g: &&ExecGrant| {
        g.program == *argv0
            || found.as_ref().is_some_and(|f| {
                if is_pattern(&g.program) {
                    pattern_matches(&g.program, &f.file)
                } else {
                    find(&g.program, cwd, path_var).is_some_and(|gf| gf.file == f.file)
                }
            })
    };
    let matching: Vec<&ExecGrant> = granted.iter().filter(same_program).collect();
    if matching.is_empty() {
        return Check::Denied;
    }
    // A relative path in a grant's arguments (`sub/file`, as the task wrote it) also
    // matches that path made absolute from the working directory, which is how a
    // module that could not change into it passes it on: the same file (one that
    // climbs with `..` normalised, as the module's SDK normalises it).
    let from_cwd = |g: &ExecGrant| ExecGrant {
        program: g.program.clone(),
        args: g.args.as_ref().map(|patterns| {
            patterns
                .iter()
                .map(|p| match relative_path(p) {
                    true if p.split('/').any(|part| part == "..") => {
                        crate::paths::normalize(&cwd.join(p))
                            .to_string_lossy()
                            .into_owned()
                    }
                    true => cwd.join(p).to_string_lossy().into_owned(),
                    false => p.clone(),
                })
                .collect()
        }),
    };
    if !matching
        .iter()
        .any(|g| g.allows_args(args) || from_cwd(g).allows_args(args))
    {
        return Check::ArgumentsDenied;
    }
    match found {
        Some(f) => Check::Allowed(f.path),
        None => Check::NotFound,
    }
}

/// Whether an argument pattern is a plain relative path (`sub/file`): no option, no
/// glob, not absolute, not from home.
fn relative_path(pattern: &str) -> bool {
    pattern.contains('/')
        && !pattern.starts_with(['/', '-', '~'])
        && !pattern.contains(['*', '?', '['])
}

fn is_pattern(program: &str) -> bool {
    program.contains(['*', '?'])
}

/// Whether the absolute `file` matches the absolute `pattern` component by component
/// (a `*` never reaches into another directory).
fn pattern_matches(pattern: &str, file: &Path) -> bool {
    let Some(file) = file.to_str() else {
        return false;
    };
    if !pattern.starts_with('/') || !file.starts_with('/') {
        return false;
    }
    let (p, f): (Vec<&str>, Vec<&str>) = (pattern.split('/').collect(), file.split('/').collect());
    p.len() == f.len() && p.iter().zip(&f).all(|(p, f)| glob(p, f))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn program(dir: &Path, name: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    fn grants(programs: &[&str]) -> Vec<ExecGrant> {
        programs
            .iter()
            .map(|p| ExecGrant {
                program: p.to_string(),
                args: None,
            })
            .collect()
    }

    fn argv(words: &str) -> Vec<String> {
        words.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn names_and_paths_of_the_same_program_match() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let tool = program(&bin, "tool");
        symlink(&tool, bin.join("alias")).unwrap();
        let path = bin.as_os_str();
        let granted = grants(&["tool"]);
        let check = |words: &str| check(&argv(words), &granted, tmp.path(), Some(path));
        assert_eq!(check("tool -x"), Check::Allowed(tool.clone()));
        assert_eq!(check(tool.to_str().unwrap()), Check::Allowed(tool.clone()));
        // A symlink to the granted program is the same file.
        assert_eq!(check("alias"), Check::Allowed(bin.join("alias")));
        // Relative paths are taken from the working directory.
        assert_eq!(
            check("./bin/tool"),
            Check::Allowed(tmp.path().join("./bin/tool"))
        );
    }

    #[test]
    fn absolute_patterns_match_files_in_one_directory_never_below_or_through_links() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let facts = base.join("facts.d");
        std::fs::create_dir_all(facts.join("sub")).unwrap();
        let fact = program(&facts, "uuid.fact");
        program(&facts.join("sub"), "deep.fact");
        let shell = program(&base, "sh.fact");
        symlink(&shell, facts.join("link.fact")).unwrap();
        program(&facts, "other.sh");
        let granted = grants(&[&format!("{}/*.fact", facts.display())]);
        let check = |path: &Path| check(&argv(path.to_str().unwrap()), &granted, &base, None);
        assert_eq!(check(&fact), Check::Allowed(fact.clone()));
        assert_eq!(check(&facts.join("sub/deep.fact")), Check::Denied);
        assert_eq!(check(&facts.join("other.sh")), Check::Denied);
        // The link's file is elsewhere: the pattern does not name it.
        assert_eq!(check(&facts.join("link.fact")), Check::Denied);
        assert_eq!(
            check(&facts.join("sub/../uuid.fact")),
            Check::Allowed(facts.join("sub/../uuid.fact"))
        );
        // A relative pattern names nothing.
        let relative = grants(&["facts.d/*.fact"]);
        assert_eq!(
            super::check(&argv(fact.to_str().unwrap()), &relative, &base, None),
            Check::Denied
        );
    }

    #[test]
    fn a_relative_path_argument_matches_its_absolute_form_from_the_working_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let tool = program(tmp.path(), "tool");
        let granted = vec![ExecGrant {
            program: tool.display().to_string(),
            args: Some(vec!["-v".into(), "sub/file".into()]),
        }];
        let check = |words: &[&str]| {
            let argv: Vec<String> = std::iter::once(tool.display().to_string())
                .chain(words.iter().map(|w| w.to_string()))
                .collect();
            check(&argv, &granted, tmp.path(), None)
        };
        let absolute = tmp.path().join("sub/file").display().to_string();
        assert_eq!(check(&["-v", "sub/file"]), Check::Allowed(tool.clone()));
        assert_eq!(check(&["-v", &absolute]), Check::Allowed(tool.clone()));
        assert_eq!(
            check(&["-v", "/elsewhere/sub/file"]),
            Check::ArgumentsDenied
        );
        assert_eq!(check(&[&absolute, "-v"]), Check::ArgumentsDenied);
    }

    #[test]
    fn other_programs_are_denied() {
        let tmp = tempfile::tempdir().unwrap();
        program(tmp.path(), "tool");
        program(tmp.path(), "sh");
        let path = tmp.path().as_os_str();
        let granted = grants(&["tool"]);
        let check = |words: &str, granted: &[ExecGrant]| {
            check(&argv(words), granted, tmp.path(), Some(path))
        };
        assert_eq!(check("sh", &granted), Check::Denied);
        assert_eq!(check("missing", &granted), Check::Denied);
        assert_eq!(check("", &granted), Check::Denied);
        assert_eq!(check("tool", &[]), Check::Denied);
    }

    #[test]
    fn arguments_must_match_the_patterns_of_the_grant() {
        let tmp = tempfile::tempdir().unwrap();
        let tool = program(tmp.path(), "tool");
        let path = tmp.path().as_os_str();
        let granted = vec![
            ExecGrant {
                program: "tool".into(),
                args: Some(vec!["--list".into()]),
            },
            ExecGrant {
                program: "tool".into(),
                args: Some(vec!["--show".into(), "*".into()]),
            },
        ];
        let check = |words: &str| check(&argv(words), &granted, tmp.path(), Some(path));
        assert_eq!(check("tool --list"), Check::Allowed(tool.clone()));
        assert_eq!(check("tool --show x"), Check::Allowed(tool.clone()));
        assert_eq!(check("tool --delete x"), Check::ArgumentsDenied);
        assert_eq!(check("tool --list extra"), Check::ArgumentsDenied);
        assert_eq!(check("tool"), Check::ArgumentsDenied);
    }

    #[test]
    fn granted_names_that_do_not_exist_are_not_found() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(
            check(
                &argv("nothere"),
                &grants(&["nothere"]),
                tmp.path(),
                Some(tmp.path().as_os_str())
            ),
            Check::NotFound
        );
    }

    #[test]
    fn non_executable_files_are_not_programs() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("data"), b"x").unwrap();
        assert_eq!(find("data", tmp.path(), Some(tmp.path().as_os_str())), None);
    }
}
