//! `--version`: which sandball this is and what it runs with — the ansible-core release
//! it follows, the wasmtime release its shims run modules under, the shims it carries,
//! where its built-in modules are and the ansible-core its legacy modules run with.
//! Started under an Ansible command's name (`ansible-playbook --version`), the first line
//! has that command's shape, `ansible-playbook [core 2.19.0] (sandball 0.1.0)`, which
//! tools parse (ansible-compat, under Molecule and ansible-lint, reads `ansible [core
//! X]`); the other lines are `  key = value`, as ansible's.

use crate::assemble::ModuleStore;
use crate::assemble::finder::{FinderConfig, LegacyFinder, NOT_FOUND};
use crate::assemble::module_utils::ansible_version;
use crate::plugins::connection::deploy::Shims;
use std::ffi::OsString;
use std::path::Path;

/// Whether the command line asks for the version: `--version` (or sandball's `-V`)
/// anywhere before a `--`, as ansible's argument parser answers it wherever it is.
pub(super) fn asked(args: &[OsString]) -> bool {
    args.iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--version" || a == "-V")
}

/// The version text. `ansible_command` is the Ansible command's name sandball was
/// started under, if it was.
pub(super) fn text(ansible_command: Option<&str>, config: &crate::config::Loaded) -> String {
    let version = env!("CARGO_PKG_VERSION");
    let core = crate::compat::core().version();
    let mut lines = vec![match ansible_command {
        Some(name) => format!("{name} [core {core}] (sandball {version})"),
        None => format!("sandball {version} [core {core}]"),
    }];
    let mut field = |key: &str, value: String| lines.push(format!("  {key} = {value}"));
    field(
        "config file",
        config
            .path
            .as_ref()
            .map_or_else(|| "None".to_string(), |p| p.display().to_string()),
    );
    let dirs = ModuleStore::default_dirs();
    field(
        "configured module search path",
        format!(
            "[{}]",
            dirs.iter()
                .map(|d| format!("'{}'", d.display()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    field(
        "built-in modules",
        format!(
            "{} components",
            ModuleStore::new(ModuleStore::builtin_dirs()).names().len()
        ),
    );
    field(
        "wasmtime version",
        env!("SANDBALL_WASMTIME_VERSION").to_string(),
    );
    field("shims", Shims::get().describe());
    let finder = LegacyFinder::new(FinderConfig::from_settings(&[], None));
    field(
        "ansible-core for legacy modules",
        match finder.ansible_core_found() {
            Some((dir, how)) => found_core(dir, how),
            None => NOT_FOUND.to_string(),
        },
    );
    let picked = crate::compat::picked();
    field(
        "ansible-core followed",
        format!("{} ({})", picked.core.version(), picked.how),
    );
    field(
        "executable location",
        std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    );
    lines.join("\n")
}

/// ansible-core's version, directory and how it was found.
fn found_core(dir: &Path, how: &str) -> String {
    let version = ansible_version(dir).map_or_else(|| "unknown version".into(), |(_, _, v)| v);
    format!("{version} at {} ({how})", dir.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_version_is_asked_for_wherever_the_flag_is_before_a_double_dash() {
        assert!(asked(&words(&["sandball", "--version"])));
        assert!(asked(&words(&[
            "sandball",
            "playbook",
            "x.yml",
            "--version"
        ])));
        assert!(asked(&words(&["ansible-playbook", "-V"])));
        assert!(!asked(&words(&["sandball", "playbook", "--", "--version"])));
        assert!(!asked(&words(&["--version"])));
        assert!(!asked(&words(&["sandball", "playbook", "--versions"])));
    }
}
