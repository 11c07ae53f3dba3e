//! Interpreters: the shebang line of a script module, the inventory variable that
//! overrides it (`ansible_<name>_interpreter`), and `auto` discovery of Python on a node.
//!
//! As in Ansible, the variable is named after the shebang's interpreter (its basename,
//! or the program `/usr/bin/env` runs): `#!/usr/bin/ruby` → `ansible_ruby_interpreter`.
//! Only `python` gets discovery: `ansible_python_interpreter` (else
//! `INTERPRETER_PYTHON`) unset, `auto`, `auto_silent` or `auto_legacy*` look for the
//! names of ansible-core's fallback list with `command -v`, in order, the first found
//! winning; the executor does it for the first module a host runs and keeps the answer
//! as the host's `discovered_interpreter_python` fact, as ansible-core does.

use serde_json::Value;

/// A script's `#!` line, split into words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shebang {
    /// The interpreter path.
    pub interpreter: String,
    /// The words after it.
    pub args: Vec<String>,
}

impl Shebang {
    /// The interpreter's name: the basename, or what `env` runs.
    pub fn name(&self) -> &str {
        let base = self
            .interpreter
            .rsplit('/')
            .next()
            .unwrap_or(&self.interpreter);
        if base == "env" {
            self.args
                .iter()
                .find(|a| !a.starts_with('-'))
                .map(String::as_str)
                .unwrap_or(base)
        } else {
            base
        }
    }

    /// The inventory variable that overrides this interpreter.
    pub fn variable(&self) -> String {
        format!("ansible_{}_interpreter", self.name())
    }
}

/// The `#!` line of a payload, if it has one.
pub fn shebang(payload: &[u8]) -> Option<Shebang> {
    let rest = payload.strip_prefix(b"#!")?;
    let line = rest.split(|b| *b == b'\n').next()?;
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace().map(str::to_string);
    let interpreter = words.next()?;
    Some(Shebang {
        interpreter,
        args: words.collect(),
    })
}

/// The payload with its first line replaced by `#!<interpreter>`, keeping the
/// interpreter's arguments unless it went through `env`.
pub fn replace_shebang(payload: &[u8], old: &Shebang, interpreter: &str) -> Vec<u8> {
    let body = match payload.iter().position(|b| *b == b'\n') {
        Some(i) => &payload[i..],
        None => &[][..],
    };
    let via_env = old.interpreter.rsplit('/').next() == Some("env");
    let mut line = format!("#!{interpreter}");
    if !via_env {
        for a in &old.args {
            line.push(' ');
            line.push_str(a);
        }
    }
    let mut out = line.into_bytes();
    out.extend_from_slice(body);
    out
}

/// What `ansible_python_interpreter` (or `INTERPRETER_PYTHON`) asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PythonSetting {
    /// A path (or command) to use as it is.
    Path(String),
    /// Discover it on the node (`auto`, `auto_legacy`); `silent` (`auto_silent`,
    /// `auto_legacy_silent`) says nothing about what was found.
    Auto {
        /// Whether discovery warns about what it found.
        silent: bool,
    },
}

/// Reads the host's `ansible_python_interpreter`, else the `configured` setting
/// (`ANSIBLE_PYTHON_INTERPRETER`, `interpreter_python` in ansible.cfg); unset or empty
/// means `auto`. `minor` is the ansible-core release followed (2.`minor`): 2.21
/// removed `auto_legacy` and `auto_legacy_silent`, which are then paths like any other
/// name, as there.
pub fn python_setting(
    value: Option<&Value>,
    configured: Option<&str>,
    minor: u32,
) -> PythonSetting {
    let text = match value {
        Some(v) => v.as_str().map(str::trim),
        None => configured.map(str::trim),
    };
    let legacy = minor < 21;
    match text {
        None | Some("") | Some("auto") => PythonSetting::Auto { silent: false },
        Some("auto_silent") => PythonSetting::Auto { silent: true },
        Some("auto_legacy") if legacy => PythonSetting::Auto { silent: false },
        Some("auto_legacy_silent") if legacy => PythonSetting::Auto { silent: true },
        Some(s) => PythonSetting::Path(s.to_string()),
    }
}

