//! `sandball run PATTERN -m MODULE -a ARGS`: the ad-hoc command (ansible's `ansible`).

use super::{CliError, CommonArgs, build_run};
use crate::plugins::callback::minimal::MinimalCallback;
use clap::Args;
use serde_json::json;
use std::path::Path;

/// Flags of `sandball run`.
#[derive(Args, Debug)]
pub struct AdhocArgs {
    /// Host pattern.
    #[arg(value_name = "PATTERN")]
    pub pattern: String,
    /// Module to run.
    #[arg(short = 'm', long = "module-name", default_value = "command")]
    pub module: String,
    /// Module arguments: `k=v` pairs, free-form text for command, or JSON.
    #[arg(short = 'a', long = "args", default_value = "")]
    pub args: String,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Runs the module on the pattern's hosts; returns the exit code.
pub async fn run(args: AdhocArgs) -> Result<i32, CliError> {
    super::vault_secrets(&args.common)?;
    let task_args = if args.args.trim_start().starts_with('{') {
        serde_json::from_str(&args.args)
            .map_err(|e| CliError::options(format!("-a is not valid JSON: {e}")))?
    } else {
        json!(args.args)
    };
    // An ad-hoc run is a one-task play, parsed like any playbook so the arguments get
    // the same k=v and free-form handling.
    let text = json!([{
        "name": format!("Ansible Ad-Hoc"),
        "hosts": args.pattern,
        "gather_facts": false,
        "tasks": [{ args.module.clone(): task_args }],
    }])
    .to_string();
    let book = crate::playbook::load_str(&text, Path::new("<ad-hoc>")).map_err(CliError::parse)?;
    let run = build_run(
        &args.common,
        Box::new(MinimalCallback::stdout()),
        None,
        vec![],
        vec![],
    )?;
    run.playbook(&book).await.map_err(CliError::parse)
}
