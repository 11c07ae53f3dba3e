//! `sandball playbook`: the ansible-playbook of sandball.

use super::{CliError, CommonArgs, build_run};
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
    /// List the hosts each play would run on, and exit.
    #[arg(long = "list-hosts")]
    pub list_hosts: bool,
    /// List the tasks each play would run (after -t/--skip-tags), and exit.
    #[arg(long = "list-tasks")]
    pub list_tasks: bool,
    /// List the tags of each play and its tasks, and exit.
    #[arg(long = "list-tags")]
    pub list_tags: bool,
    /// Start at the first task of this name (or glob); the tasks before it are skipped.
    #[arg(long = "start-at-task", value_name = "START_AT_TASK")]
    pub start_at_task: Option<String>,
    /// Ask before each task: (N)o skips it, (y)es runs it, (c)ontinue runs it and the
    /// rest without asking.
    #[arg(long = "step")]
    pub step: bool,
    /// Check the playbooks' syntax and exit.
    #[arg(long = "syntax-check")]
    pub syntax_check: bool,
    /// Output format (the stdout callback): `default` (as ansible-playbook prints),
    /// `yaml` (results as YAML), `minimal`, `oneline`, `json` (one document at the end,
    /// as ansible.posix.json) or `jsonl` (one JSON object per event, for machines).
    /// Defaults to `$ANSIBLE_STDOUT_CALLBACK` (`stdout_callback` in ansible.cfg).
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
    super::vault_secrets(&args.common.vault)?;
    for path in &args.playbooks {
        // Exit code 1, as ansible-playbook's for a playbook it cannot find.
        if !path.exists() {
            return Err(CliError::other(format!(
                "the playbook: {} could not be found",
                path.display()
            )));
        }
    }
    let (callback, warnings) =
        crate::plugins::callback::for_run(&args.output, args.common.verbose, args.common.diff)
            .map_err(CliError::options)?;
    for w in &warnings {
        callback.warning(w);
    }
    let dir = args
        .playbooks
        .first()
        .and_then(|p| std::path::absolute(p).ok())
        .and_then(|p| p.parent().map(|d| d.to_path_buf()));
    // The inventory is read before the playbooks, as ansible-playbook reads it: static
    // import names may use what ansible-core knows then — the extra vars, and over
    // them the run's magic variables and `groups`.
    let mut run = build_run(
        &args.common,
        callback,
        dir,
        args.tags.clone(),
        args.skip_tags.clone(),
    )?;
    let mut known = super::extra_vars_of(&args.common)?;
    known.extend(run.vars.magic().run_wide());
    known.insert(
        "groups".into(),
        run.inventory().groups_value().as_ref().clone(),
    );
    let mut books = Vec::new();
    for path in &args.playbooks {
        books.push(crate::playbook::load_with_vars(path, &known).map_err(CliError::playbook)?);
    }
    for b in &books {
        for w in &b.warnings {
            run.callback.warning(w);
        }
    }
    if args.syntax_check {
        for p in &args.playbooks {
            println!("\nplaybook: {}", p.display());
        }
        return Ok(0);
    }
    // An empty inventory is warned about once, whatever the plays' patterns, as
    // ansible-playbook does.
    if let Some(w) = run.inventory().empty_warning("all") {
        run.callback.warning(&w);
    }
    // `--force-handlers`, else ANSIBLE_FORCE_HANDLERS (or `force_handlers` in
    // ansible.cfg), as Ansible ranks them.
    run.options.force_handlers =
        args.force_handlers || crate::config::settings().flag("ANSIBLE_FORCE_HANDLERS", false);
    // Roles bring their own legacy modules and module_utils — those of the plays, and
    // those `include_role` names without a template —, and so does the directory of
    // each imported playbook (its `library/`), as in Ansible.
    let plays = || books.iter().flat_map(|b| &b.plays);
    let included: Vec<std::path::PathBuf> = plays().flat_map(included_roles).collect();
    let play_dirs: Vec<std::path::PathBuf> = plays().map(crate::playbook::Play::dir).collect();
    let plugin_dirs: Vec<&std::path::Path> = play_dirs
        .iter()
        .map(std::path::PathBuf::as_path)
        .chain(
            plays()
                .flat_map(|p| &p.loaded_roles)
                .map(|r| r.path.as_path()),
        )
        .chain(included.iter().map(std::path::PathBuf::as_path))
        .collect();
    run.legacy.add_plugin_dirs(&plugin_dirs);
    // Their `filter_plugins/`, `test_plugins/` and `lookup_plugins/` too, and each
    // playbook's `collections/`, for the Python plugins templates call.
    let collections: Vec<std::path::PathBuf> =
        play_dirs.iter().map(|d| d.join("collections")).collect();
    crate::plugins::loader::configure(&plugin_dirs, &collections);
    let listing = crate::executor::listing::Listing {
        hosts: args.list_hosts,
        tasks: args.list_tasks,
        tags: args.list_tags,
    };
    if listing.hosts || listing.tasks || listing.tags {
        for book in &books {
            print!(
                "{}",
                crate::executor::listing::render(&run, book, listing).map_err(CliError::parse)?
            );
        }
        return Ok(0);
    }
    if let Some(limit) = &run.options.limit {
        // A limit that leaves no host of the inventory is an error, as in
        // ansible-playbook (a play whose pattern matches nothing is only skipped).
        let inventory = run.inventory();
        let all = inventory.host_names();
        let limited = inventory
            .apply_limit(&all, limit)
            .map_err(CliError::options)?;
        if limited.hosts.is_empty() {
            for w in &limited.warnings {
                run.callback.warning(w);
            }
            return Err(CliError::other(
                "Specified inventory, host pattern and/or --limit leaves us with no hosts to target.",
            ));
        }
    }
    if args.step {
        run.options.step = Some(std::sync::Arc::new(std::sync::atomic::AtomicBool::new(
            true,
        )));
    }
    run.options.start_at_task = args
        .start_at_task
        .as_deref()
        .map(crate::executor::StartAt::new);
    if let Some(path) = &args.audit_log {
        let log = crate::policy::audit_log::AuditLog::open(path).map_err(|e| {
            CliError::options(format!("cannot open the audit log {}: {e}", path.display()))
        })?;
        run.audit_log = Some(log);
    }
    let mut code = 0;
    for book in &books {
        code = super::run_playbook(&run, book).await?;
    }
    if let Some(start) = &run.options.start_at_task
        && !start.was_reached()
    {
        eprintln!(
            "[ERROR]: No matching task \"{}\" found. Note: --start-at-task can only follow static includes.",
            start.pattern
        );
    }
    Ok(code)
}

