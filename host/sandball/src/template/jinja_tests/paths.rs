//! Path tests, on the controller's file system: `abs`, `exists`, `file`, `directory`,
//! `link`, `mount`, `same_file`, `vaulted_file` (a file in Ansible Vault's format).

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use minijinja::{Environment, Error, State, Value};

use crate::template::python::text_arg;

pub(super) fn register(env: &mut Environment<'static>) {
    env.add_test("abs", |state: &State, path: &Value| {
        Ok::<_, Error>(text_arg(state, path)?.starts_with('/'))
    });
    env.add_test("exists", |state: &State, path: &Value| {
        Ok::<_, Error>(Path::new(&text_arg(state, path)?).exists())
    });
    env.add_test("file", |state: &State, path: &Value| {
        Ok::<_, Error>(Path::new(&text_arg(state, path)?).is_file())
    });
    env.add_test("directory", |state: &State, path: &Value| {
        Ok::<_, Error>(Path::new(&text_arg(state, path)?).is_dir())
    });
    env.add_test("link", |state: &State, path: &Value| {
        Ok::<_, Error>(Path::new(&text_arg(state, path)?).is_symlink())
    });
    env.add_test("mount", |state: &State, path: &Value| {
        Ok::<_, Error>(is_mount(Path::new(&text_arg(state, path)?)))
    });
    env.add_test("vaulted_file", |state: &State, path: &Value| {
        let head = fs::read(text_arg(state, path)?).unwrap_or_default();
        Ok::<_, Error>(head.starts_with(b"$ANSIBLE_VAULT;"))
    });
    env.add_test("same_file", |state: &State, a: &Value, b: &Value| {
        let (a, b) = (text_arg(state, a)?, text_arg(state, b)?);
        Ok::<_, Error>(match (fs::metadata(a), fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        })
    });
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
        assert_eq!(check("f is abs"), json!(true));
        assert_eq!(check("'rel/x' is abs"), json!(false));
        assert_eq!(check("'/' is mount"), json!(true));
        assert_eq!(check("f is mount"), json!(false));
    }
}