/// The names discovery looks for, in order, unless the host's
/// `ansible_interpreter_python_fallback` lists others (ansible-core 2.19's
/// `INTERPRETER_PYTHON_FALLBACK`).
const FALLBACK: &[&str] = &[
    "python3.13",
    "python3.12",
    "python3.11",
    "python3.10",
    "python3.9",
    "python3.8",
    "/usr/bin/python3",
    "python3",
];

/// The Python used when discovery finds none.
pub const FALLBACK_PYTHON: &str = "/usr/bin/python3";

/// The host's list of names to look for: `ansible_interpreter_python_fallback`, else
/// that of the ansible-core release followed (2.`minor`).
pub fn fallback_list(value: Option<&Value>, minor: u32) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items.iter().map(sandball_pycompat::pyfmt::py_str).collect(),
        Some(Value::String(s)) => s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        // ansible-core 2.20's: Python 3.14 first, 3.8 no longer.
        _ if minor >= 20 => std::iter::once("python3.14")
            .chain(FALLBACK.iter().copied().filter(|n| *n != "python3.8"))
            .map(str::to_string)
            .collect(),
        _ => FALLBACK.iter().map(|s| s.to_string()).collect(),
    }
}

/// A POSIX shell command that prints, between `FOUND` and `ENDFOUND`, where each name
/// of `names` is found (`command -v` for each, as ansible-core probes).
pub fn discovery_command(names: &[String]) -> String {
    let probes: Vec<String> = names
        .iter()
        .map(|n| format!("command -v {}", sandball_pycompat::shell::quote(n)))
        .collect();
    format!("echo FOUND; {}; echo ENDFOUND", probes.join("; "))
}

/// The paths the probe found, in order (`None`: its output is not the probe's).
pub fn parse_discovery(stdout: &[u8]) -> Option<Vec<String>> {
    let text = String::from_utf8_lossy(stdout);
    let rest = text.strip_prefix("FOUND")?;
    let inside = &rest[..rest.rfind("ENDFOUND")?];
    Some(
        inside
            .lines()
            .filter(|l| l.starts_with('/'))
            .map(|l| l.trim().to_string())
            .collect(),
    )
}

/// A warning, and the help text shown after it.
pub type Warning = (String, Option<&'static str>);

/// The Python discovery picks for `host` (the first found) and ansible-core's
/// warnings about it, unless `silent`; `minor`: the release followed (2.`minor`),
/// whose documentation the help text names.
pub fn discovery_outcome(
    host: &str,
    names: &[String],
    found: Option<Vec<String>>,
    silent: bool,
    minor: u32,
) -> (String, Vec<Warning>) {
    let mut warnings = Vec::new();
    let python = match found {
        Some(paths) if paths.is_empty() => {
            if !silent {
                let tried = Value::Array(names.iter().cloned().map(Value::String).collect());
                warnings.push((
                    format!(
                        "No python interpreters found for host {} (tried {}).",
                        py_text(host),
                        sandball_pycompat::pyfmt::py_repr(&tried)
                    ),
                    None,
                ));
            }
            return (FALLBACK_PYTHON.to_string(), warnings);
        }
        Some(paths) => paths[0].clone(),
        None => {
            if !silent {
                warnings.push((
                    format!(
                        "Unhandled error in Python interpreter discovery for host {}: unexpected output from Python interpreter discovery",
                        py_text(host)
                    ),
                    None,
                ));
            }
            FALLBACK_PYTHON.to_string()
        }
    };
    if !silent {
        warnings.push((
            format!(
                "Host {} is using the discovered Python interpreter at {}, but future installation of another Python interpreter could cause a different interpreter to be discovered.",
                py_text(host),
                py_text(&python)
            ),
            Some(discovery_help(minor)),
        ));
    }
    (python, warnings)
}

/// The help text ansible-core 2.`minor` shows after its warning about a discovered
/// Python.
fn discovery_help(minor: u32) -> &'static str {
    match minor {
        ..=19 => {
            "See https://docs.ansible.com/ansible-core/2.19/reference_appendices/interpreter_discovery.html for more information."
        }
        20 => {
            "See https://docs.ansible.com/ansible-core/2.20/reference_appendices/interpreter_discovery.html for more information."
        }
        _ => {
            "See https://docs.ansible.com/ansible-core/2.21/reference_appendices/interpreter_discovery.html for more information."
        }
    }
}

