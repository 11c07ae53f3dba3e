//! `sandball doc`: a module's documentation, like `ansible-doc` — from its manifest for
//! a component (what it does, its options, and the capabilities it asks for), from its
//! `DOCUMENTATION` and `EXAMPLES` for a legacy module; `-l` lists the modules there
//! are, `-s` prints a task snippet.

use super::CliError;
use crate::assemble::ModuleStore;
use crate::assemble::finder::{FinderConfig, LegacyFinder};
use clap::Args;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Flags of `sandball doc`.
#[derive(Args, Debug)]
pub struct DocArgs {
    /// Modules to document (`file`, `ansible.builtin.file`).
    #[arg(value_name = "MODULE")]
    pub modules: Vec<String>,
    /// List the modules: components, then ansible-core's and the library's.
    #[arg(short = 'l', long = "list")]
    pub list: bool,
    /// A task snippet for each module instead of its documentation.
    #[arg(short = 's', long = "snippet")]
    pub snippet: bool,
    /// Extra directories to search for modules (components and legacy).
    #[arg(short = 'M', long = "module-path", value_name = "DIR")]
    pub module_path: Vec<PathBuf>,
}

/// One option, as documented.
#[derive(Debug, Default)]
struct Opt {
    name: String,
    description: Vec<String>,
    required: bool,
    aliases: Vec<String>,
    choices: Vec<Value>,
    default: Option<Value>,
    kind: Option<String>,
    elements: Option<String>,
}

/// A module's documentation.
#[derive(Debug, Default)]
struct Doc {
    name: String,
    /// What the heading says it is and where it comes from.
    source: String,
    short: String,
    description: Vec<String>,
    options: Vec<Opt>,
    /// Further sections: title and text (capabilities, examples).
    sections: Vec<(String, String)>,
}

/// Text or a list of texts, as `description` is written.
fn paragraphs(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Ansible's documentation markup in plain text, as ansible-doc shows it: `C(x)`,
/// `V(x)`, `O(x)`, `I(x)`, `B(x)`, `E(x)`, `RV(x)` as `` `x' ``; `M(mod)` and
/// `P(plugin)` as `[mod]`; `L(text,url)` as `text <url>`, `U(url)` as the url.
fn unmarked(text: &str) -> String {
    static MARKUP: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\b(RV|[CVOIBEMPLU])\(([^()]*)\)").expect("the markup pattern is valid")
    });
    MARKUP
        .replace_all(text, |c: &regex::Captures<'_>| match &c[1] {
            "M" | "P" => format!("[{}]", &c[2]),
            "U" => c[2].to_string(),
            "L" => match c[2].rsplit_once(',') {
                Some((t, u)) => format!("{} <{}>", t.trim(), u.trim()),
                None => c[2].to_string(),
            },
            _ => format!("`{}'", &c[2]),
        })
        .into_owned()
}

/// `text` (markup taken out) wrapped at `width` columns, every line after `indent`.
fn wrapped(text: &str, indent: usize, width: usize) -> String {
    let text = unmarked(text);
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent + line.len() + 1 + word.len() > width {
            let _ = writeln!(out, "{}{line}", " ".repeat(indent));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{}{line}", " ".repeat(indent));
    }
    out
}

/// A value as the documentation shows it (`null`, `false`, `[a, b]`).
fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(shown).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    }
}

