//! Path tests, on the controller's file system: `abs`, `exists`, `file`, `directory`,
//! `link`, `link_exists`, `mount`, `same_file` (and their old `is_*` names: `is_abs`,
//! `is_dir`…), `vaulted_file` (a file in Ansible Vault's format).

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use minijinja::{Error, State, Value};

use crate::template::python::text_arg;
use crate::template::undefined::Plugins;

pub(super) fn register(env: &mut Plugins<'_>) {
    /// A test of one path, under its name and its old `is_*` name (if any).
    type PathTest = fn(&Path) -> bool;
    const TESTS: &[(&str, Option<&str>, PathTest)] = &[
        ("abs", Some("is_abs"), |p| p.is_absolute()),
        ("exists", None, Path::exists),
        ("file", Some("is_file"), Path::is_file),
        ("directory", Some("is_dir"), Path::is_dir),
        ("link", Some("is_link"), Path::is_symlink),
        ("link_exists", None, |p| fs::symlink_metadata(p).is_ok()),
        ("mount", Some("is_mount"), is_mount),
        ("vaulted_file", None, |p| {
            fs::read(p)
                .unwrap_or_default()
                .starts_with(b"$ANSIBLE_VAULT;")
        }),
    ];
    for (name, old, test) in TESTS {
        let test = *test;
        let f = move |state: &State, path: &Value| {
            Ok::<_, Error>(test(Path::new(&text_arg(state, path)?)))
        };
        env.add_test(*name, f);
        if let Some(old) = old {
            env.add_test(*old, f);
        }
    }
    let same_file = |state: &State, a: &Value, b: &Value| {
        let (a, b) = (text_arg(state, a)?, text_arg(state, b)?);
        Ok::<_, Error>(match (fs::metadata(a), fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        })
    };
    env.add_test("same_file", same_file);
    env.add_test("is_same_file", same_file);
}

/// `os.path.ismount`: not a link, and on another device than its parent (or the root).
fn is_mount(path: &Path) -> bool {
    if path.is_symlink() {
        return false;
    }
    match (fs::metadata(path), fs::metadata(path.join(".."))) {
        (Ok(own), Ok(parent)) => own.dev() != parent.dev() || own.ino() == parent.ino(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::template::Vars;
    use crate::template::filters::testing::eval_with;
    use serde_json::json;

    #[test]
    fn file_system_tests() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let mut vars = Vars::new();
        vars.set_data("d", json!(dir.path().to_str().unwrap()));
        vars.set_data("f", json!(file.to_str().unwrap()));
        vars.set_data("l", json!(link.to_str().unwrap()));
        let check = |expr: &str| eval_with(expr, &vars);
        assert_eq!(check("d is directory"), json!(true));
        assert_eq!(check("f is directory"), json!(false));
        assert_eq!(check("f is file"), json!(true));
        assert_eq!(check("f is exists"), json!(true));
        assert_eq!(check("(f ~ 'x') is exists"), json!(false));
        assert_eq!(check("l is link"), json!(true));
        assert_eq!(check("f is link"), json!(false));
        assert_eq!(check("f is same_file(l)"), json!(true));
        assert_eq!(check("f is same_file(d)"), json!(false));
        assert_eq!(
            check("d is is_dir and f is is_file and l is is_link"),
            json!(true)
        );
        assert_eq!(check("f is is_same_file(l) and f is is_abs"), json!(true));
        std::fs::remove_file(&file).unwrap();
        assert_eq!(check("l is link_exists and l is not exists"), json!(true));
        assert_eq!(check("f is abs"), json!(true));
        assert_eq!(check("'rel/x' is abs"), json!(false));
        assert_eq!(check("'/' is mount"), json!(true));
        assert_eq!(check("f is mount"), json!(false));
    }
}
