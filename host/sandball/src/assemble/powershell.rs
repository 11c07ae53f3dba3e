//! PowerShell assembly (Module Replacer for PowerShell): one script holding the
//! arguments, every PowerShell module_util the module requires, and the module.
//!
//! `# POWERSHELL_COMMON` requires `Ansible.ModuleUtils.Legacy`; `#Requires -Module
//! Ansible.ModuleUtils.<X>` and `#AnsibleRequires -PowerShell Ansible.ModuleUtils.<X>`
//! require `<X>`. Each util is looked up as `Ansible.ModuleUtils.<X>.psm1` in the
//! module_utils directories (and their `powershell/` folders), then in ansible-core's
//! `module_utils/powershell`; utils may require others, which come first. Each util
//! is loaded with `New-Module … | Import-Module`, and the arguments are in the global
//! `$complex_args`, where `Parse-Args` looks for them. C# utils
//! (`#AnsibleRequires -CSharpUtil`) are not assembled: that is a clear error.

use super::module_type::POWERSHELL_COMMON;
use super::module_utils::CodeRoots;
use regex::Regex;
use std::path::PathBuf;
use std::sync::LazyLock;

/// Errors assembling a PowerShell module.
#[derive(Debug, thiserror::Error)]
pub enum PowerShellError {
    /// A required util is nowhere.
    #[error(
        "Could not find imported module support code for '{name}' (required by {by}). Looked for {name}.psm1 in: {searched}"
    )]
    Missing {
        /// The util.
        name: String,
        /// Who requires it.
        by: String,
        /// Where it was looked for.
        searched: String,
    },
    /// A C# util or another directive sandball does not assemble.
    #[error(
        "{by} requires {what}, which sandball does not assemble (only PowerShell module_utils are supported)"
    )]
    Unsupported {
        /// The directive's target.
        what: String,
        /// Who requires it.
        by: String,
    },
    /// A util could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

static REQUIRES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?mi)^[ \t]*#(requires[ \t]+-modules?|ansiblerequires[ \t]+-(\w+))[ \t]+([\w.]+)[ \t]*\r?$")
        .expect("static regex")
});

/// What one script requires: PowerShell util names, in order.
fn requirements(text: &str, by: &str) -> Result<Vec<String>, PowerShellError> {
    let mut out = Vec::new();
    if text.contains(POWERSHELL_COMMON) {
        out.push("Ansible.ModuleUtils.Legacy".to_string());
    }
    for c in REQUIRES.captures_iter(text) {
        let target = c[3].to_string();
        match c.get(2).map(|m| m.as_str().to_ascii_lowercase()) {
            None => {
                if target.starts_with("Ansible.ModuleUtils.") {
                    out.push(target);
                }
            }
            Some(kind) if kind == "powershell" => out.push(target),
            Some(kind) => {
                return Err(PowerShellError::Unsupported {
                    what: format!("-{kind} {target}"),
                    by: by.to_string(),
                });
            }
        }
    }
    Ok(out)
}

fn util_dirs(roots: &CodeRoots) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for d in &roots.module_utils {
        dirs.push(d.clone());
        dirs.push(d.join("powershell"));
    }
    if let Some(a) = &roots.ansible {
        dirs.push(a.join("module_utils").join("powershell"));
    }
    dirs
}

/// Adds `name` and what it requires (first) to `order`.
fn add_util(
    name: &str,
    by: &str,
    dirs: &[PathBuf],
    order: &mut Vec<(String, PathBuf, String)>,
    visiting: &mut Vec<String>,
) -> Result<(), PowerShellError> {
    if order.iter().any(|(n, _, _)| n == name) || visiting.iter().any(|n| n == name) {
        return Ok(());
    }
    let file = format!("{name}.psm1");
    let Some(path) = dirs.iter().map(|d| d.join(&file)).find(|p| p.is_file()) else {
        return Err(PowerShellError::Missing {
            name: name.to_string(),
            by: by.to_string(),
            searched: dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        });
    };
    let text = std::fs::read_to_string(&path).map_err(|source| PowerShellError::Read {
        path: path.clone(),
        source,
    })?;
    visiting.push(name.to_string());
    for dep in requirements(&text, name)? {
        add_util(&dep, name, dirs, order, visiting)?;
    }
    visiting.pop();
    order.push((name.to_string(), path, text));
    Ok(())
}