impl Doc {
    /// From a component's manifest.
    fn component(name: &str, c: &crate::assemble::component::Component) -> Doc {
        let m = &c.manifest;
        // With `add_file_common_args`, the file arguments (`mode`, `owner`…) too.
        let common = if m.add_file_common_args {
            sandball_guest_sdk::files::common_arg_spec()
        } else {
            Vec::new()
        };
        let mut options: Vec<Opt> = m
            .argument_spec
            .iter()
            .chain(
                common
                    .iter()
                    .filter(|(n, _)| !m.argument_spec.iter().any(|(own, _)| own == n)),
            )
            // Internal arguments are not documented; `_raw_params` is the free form.
            .filter(|(name, _)| !name.starts_with('_') || name == "_raw_params")
            .map(|(name, spec)| Opt {
                name: if name == "_raw_params" {
                    "free_form".to_string()
                } else {
                    name.clone()
                },
                description: spec.description.iter().cloned().collect(),
                required: spec.required,
                aliases: spec.aliases.clone(),
                choices: spec.choices.clone().unwrap_or_default(),
                default: spec.default.clone(),
                kind: serde_json::to_value(spec.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string)),
                elements: spec
                    .elements
                    .as_ref()
                    .and_then(|e| serde_json::to_value(e).ok())
                    .and_then(|v| v.as_str().map(str::to_string)),
            })
            .collect();
        options.sort_by(|a, b| a.name.cmp(&b.name));
        let mut grants = String::new();
        for cap in &m.capabilities {
            let _ = writeln!(grants, "      {}", crate::policy::yaml_entry(cap));
        }
        if grants.is_empty() {
            grants.push_str("      none: it touches nothing outside the sandbox\n");
        }
        let mut sections = vec![(
            "CAPABILITIES (what the sandbox grants it, from its arguments)".to_string(),
            grants,
        )];
        sections.push((
            "ATTRIBUTES".to_string(),
            format!(
                "      check_mode: {}\n",
                if m.supports_check_mode {
                    "full"
                } else {
                    "none"
                }
            ),
        ));
        // A collection's component by its full name; a built-in as ansible-core's own.
        let name = match crate::assemble::component::collection_name(name) {
            Some(_) => name.to_string(),
            None => format!("ansible.builtin.{name}"),
        };
        Doc {
            name,
            source: format!(
                "component, sandboxed: {} sha256:{}",
                c.path.display(),
                c.sha256
            ),
            short: m.description.clone(),
            description: vec![m.description.clone()],
            options,
            sections,
        }
    }

    /// From a legacy module's `DOCUMENTATION` and `EXAMPLES`.
    fn legacy(name: &str, path: &std::path::Path, source: &str) -> Result<Doc, String> {
        let doc_text = python_string(source, "DOCUMENTATION")
            .ok_or_else(|| format!("module {name} ({}) has no DOCUMENTATION", path.display()))?;
        let data = crate::yaml::load_data(&doc_text, path)
            .map_err(|e| format!("the DOCUMENTATION of {}: {e}", path.display()))?;
        let mut options: Vec<Opt> = data
            .get("options")
            .and_then(Value::as_object)
            .map(|opts| {
                opts.iter()
                    .map(|(name, o)| Opt {
                        name: name.clone(),
                        description: paragraphs(o.get("description")),
                        required: o.get("required").and_then(Value::as_bool).unwrap_or(false),
                        aliases: o
                            .get("aliases")
                            .and_then(Value::as_array)
                            .map(|a| a.iter().map(shown).collect())
                            .unwrap_or_default(),
                        choices: o
                            .get("choices")
                            .map(|c| match c {
                                Value::Array(a) => a.clone(),
                                Value::Object(m) => {
                                    m.keys().map(|k| Value::String(k.clone())).collect()
                                }
                                _ => Vec::new(),
                            })
                            .unwrap_or_default(),
                        default: o.get("default").cloned(),
                        kind: o.get("type").and_then(Value::as_str).map(str::to_string),
                        elements: o
                            .get("elements")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                    })
                    .collect()
            })
            .unwrap_or_default();
        options.sort_by(|a, b| a.name.cmp(&b.name));
        let mut sections = Vec::new();
        if let Some(examples) = python_string(source, "EXAMPLES") {
            sections.push((
                "EXAMPLES".to_string(),
                examples.trim_matches('\n').to_string() + "\n",
            ));
        }
        Ok(Doc {
            name: format!(
                "ansible.builtin.{}",
                data.get("module").and_then(Value::as_str).unwrap_or(name)
            ),
            source: format!("legacy, not sandboxed: {}", path.display()),
            short: data
                .get("short_description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            description: paragraphs(data.get("description")),
            options,
            sections,
        })
    }

    /// The documentation as `ansible-doc` lays it out.
    fn render(&self) -> String {
        let mut out = format!("> MODULE {} ({})\n\n", self.name, self.source);
        for p in &self.description {
            out.push_str(&wrapped(p, 2, 72));
        }
        if !self.options.is_empty() {
            out.push_str("\nOPTIONS (= indicates it is required):\n");
        }
        for o in &self.options {
            let mark = if o.required { "=" } else { "-" };
            let head = format!("{mark} {}", o.name);
            let text = o.description.join("\n");
            let mut body = String::new();
            for p in text.lines() {
                body.push_str(&wrapped(p, head.len() + 2, 72));
            }
            let body = body.trim_start();
            let _ = write!(out, "\n{head}  {body}");
            if body.is_empty() {
                out.push('\n');
            }
            if !o.aliases.is_empty() {
                let _ = writeln!(out, "        aliases: [{}]", o.aliases.join(", "));
            }
            if !o.choices.is_empty() {
                let _ = writeln!(
                    out,
                    "        choices: [{}]",
                    o.choices.iter().map(shown).collect::<Vec<_>>().join(", ")
                );
            }
            if let Some(d) = &o.default {
                let _ = writeln!(out, "        default: {}", shown(d));
            }
            if let Some(e) = &o.elements {
                let _ = writeln!(out, "        elements: {e}");
            }
            if let Some(k) = &o.kind {
                let _ = writeln!(out, "        type: {k}");
            }
        }
        for (title, text) in &self.sections {
            let _ = write!(out, "\n{title}:\n{text}");
        }
        out
    }

    /// A task using the module, its options commented (`-s`).
    fn snippet(&self) -> String {
        let short = self.name.rsplit('.').next().unwrap_or(&self.name);
        let mut out = format!("- name: {}\n  {short}:\n", self.short.trim());
        for o in &self.options {
            let first = o.description.first().map(String::as_str).unwrap_or("");
            let first = first
                .split(". ")
                .next()
                .unwrap_or(first)
                .trim_end_matches('.');
            let req = if o.required { " (required)" } else { "" };
            let _ = writeln!(
                out,
                "      {}:{:width$}# {first}{req}",
                o.name,
                "",
                width = 22usize.saturating_sub(o.name.len()).max(1)
            );
        }
        out
    }
}