/// The directories of the roles a play's `include_role` tasks name without a template
/// (found as the include will find them), so that their `library/` is searched.
fn included_roles(play: &crate::playbook::Play) -> Vec<std::path::PathBuf> {
    use crate::playbook::TaskItem;
    fn walk(
        items: &[TaskItem],
        base: &std::path::Path,
        search: &[String],
        out: &mut Vec<std::path::PathBuf>,
    ) {
        for item in items {
            match item {
                TaskItem::Block(b) => {
                    let own = b.keywords.collections();
                    for section in [&b.block, &b.rescue, &b.always] {
                        walk(section, base, own.as_deref().unwrap_or(search), out);
                    }
                }
                TaskItem::Task(t) => {
                    if sandball_pycompat::fqcn::short_name(&t.action) != "include_role" {
                        continue;
                    }
                    let Some(name) = t.args.get("name").and_then(serde_json::Value::as_str) else {
                        continue;
                    };
                    if crate::template::is_template(name) {
                        continue;
                    }
                    let own = t.keywords.collections();
                    let search = own.as_deref().unwrap_or(search);
                    if let Ok(dir) =
                        crate::playbook::roles::find_role(name, &t.location, base, search)
                    {
                        out.push(dir);
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    let base = play.dir();
    let search = play.keywords.collections().unwrap_or_default();
    for section in [
        &play.pre_tasks,
        &play.tasks,
        &play.post_tasks,
        &play.handlers,
    ] {
        walk(section, &base, &search, &mut out);
    }
    out
}