/// Comments out the directives the assembly has satisfied, so PowerShell does not
/// look for the utils on the node.
fn disarm(text: &str) -> String {
    let t = REQUIRES.replace_all(text, |c: &regex::Captures<'_>| {
        format!(
            "# sandball: satisfied by the assembly: {}",
            c[0].trim_start().trim_start_matches('#')
        )
    });
    t.replace(
        POWERSHELL_COMMON,
        "# sandball: POWERSHELL_COMMON satisfied by the assembly",
    )
}

/// Assembles a PowerShell module: `args_json` is the full argument object (internal
/// arguments included) and `text` the module after the Module Replacer substitutions.
pub fn assemble(
    module: &str,
    text: &str,
    args_json: &str,
    roots: &CodeRoots,
) -> Result<String, PowerShellError> {
    let dirs = util_dirs(roots);
    let mut order = Vec::new();
    for req in requirements(text, module)? {
        add_util(&req, module, &dirs, &mut order, &mut Vec::new())?;
    }
    let mut out = String::new();
    out.push_str("#!powershell\n");
    out.push_str(&format!(
        "# {module}: assembled by sandball (Module Replacer for PowerShell)\n"
    ));
    // A single-quoted here-string ends only at a line starting with '@; JSON text never
    // holds a raw newline, so the arguments cannot end it early.
    out.push_str("$global:complex_args = @'\n");
    out.push_str(args_json);
    out.push_str("\n'@ | ConvertFrom-Json\n");
    for (name, _, util) in &order {
        out.push_str(&format!("\n# ---- module_util {name} ----\n"));
        out.push_str(&format!("New-Module -Name '{name}' -ScriptBlock {{\n"));
        out.push_str(&disarm(util));
        if !util.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("} | Import-Module -DisableNameChecking\n");
    }
    out.push_str(&format!("\n# ---- module {module} ----\n"));
    let body = disarm(text);
    let body = match body.strip_prefix("#!") {
        Some(rest) => rest.split_once('\n').map_or("", |(_, b)| b).to_string(),
        None => body,
    };
    out.push_str(&body);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn examples() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/modules")
    }

    /// The example module and utils, assembled, match the golden file (reviewed by hand).
    #[test]
    fn the_example_matches_its_golden_file() {
        let dir = examples();
        let text = std::fs::read_to_string(dir.join("powershell/hello.ps1")).unwrap();
        let roots = CodeRoots {
            ansible: None,
            module_utils: vec![dir.join("module_utils")],
            collections: vec![],
        };
        let args = r#"{"name":"world","_ansible_check_mode":false}"#;
        let got = assemble("hello", &text, args, &roots).unwrap();
        let golden_path = dir.join("powershell/hello.assembled.ps1");
        // SANDBALL_BLESS=1 rewrites the golden file; review the diff before committing.
        if std::env::var_os("SANDBALL_BLESS").is_some() {
            std::fs::write(&golden_path, &got).unwrap();
        }
        let golden = std::fs::read_to_string(&golden_path).unwrap();
        assert_eq!(
            got, golden,
            "see examples/modules/README.md to regenerate and review"
        );
    }

    #[test]
    fn missing_and_csharp_utils_are_clear_errors() {
        let roots = CodeRoots::default();
        let err = assemble(
            "m",
            "#Requires -Module Ansible.ModuleUtils.Nope\n",
            "{}",
            &roots,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("Ansible.ModuleUtils.Nope") && err.contains("required by m"),
            "{err}"
        );
        let err = assemble(
            "m",
            "#AnsibleRequires -CSharpUtil Ansible.Basic\n",
            "{}",
            &roots,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("-csharputil Ansible.Basic"), "{err}");
    }
}
