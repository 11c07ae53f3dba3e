//! `sandball module new --lang rust|python|js NAME`: a new module's directory, `NAME/`,
//! with its manifest, its source, a test playbook and a Makefile whose `make` builds
//! `NAME.wasm` (with the language's own tools: cargo, componentize-py from PyPI,
//! componentize-js from npm) and whose `make test` runs the playbook through sandball,
//! granted and denied. The templates are in `templates/`.

use super::CliError;
use clap::ValueEnum;
use std::path::{Path, PathBuf};

/// The languages a module can be scaffolded in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    /// Rust, with the guest SDK (`guest-sdk/`).
    Rust,
    /// Python: an Ansible module, built with componentize-py (`guest-sdk/python/`).
    Python,
    /// JavaScript, built with componentize-js (`guest-sdk/js/`).
    Js,
}

const MANIFEST: &str = include_str!("templates/common/manifest.json");
const TEST_PLAYBOOK: &str = include_str!("templates/common/test.yml");
const MAKEFILE_TEST: &str = include_str!("templates/common/Makefile.test");

impl Lang {
    /// The language's own files (path in `NAME/`, template), and what `make clean`
    /// removes besides the module and the test's directory.
    fn files(self) -> (Vec<(&'static str, &'static str)>, &'static str) {
        match self {
            Lang::Rust => (
                vec![
                    ("Makefile", include_str!("templates/rust/Makefile")),
                    ("Cargo.toml", include_str!("templates/rust/Cargo.toml")),
                    ("src/main.rs", include_str!("templates/rust/main.rs")),
                ],
                "target",
            ),
            Lang::Python => (
                vec![
                    ("Makefile", include_str!("templates/python/Makefile")),
                    ("@NAME@.py", include_str!("templates/python/module.py")),
                ],
                "venv",
            ),
            Lang::Js => (
                vec![
                    ("Makefile", include_str!("templates/js/Makefile")),
                    ("@NAME@.js", include_str!("templates/js/module.js")),
                ],
                "tools",
            ),
        }
    }
}

/// The guest SDK's directory (`guest-sdk/`, holding `wit/` and the languages'
/// packages): `given`, else the build tree's that this `sandball` was built in.
fn sdk_dir(given: Option<&Path>) -> Result<PathBuf, CliError> {
    let found = match given {
        Some(dir) => Some(dir.to_path_buf()),
        // target/<profile>/sandball in a checkout: the checkout's guest-sdk/.
        None => crate::layout::exe_dir()
            .and_then(|d| d.parent()?.parent().map(|root| root.join("guest-sdk"))),
    };
    match found {
        Some(dir) if dir.join("wit/sandball.wit").is_file() => std::path::absolute(&dir)
            .map_err(|e| CliError::other(format!("{}: {e}", dir.display()))),
        Some(dir) if given.is_some() => Err(CliError::other(format!(
            "{} is not the guest SDK's directory (no wit/sandball.wit in it)",
            dir.display()
        ))),
        _ => Err(CliError::other(
            "the guest SDK was not found beside this sandball: give its directory with --sdk (guest-sdk/ of a sandball checkout)",
        )),
    }
}

/// Writes `dir/NAME/`; returns the files written.
pub fn new(lang: Lang, name: &str, dir: &Path, sdk: Option<&Path>) -> Result<i32, CliError> {
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !valid {
        return Err(CliError::options(format!(
            "{name:?}: a module's name is lowercase letters, digits and underscores, not starting with a digit"
        )));
    }
    let sdk = sdk_dir(sdk)?;
    let sandball = std::env::current_exe()
        .map_err(|e| CliError::other(format!("cannot tell where sandball is: {e}")))?;
    let root = dir.join(name);
    if root.exists() {
        return Err(CliError::other(format!(
            "{} exists already: nothing written",
            root.display()
        )));
    }
    let (own, clean) = lang.files();
    let makefile_test = MAKEFILE_TEST.replace("@CLEAN@", clean);
    let gitignore = format!("work/\ndenied/\n{clean}/\n*.wasm\n");
    let mut files: Vec<(String, String)> = vec![
        ("manifest.json".into(), MANIFEST.into()),
        ("test.yml".into(), TEST_PLAYBOOK.into()),
        (".gitignore".into(), gitignore),
    ];
    for (path, template) in own {
        let text = if path == "Makefile" {
            format!("{template}{makefile_test}")
        } else {
            template.to_string()
        };
        files.push((path.to_string(), text));
    }
    let sdk_text = sdk.display().to_string();
    let sandball_text = sandball.display().to_string();
    for (path, text) in &files {
        let path = root.join(path.replace("@NAME@", name));
        let text = text
            .replace("@NAME@", name)
            .replace("@SDK@", &sdk_text)
            .replace("@SANDBALL@", &sandball_text);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| CliError::other(format!("{}: {e}", parent.display())))?;
        }
        std::fs::write(&path, text)
            .map_err(|e| CliError::other(format!("{}: {e}", path.display())))?;
        println!("{}", path.display());
    }
    println!(
        "{}: `make` builds {name}.wasm, `make test` runs test.yml through sandball",
        root.display()
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_has_a_makefile_and_its_source() {
        for lang in [Lang::Rust, Lang::Python, Lang::Js] {
            let (files, clean) = lang.files();
            assert!(files.iter().any(|(p, _)| *p == "Makefile"), "{lang:?}");
            assert!(files.len() >= 2, "{lang:?}");
            assert!(!clean.is_empty());
        }
    }

    #[test]
    fn a_bad_name_is_refused_before_anything_is_written() {
        let dir = std::env::temp_dir().join("sandball-scaffold-unit");
        let err = new(Lang::Python, "Bad-Name", &dir, None).unwrap_err();
        assert!(err.message.contains("lowercase"), "{}", err.message);
        assert!(!dir.join("Bad-Name").exists());
    }
}
