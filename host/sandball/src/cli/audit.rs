//! `sandball audit`: what modules could touch, before anything runs.
//!
//! - `sandball audit module FILE.wasm|NAME [--json]`: one component's sha256, manifest,
//!   the interfaces it imports, and where they disagree with the manifest (exit 2
//!   when an import is not covered);
//! - `sandball audit playbook PLAYBOOK -i INV [-l …] [--json]`: per task and host, the
//!   module, its kind and the grant it would get (unknowns shown as such).

use super::CliError;
use crate::assemble::finder::FinderConfig;
use crate::assemble::{Component, ModuleStore, component};
use crate::policy::imports::{self, Finding, Import};
use crate::policy::{Policy, Subject, launchers};
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
    /// A playbook against an inventory: per task and host, module, kind and grant.
    Playbook(Box<PlaybookArgs>),
}

/// Flags of `sandball audit playbook`.
#[derive(Args, Debug)]
struct PlaybookArgs {
    /// The playbook.
    #[arg(value_name = "PLAYBOOK")]
    playbook: PathBuf,
    #[command(flatten)]
    common: super::CommonArgs,
    /// Print JSON instead of a table.
    #[arg(long = "json")]
    json: bool,
}

/// Flags of `sandball audit module`.
#[derive(Args, Debug)]
struct ModuleArgs {
    /// A component file, or a module name looked up in the module directories (a
    /// collection's full name, `ns.coll.name`, in the collections paths).
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
        AuditCommand::Playbook(a) => playbook(*a),
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
    // A collection's component (`ns.coll.name`) is found where its legacy modules are.
    let collections = FinderConfig::from_settings(module_path, None).collections;
    let store = ModuleStore::new(dirs).with_collections(collections);
    store.get(target).map_err(CliError::other)
}

fn module(a: ModuleArgs) -> Result<i32, CliError> {
    let c = find(&a.module, &a.module_path)?;
    let policy = Policy::discover(a.policy.as_deref()).map_err(CliError::options)?;
    let imports = imports::component_imports(&c.bytes).map_err(CliError::other)?;
    let subject = Subject {
        module: &c.name,
        sha256: Some(&c.sha256),
        builtin: c.builtin,
        host: None,
    };
    let mut findings = imports::findings(&c.manifest, &imports);
    findings.extend(
        launchers::policy_warnings(&policy, &subject, &c.manifest, &[], true)
            .into_iter()
            .map(|message| Finding {
                level: "warning",
                message,
            }),
    );
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

fn playbook(a: PlaybookArgs) -> Result<i32, CliError> {
    use crate::executor::plan::{self, Kind};
    if !a.playbook.exists() {
        return Err(CliError::options(format!(
            "the playbook: {} could not be found",
            a.playbook.display()
        )));
    }
    let book = crate::playbook::load(&a.playbook).map_err(CliError::parse)?;
    let dir = std::path::absolute(&a.playbook)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf));
    let callback = Box::new(crate::plugins::callback::minimal::MinimalCallback::stdout(
        false,
        a.common.verbose,
    ));
    let run = super::build_run(&a.common, callback, dir, vec![], vec![])?;
    let planned = plan::playbook(&run, &book.plays);
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&planned).map_err(CliError::other)?
        );
        return Ok(0);
    }
    let rows: Vec<[String; 5]> = planned
        .iter()
        .map(|p| {
            let (kind, grant) = match &p.kind {
                Kind::Component { grant: Some(g), .. } => ("component".to_string(), grant_text(g)),
                Kind::Component { unknown, .. } => (
                    "component".to_string(),
                    format!(
                        "unknown until it runs: {}",
                        unknown.clone().unwrap_or_default()
                    ),
                ),
                Kind::Legacy { decision, .. } => (
                    "legacy".to_string(),
                    format!("not sandboxed: all rights of the remote user (policy: {decision})"),
                ),
                Kind::Action => (
                    "action".to_string(),
                    "no module (controller or connection)".to_string(),
                ),
                Kind::Missing { message } => ("missing".to_string(), message.clone()),
            };
            let task = match &p.item {
                Some(item) => format!("{} (item={item})", p.task),
                None => p.task.clone(),
            };
            [task, p.host.clone(), p.module.clone(), kind, grant]
        })
        .collect();
    let header = ["TASK", "HOST", "MODULE", "KIND", "GRANT"].map(String::from);
    let mut widths = [0usize; 4];
    for r in std::iter::once(&header).chain(rows.iter()) {
        for (w, cell) in widths.iter_mut().zip(r.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for r in std::iter::once(&header).chain(rows.iter()) {
        println!(
            "{:w0$}  {:w1$}  {:w2$}  {:w3$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3]
        );
    }
    let mut warned: Vec<String> = Vec::new();
    for p in &planned {
        if let Kind::Component { warnings, .. } = &p.kind {
            for w in warnings {
                if !warned.contains(w) {
                    eprintln!("[WARNING]: {w}");
                    warned.push(w.clone());
                }
            }
        }
    }
    Ok(0)
}

/// A grant on one line: its capabilities, or `nothing`.
fn grant_text(g: &sandball_wire::capability::Grant) -> String {
    let caps: Vec<String> = g.to_requests().iter().map(ToString::to_string).collect();
    if caps.is_empty() {
        "nothing (clocks and random only)".to_string()
    } else {
        caps.join("; ")
    }
}
