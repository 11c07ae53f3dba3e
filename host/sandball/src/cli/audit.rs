//! `sandball audit`: what modules could touch, before anything runs.
//!
//! - `sandball audit module FILE.wasm|NAME [--json]`: one component's sha256, manifest,
//!   the interfaces it imports, and where they disagree with the manifest (exit 2
//!   when an import is not covered).

use super::CliError;
use crate::assemble::{Component, ModuleStore, component};
use crate::policy::imports::{self, Finding, Import};
use crate::policy::{Policy, Subject};
use clap::{Args, Subcommand};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Flags of `sandball audit`.
#[derive(Args, Debug)]
pub struct AuditArgs {
    #[command(subcommand)]
    what: AuditCommand,
}

#[derive(Subcommand, Debug)]
enum AuditCommand {
    /// A module component: sha256, manifest, imports, mismatches.
    Module(ModuleArgs),
}

/// Flags of `sandball audit module`.
#[derive(Args, Debug)]
struct ModuleArgs {
    /// A component file, or a module name looked up in the module directories.
    #[arg(value_name = "FILE.wasm|NAME")]
    module: String,
    /// Print JSON instead of text.
    #[arg(long = "json")]
    json: bool,
    /// Extra directories to search for module components.
    #[arg(short = 'M', long = "module-path", value_name = "DIR")]
    module_path: Vec<PathBuf>,
    /// Capability policy file (default: `./sandball.toml` if present).
    #[arg(long = "policy", value_name = "FILE")]
    policy: Option<PathBuf>,
}

/// Runs `sandball audit`; returns the exit code.
pub fn run(args: AuditArgs) -> Result<i32, CliError> {
    match args.what {
        AuditCommand::Module(a) => module(a),
    }
}

/// The component a `FILE.wasm|NAME` argument names.
fn find(target: &str, module_path: &[PathBuf]) -> Result<Arc<Component>, CliError> {
    let path = Path::new(target);
    if path.is_file() {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(target)
            .to_string();
        return component::load(&name, path)
            .map(Arc::new)
            .map_err(CliError::other);
    }
    if target.ends_with(".wasm") {
        return Err(CliError::other(format!("{target}: no such file")));
    }
    let mut dirs = module_path.to_vec();
    dirs.extend(ModuleStore::default_dirs());
    let store = ModuleStore::new(dirs);
    store.get(target).map_err(CliError::other)
}

fn module(a: ModuleArgs) -> Result<i32, CliError> {
    let c = find(&a.module, &a.module_path)?;
    let policy = Policy::discover(a.policy.as_deref()).map_err(CliError::options)?;
    let imports = imports::component_imports(&c.bytes).map_err(CliError::other)?;
    let findings = imports::findings(&c.manifest, &imports);
    let subject = Subject {
        module: &c.name,
        sha256: Some(&c.sha256),
        builtin: c.builtin,
        host: None,
    };
    let rules: Vec<String> = policy
        .rules_for(&subject)
        .map(|r| policy.rule_location(r))
        .collect();
    let by_manifest = c.builtin || policy.rules_for(&subject).any(|r| r.manifest);
    if a.json {
        let report = json!({
            "module": c.name,
            "path": c.path,
            "sha256": c.sha256,
            "kind": "component",
            "builtin": c.builtin,
            "manifest": c.manifest,
            "imports": imports,
            "findings": findings,
            "policy": {
                "source": policy.source.as_ref().map(|p| p.display().to_string()),
                "manifest_granted": by_manifest,
                "rules": rules,
            },
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(CliError::other)?
        );
    } else {
        print!("{}", text(&c, &imports, &findings, by_manifest, &rules));
    }
    Ok(if findings.iter().any(|f| f.level == "error") {
        2
    } else {
        0
    })
}

fn text(
    c: &Component,
    imports: &[Import],
    findings: &[Finding],
    by_manifest: bool,
    rules: &[String],
) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let m = &c.manifest;
    let origin = if c.builtin { "built-in" } else { "third-party" };
    let _ = writeln!(s, "module:       {}", c.name);
    let _ = writeln!(s, "file:         {}", c.path.display());
    let _ = writeln!(s, "sha256:       {}", c.sha256);
    let _ = writeln!(s, "kind:         component ({origin})");
    let _ = writeln!(s, "description:  {}", m.description);
    let _ = writeln!(
        s,
        "check mode:   {}",
        if m.supports_check_mode { "yes" } else { "no" }
    );
    let _ = writeln!(s, "requests:");
    if m.capabilities.is_empty() {
        let _ = writeln!(s, "  nothing (clocks and random numbers only)");
    }
    for r in &m.capabilities {
        let _ = writeln!(s, "  {r}");
    }
    let _ = writeln!(
        s,
        "granted:      {}",
        match (by_manifest, c.builtin) {
            (true, true) => "what it requests, scoped to each task's arguments",
            (true, false) => "what it requests (a policy rule says manifest = true)",
            (false, _) => "nothing unless a policy rule or `capabilities:` grants it",
        }
    );
    if !rules.is_empty() {
        let _ = writeln!(s, "policy rules: {}", rules.join(", "));
    }
    let _ = writeln!(s, "imports:");
    let width = imports.iter().map(|i| i.name.len()).max().unwrap_or(0);
    for i in imports {
        let _ = writeln!(s, "  {:width$}  {}", i.name, imports::describe(i.reach));
    }
    if findings.is_empty() {
        let _ = writeln!(
            s,
            "findings:     none: every import is covered by the manifest"
        );
    } else {
        let _ = writeln!(s, "findings:");
        for f in findings {
            let _ = writeln!(s, "  {}: {}", f.level, f.message);
        }
    }
    s
}
