//! Interpreters: the shebang line of a script module, the inventory variable that
//! overrides it (`ansible_<name>_interpreter`), and `auto` discovery of Python on a node.
//!
//! As in Ansible, the variable is named after the shebang's interpreter (its basename,
//! or the program `/usr/bin/env` runs): `#!/usr/bin/ruby` → `ansible_ruby_interpreter`.
//! Only `python` gets discovery: `ansible_python_interpreter` unset, `auto`,
//! `auto_silent` or `auto_legacy*` probe the node's usual Python paths once per host.

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

/// What `ansible_python_interpreter` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PythonSetting {
    /// A path (or command) to use as it is.
    Path(String),
    /// Discover it on the node.
    Auto,
}

/// Reads `ansible_python_interpreter` (unset means `auto`).
pub fn python_setting(value: Option<&Value>) -> PythonSetting {
    match value.and_then(Value::as_str).map(str::trim) {
        None | Some("") => PythonSetting::Auto,
        Some(s) if s == "auto" || s.starts_with("auto_") => PythonSetting::Auto,
        Some(s) => PythonSetting::Path(s.to_string()),
    }
}

/// Paths probed first, in order, then versioned names looked up in `PATH`.
const PYTHON_PATHS: &[&str] = &[
    "/usr/bin/python3",
    "/usr/libexec/platform-python",
    "/usr/local/bin/python3",
];
const PYTHON_NAMES: &[&str] = &[
    "python3.14",
    "python3.13",
    "python3.12",
    "python3.11",
    "python3.10",
    "python3.9",
    "python3.8",
    "python3",
];

/// Marker before the discovered path in the probe's output.
const FOUND: &str = "SANDBALL_PYTHON=";

/// A POSIX shell command that prints the first usable Python.
pub fn discovery_command() -> String {
    format!(
        "for p in {}; do if [ -x \"$p\" ]; then echo \"{FOUND}$p\"; exit 0; fi; done; for n in {}; do p=$(command -v \"$n\" 2>/dev/null) && {{ echo \"{FOUND}$p\"; exit 0; }}; done; exit 1",
        PYTHON_PATHS.join(" "),
        PYTHON_NAMES.join(" ")
    )
}

/// The path the probe found, if any.
pub fn parse_discovery(stdout: &[u8]) -> Option<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .find_map(|l| l.strip_prefix(FOUND))
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
}

/// Where the probe looked, for the error when it finds nothing.
pub fn discovery_searched() -> String {
    let mut all: Vec<&str> = PYTHON_PATHS.to_vec();
    all.extend(PYTHON_NAMES);
    all.join(", ")
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
        assert_eq!(python_setting(None), PythonSetting::Auto);
        assert_eq!(
            python_setting(Some(&json!("auto_silent"))),
            PythonSetting::Auto
        );
        assert_eq!(
            python_setting(Some(&json!("/opt/py/bin/python3"))),
            PythonSetting::Path("/opt/py/bin/python3".into())
        );
    }

    #[test]
    fn discovery_finds_this_machines_python() {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(discovery_command())
            .output()
            .unwrap();
        let found = parse_discovery(&out.stdout).expect("a python3 on the test machine");
        assert!(std::path::Path::new(&found).is_file(), "{found}");
        assert_eq!(parse_discovery(b"noise\n"), None);
    }
}
