//! `sandball run PATTERN -m MODULE -a ARGS`: the ad-hoc command (ansible's `ansible`).

use super::{CliError, CommonArgs, build_run};
use crate::plugins::callback::minimal::MinimalCallback;
use crate::plugins::callback::tree::TreeCallback;
use crate::plugins::callback::{Callback, Many};
use clap::Args;
use serde_json::json;
use std::path::PathBuf;

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
    /// Condense the output: one line per host (the `oneline` callback).
    #[arg(short = 'o', long = "one-line")]
    pub one_line: bool,
    /// Save each host's result as JSON in DIR/HOST (the `tree` callback).
    #[arg(short = 't', long = "tree", value_name = "TREE")]
    pub tree: Option<std::path::PathBuf>,
    /// Run asynchronously, failing after this many seconds (the task's `async`).
    #[arg(short = 'B', long = "background", value_name = "SECONDS")]
    pub background: Option<u64>,
    /// With -B: check the job every this many seconds; 0 to leave it running (the
    /// task's `poll`).
    #[arg(
        short = 'P',
        long = "poll",
        value_name = "POLL_INTERVAL",
        default_value_t = 15
    )]
    pub poll: u64,
    /// The task's `timeout`: seconds before it is stopped (0: none).
    #[arg(
        long = "task-timeout",
        value_name = "TASK_TIMEOUT",
        default_value_t = 0
    )]
    pub task_timeout: u64,
    /// The directory relative paths (`files/`, `templates/`, roles) are found from, as
    /// a playbook's own directory would be.
    #[arg(long = "playbook-dir", value_name = "BASEDIR")]
    pub playbook_dir: Option<std::path::PathBuf>,
    /// List the hosts the pattern matches, and exit.
    #[arg(long = "list-hosts")]
    pub list_hosts: bool,
}

/// Runs the module on the pattern's hosts; returns the exit code.
pub async fn run(args: AdhocArgs) -> Result<i32, CliError> {
    super::vault_secrets(&args.common.vault)?;
    let task_args = if args.args.trim_start().starts_with('{') {
        serde_json::from_str(&args.args)
            .map_err(|e| CliError::options(format!("-a is not valid JSON: {e}")))?
    } else {
        json!(args.args)
    };
    // An ad-hoc run is a one-task play, parsed like any playbook so the arguments get
    // the same k=v and free-form handling.
    let mut task = json!({ args.module.clone(): task_args });
    if let Some(seconds) = args.background {
        task["async"] = json!(seconds);
        task["poll"] = json!(args.poll);
    }
    if args.task_timeout > 0 {
        task["timeout"] = json!(args.task_timeout);
    }
    let text = json!([{
        "name": format!("Ansible Ad-Hoc"),
        "hosts": args.pattern,
        "gather_facts": false,
        "tasks": [task],
    }])
    .to_string();
    // The play is read as if written in the playbook directory (`--playbook-dir`, the
    // `playbook_dir` setting), which is then its `playbook_dir`, as in `ansible`.
    let dir = super::playbook_dir_of(args.playbook_dir.as_deref())?;
    let file = match &dir {
        Some(dir) => dir.join("<ad-hoc>"),
        None => PathBuf::from("<ad-hoc>"),
    };
    let book = crate::playbook::load_str(&text, &file).map_err(CliError::parse)?;
    // `ansible` shows `minimal` results, one line each with `-o`; the stdout callback
    // of the settings (and the enabled ones) only with `bin_ansible_callbacks`, as
    // ansible-core.
    let stdout = crate::config::settings()
        .get("ANSIBLE_STDOUT_CALLBACK")
        .unwrap_or_default();
    let mut callbacks: Vec<Box<dyn Callback>> = if !args.one_line
        && crate::config::settings().flag("ANSIBLE_LOAD_CALLBACK_PLUGINS", false)
        && !stdout.is_empty()
        && stdout != "default"
    {
        let (callback, warnings) =
            crate::plugins::callback::for_run(stdout, args.common.verbose, args.common.diff)
                .map_err(CliError::options)?;
        for w in &warnings {
            callback.warning(w);
        }
        vec![callback]
    } else {
        vec![Box::new(MinimalCallback::stdout(
            args.one_line,
            args.common.verbose,
        ))]
    };
    if let Some(dir) = &args.tree {
        callbacks.push(Box::new(TreeCallback::new(dir.clone())));
    }
    // The directory's plugins and `collections/` for the Python plugins, as
    // ansible-core adds a playbook's (its `library/` is the finder's already).
    if let Some(dir) = &dir {
        crate::plugins::loader::configure(&[dir.as_path()], &[dir.join("collections")]);
    }
    let run = build_run(&args.common, Box::new(Many(callbacks)), dir, vec![], vec![])?;
    if args.list_hosts {
        let hosts =
            crate::executor::play::play_hosts(&run, &book.plays[0]).map_err(CliError::options)?;
        println!("  hosts ({}):", hosts.len());
        for h in hosts {
            println!("    {h}");
        }
        return Ok(0);
    }
    super::run_playbook(&run, &book).await
}
