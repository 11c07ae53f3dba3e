//! `sandball playbook`: the ansible-playbook of sandball.

use super::{CliError, CommonArgs, build_run};
use crate::plugins::callback::Callback;
use crate::plugins::callback::default::DefaultCallback;
use crate::plugins::callback::jsonl::JsonlCallback;
use clap::Args;
use std::path::PathBuf;

/// Flags of `sandball playbook`.
#[derive(Args, Debug)]
pub struct PlaybookArgs {
    /// Playbooks to run, in order.
    #[arg(required = true, value_name = "PLAYBOOK")]
    pub playbooks: Vec<PathBuf>,
    #[command(flatten)]
    pub common: CommonArgs,
    /// Only run plays and tasks tagged with these values (comma-separated, repeatable).
    #[arg(short = 't', long = "tags", value_delimiter = ',')]
    pub tags: Vec<String>,
    /// Only run plays and tasks whose tags do not match these values.
    #[arg(long = "skip-tags", value_delimiter = ',')]
    pub skip_tags: Vec<String>,
    /// Run handlers even for hosts that failed (the plays' default `force_handlers`).
    #[arg(long = "force-handlers")]
    pub force_handlers: bool,
    /// Check the playbooks' syntax and exit.
    #[arg(long = "syntax-check")]
    pub syntax_check: bool,
    /// Output format: `default` (as ansible-playbook prints) or `jsonl` (one JSON
    /// object per event, for machines). Defaults to `$ANSIBLE_STDOUT_CALLBACK`.
    #[arg(
        long = "output",
        value_name = "FORMAT",
        env = "ANSIBLE_STDOUT_CALLBACK",
        default_value = "default"
    )]
    pub output: String,
    /// Append one JSON line per module run to FILE: time, host, task, module sha256,
    /// grant, denials, result status (never `no_log` values).
    #[arg(long = "audit-log", value_name = "FILE")]
    pub audit_log: Option<std::path::PathBuf>,
}

/// Runs the playbooks; returns the exit code.
pub async fn run(args: PlaybookArgs) -> Result<i32, CliError> {
    let mut books = Vec::new();
    for path in &args.playbooks {
        if !path.exists() {
            return Err(CliError::options(format!(
                "the playbook: {} could not be found",
                path.display()
            )));
        }
        books.push(crate::playbook::load(path).map_err(CliError::parse)?);
    }
    let callback: Box<dyn Callback> = match args.output.as_str() {
        "default" | "ansible.builtin.default" => Box::new(DefaultCallback::stdout(
            args.common.verbose,
            args.common.diff,
        )),
        "jsonl" => Box::new(JsonlCallback::stdout()),
        other => {
            return Err(CliError::options(format!(
                "unknown output format '{other}' (choose default or jsonl)"
            )));
        }
    };
    for b in &books {
        for w in &b.warnings {
            callback.warning(w);
        }
    }
    if args.syntax_check {
        for p in &args.playbooks {
            println!("\nplaybook: {}", p.display());
        }
        return Ok(0);
    }
    let dir = args
        .playbooks
        .first()
        .and_then(|p| std::path::absolute(p).ok())
        .and_then(|p| p.parent().map(|d| d.to_path_buf()));
    let mut run = build_run(&args.common, callback, dir, args.tags, args.skip_tags)?;
    run.options.force_handlers = args.force_handlers;
    if let Some(path) = &args.audit_log {
        let log = crate::policy::audit_log::AuditLog::open(path).map_err(|e| {
            CliError::options(format!("cannot open the audit log {}: {e}", path.display()))
        })?;
        run.audit_log = Some(log);
    }
    let mut code = 0;
    for book in &books {
        code = run.playbook(book).await.map_err(CliError::parse)?;
    }
    Ok(code)
}