/// `repr()` of a text.
fn py_text(s: &str) -> String {
    sandball_pycompat::pyfmt::py_repr(&Value::String(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shebang_names_its_variable() {
        let s = shebang(b"#!/usr/bin/ruby -w\nputs 1\n").unwrap();
        assert_eq!(s.variable(), "ansible_ruby_interpreter");
        let e = shebang(b"#!/usr/bin/env python\n").unwrap();
        assert_eq!(e.variable(), "ansible_python_interpreter");
        assert_eq!(shebang(b"echo no shebang\n"), None);
    }

    #[test]
    fn replacing_keeps_the_body_and_arguments() {
        let src = b"#!/usr/bin/ruby -w\nputs 1\n";
        let s = shebang(src).unwrap();
        assert_eq!(
            replace_shebang(src, &s, "/opt/ruby/bin/ruby"),
            b"#!/opt/ruby/bin/ruby -w\nputs 1\n"
        );
        let env = b"#!/usr/bin/env python\nprint(1)\n";
        let s = shebang(env).unwrap();
        assert_eq!(
            replace_shebang(env, &s, "/usr/bin/python3"),
            b"#!/usr/bin/python3\nprint(1)\n"
        );
    }

    #[test]
    fn python_settings() {
        let auto = PythonSetting::Auto { silent: false };
        assert_eq!(python_setting(None, None, 19), auto);
        assert_eq!(
            python_setting(Some(&json!("auto_silent")), Some("/x"), 21),
            PythonSetting::Auto { silent: true }
        );
        assert_eq!(python_setting(None, Some("auto_legacy"), 19), auto);
        assert_eq!(
            python_setting(Some(&json!("auto_legacy_silent")), None, 20),
            PythonSetting::Auto { silent: true }
        );
        // ansible-core 2.21 removed them: a name like any other.
        assert_eq!(
            python_setting(None, Some("auto_legacy"), 21),
            PythonSetting::Path("auto_legacy".into())
        );
        assert_eq!(
            python_setting(Some(&json!("/opt/py/bin/python3")), Some("auto"), 19),
            PythonSetting::Path("/opt/py/bin/python3".into())
        );
        assert_eq!(
            python_setting(None, Some(" /usr/bin/python3 "), 19),
            PythonSetting::Path("/usr/bin/python3".into())
        );
        assert_eq!(fallback_list(None, 19)[0], "python3.13");
        assert_eq!(fallback_list(None, 20)[0], "python3.14");
        assert!(!fallback_list(None, 21).contains(&"python3.8".to_string()));
    }

    #[test]
    fn discovery_probes_the_names_in_order_and_takes_the_first_found() {
        let names = fallback_list(Some(&json!(["nosuch-python", "sh", "/bin/true"])), 19);
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(discovery_command(&names))
            .output()
            .unwrap();
        let found = parse_discovery(&out.stdout).expect("the probe's own output");
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].ends_with("/sh"), "{found:?}");
        assert_eq!(found[1], "/bin/true");
        assert_eq!(parse_discovery(b"noise\n"), None);
        let (python, warnings) = discovery_outcome("web", &names, Some(found.clone()), false, 19);
        assert_eq!(python, found[0]);
        assert_eq!(
            warnings,
            [(
                format!(
                    "Host 'web' is using the discovered Python interpreter at '{python}', but future installation of another Python interpreter could cause a different interpreter to be discovered."
                ),
                Some(discovery_help(19))
            )]
        );
        assert!(
            discovery_outcome("web", &names, Some(found), true, 19)
                .1
                .is_empty()
        );
    }

    #[test]
    fn nothing_found_falls_back_to_usr_bin_python3() {
        let names = fallback_list(Some(&json!("python9, python8")), 19);
        assert_eq!(names, ["python9", "python8"]);
        let (python, warnings) = discovery_outcome("h", &names, Some(vec![]), false, 19);
        assert_eq!(python, "/usr/bin/python3");
        assert_eq!(
            warnings,
            [(
                "No python interpreters found for host 'h' (tried ['python9', 'python8'])."
                    .to_string(),
                None
            )]
        );
        assert_eq!(fallback_list(None, 19)[0], "python3.13");
    }
}