/// The text of a Python string assignment (`NAME = r'''…'''` or `"""…"""`).
fn python_string(source: &str, name: &str) -> Option<String> {
    let start = source
        .lines()
        .scan(0usize, |at, line| {
            let here = *at;
            *at += line.len() + 1;
            Some((here, line))
        })
        .find(|(_, l)| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })?
        .0;
    let rest = &source[start..];
    let rest = rest[rest.find('=')? + 1..].trim_start();
    let rest = rest.trim_start_matches(['r', 'R', 'u', 'U']);
    let quote = ["'''", "\"\"\""]
        .into_iter()
        .find(|q| rest.starts_with(q))?;
    let body = &rest[3..];
    Some(body[..body.find(quote)?].to_string())
}

/// Runs `sandball doc`; returns the exit code.
pub fn run(args: DocArgs) -> Result<i32, CliError> {
    let mut dirs = args.module_path.clone();
    dirs.extend(ModuleStore::default_dirs());
    let config = FinderConfig::from_settings(&args.module_path, None);
    let components = ModuleStore::new(dirs.clone()).with_collections(config.collections.clone());
    let finder = LegacyFinder::new(config);
    let mut out = String::new();
    if args.list {
        let mut rows: Vec<(String, String)> = Vec::new();
        for name in components.names() {
            if let Ok(c) = components.get(&name) {
                rows.push((
                    format!("ansible.builtin.{name}"),
                    format!("[component] {}", c.manifest.description),
                ));
            }
        }
        if let Some(core) = finder.ansible_core() {
            let dir = core.join("modules");
            let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
                .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
                .unwrap_or_default();
            files.sort();
            for path in files {
                let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                    continue;
                };
                if stem.starts_with('_')
                    || rows.iter().any(|(n, _)| n.ends_with(&format!(".{stem}")))
                {
                    continue;
                }
                let short = std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|src| Doc::legacy(stem, &path, &src).ok())
                    .map(|d| d.short)
                    .unwrap_or_default();
                rows.push((format!("ansible.builtin.{stem}"), short));
            }
        }
        rows.sort();
        for (name, short) in rows {
            let short: String = if short.chars().count() > 40 {
                format!("{}...", short.chars().take(37).collect::<String>())
            } else {
                short
            };
            let _ = writeln!(out, "{name:<38} {short}");
        }
    }
    for module in &args.modules {
        let short = sandball_pycompat::fqcn::short_name(module);
        let doc = if components.exists(short) {
            let c = components.get(short).map_err(CliError::other)?;
            Doc::component(short, &c)
        } else {
            let found = finder
                .find(module)
                .map_err(|e| CliError::other(format!("module {module} not found: {e}")))?;
            let source = String::from_utf8_lossy(&found.bytes);
            Doc::legacy(short, &found.path, &source).map_err(CliError::other)?
        };
        out.push_str(&if args.snippet {
            doc.snippet()
        } else {
            doc.render()
        });
    }
    if !args.list && args.modules.is_empty() {
        return Err(CliError {
            code: 5,
            message: "Incorrect options passed: name a module, or -l to list them".into(),
        });
    }
    // A closed pipe (`| head`) ends the output, not the program.
    let _ = std::io::Write::write_all(&mut std::io::stdout(), out.as_bytes());
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documentation_strings_are_read_from_python() {
        let src = "#!/usr/bin/python\nDOCUMENTATION = r'''\nmodule: x\nshort_description: Does x\noptions:\n  a:\n    description: The a.\n    required: true\n    type: str\n'''\nEXAMPLES = \"\"\"\n- x: a=1\n\"\"\"\n";
        assert_eq!(
            python_string(src, "EXAMPLES").as_deref(),
            Some("\n- x: a=1\n")
        );
        let doc = Doc::legacy("x", std::path::Path::new("x.py"), src).unwrap();
        assert_eq!(doc.short, "Does x");
        let text = doc.render();
        assert!(
            text.contains("> MODULE ansible.builtin.x (legacy, not sandboxed: x.py)"),
            "{text}"
        );
        assert!(
            text.contains("\n= a  The a.\n        type: str\n"),
            "{text}"
        );
        assert!(text.contains("EXAMPLES:\n- x: a=1\n"), "{text}");
        assert_eq!(
            doc.snippet(),
            "- name: Does x\n  x:\n      a:                     # The a (required)\n"
        );
        assert_eq!(
            unmarked("If V(true), see M(ansible.builtin.copy) and L(docs,https://x) or C(a=b)."),
            "If `true', see [ansible.builtin.copy] and docs <https://x> or `a=b'."
        );
    }
}
