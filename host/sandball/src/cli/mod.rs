//! The command line: flags as Ansible users know them, and glue. The work happens in
//! the library folders.
//!
//! Exit codes as Ansible's: 0 ok, 1 error, 2 a task failed, 4 a host was unreachable
//! or the playbook could not be parsed, 5 bad options.

mod adhoc;
mod aliases;
mod audit;
mod config;
mod doc;
mod extra_vars;
mod inventory;
mod module;
mod playbook;
mod scaffold;
mod vault;
mod version;

use clap::{Args, Parser, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Runs Ansible-style playbooks with sandboxed WebAssembly modules.
#[derive(Parser, Debug)]
#[command(name = "sandball", version, propagate_version = true, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run playbooks (like ansible-playbook).
    Playbook(playbook::PlaybookArgs),
    /// Run one module on the hosts of a pattern (like ansible).
    Run(adhoc::AdhocArgs),
    /// What modules could touch: a module's imports and manifest, or a playbook's
    /// grants per task and host, without running anything.
    Audit(audit::AuditArgs),
    /// Show the inventory: hosts, groups and variables (like ansible-inventory).
    Inventory(inventory::InventoryArgs),
    /// Encrypt and decrypt with Ansible Vault (like ansible-vault).
    Vault(vault::VaultArgs),
    /// The settings from ansible.cfg and the environment (like ansible-config).
    Config(config::ConfigArgs),
    /// A module's documentation, its options and capabilities (like ansible-doc).
    Doc(doc::DocArgs),
    /// Make a module component from one built in any language (`pack`).
    Module(module::ModuleArgs),
    /// Link ansible-playbook, ansible, ansible-inventory, ansible-vault, ansible-config
    /// and ansible-doc in DIR to sandball, for tools that run those.
    InstallAliases(aliases::AliasArgs),
}

/// Flags shared by `playbook` and `run`.
#[derive(Args, Debug, Clone)]
pub struct CommonArgs {
    /// Inventory source: a file, a directory or a comma-separated host list (repeatable).
    #[arg(
        short = 'i',
        long = "inventory",
        alias = "inventory-file",
        value_name = "INVENTORY"
    )]
    pub inventory: Vec<String>,
    /// Limit the run to hosts matching this pattern.
    #[arg(short = 'l', long = "limit", value_name = "SUBSET")]
    pub limit: Option<String>,
    /// Extra variables: `k=v k2=v2`, JSON or YAML text, or `@file` (repeatable).
    #[arg(short = 'e', long = "extra-vars", value_name = "EXTRA_VARS")]
    pub extra_vars: Vec<String>,
    /// Check mode: report what would change, change nothing.
    #[arg(short = 'C', long = "check")]
    pub check: bool,
    /// Show the differences in changed files and templates.
    #[arg(short = 'D', long = "diff")]
    pub diff: bool,
    /// Number of hosts worked on at once.
    #[arg(
        short = 'f',
        long = "forks",
        default_value_t = 50,
        value_name = "FORKS",
        value_parser = forks,
        env = "ANSIBLE_FORKS"
    )]
    pub forks: usize,
    /// More output (-vvv shows module invocations, -vvvv debug logs).
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Extra directories to search for module components (prepended to the defaults).
    #[arg(short = 'M', long = "module-path", value_name = "DIR")]
    pub module_path: Vec<PathBuf>,
    /// Capability policy file (its `[policy]` table); default: `./sandball.toml` if
    /// present, else the built-in policy.
    #[arg(long = "policy", value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Run operations as another user (become; default user root, method sudo).
    #[arg(short = 'b', long = "become")]
    pub become_: bool,
    /// The user to become.
    #[arg(
        long = "become-user",
        value_name = "BECOME_USER",
        env = "ANSIBLE_BECOME_USER"
    )]
    pub become_user: Option<String>,
    /// How to become it: sudo or su.
    #[arg(
        long = "become-method",
        value_name = "BECOME_METHOD",
        env = "ANSIBLE_BECOME_METHOD"
    )]
    pub become_method: Option<String>,
    /// Ask for the become password (read from the terminal without echo).
    #[arg(short = 'K', long = "ask-become-pass")]
    pub ask_become_pass: bool,
    /// Ask for the connection (SSH) password (read from the terminal without echo).
    #[arg(short = 'k', long = "ask-pass")]
    pub ask_pass: bool,
    #[command(flatten)]
    pub vault: VaultFlags,
    /// Connection type for hosts whose variables and plays set none (`local`, `ssh`).
    #[arg(
        short = 'c',
        long = "connection",
        value_name = "CONNECTION",
        env = "ANSIBLE_TRANSPORT"
    )]
    pub connection: Option<String>,
    /// Connection timeout in seconds for hosts whose variables set none.
    #[arg(
        short = 'T',
        long = "timeout",
        value_name = "TIMEOUT",
        env = "ANSIBLE_TIMEOUT"
    )]
    pub timeout: Option<u32>,
    /// Connect as this user where the host's variables and plays set none.
    #[arg(
        short = 'u',
        long = "user",
        value_name = "REMOTE_USER",
        env = "ANSIBLE_REMOTE_USER"
    )]
    pub user: Option<String>,
    /// SSH private key file for hosts whose variables set none.
    #[arg(
        long = "private-key",
        alias = "key-file",
        value_name = "PRIVATE_KEY_FILE",
        env = "ANSIBLE_PRIVATE_KEY_FILE"
    )]
    pub private_key: Option<String>,
    /// The become password, from a file (or a program that prints it).
    #[arg(
        long = "become-password-file",
        alias = "become-pass-file",
        value_name = "BECOME_PASSWORD_FILE",
        env = "ANSIBLE_BECOME_PASSWORD_FILE"
    )]
    pub become_password_file: Option<PathBuf>,
    /// The connection (SSH) password, from a file (or a program that prints it).
    #[arg(
        long = "connection-password-file",
        alias = "conn-pass-file",
        value_name = "CONNECTION_PASSWORD_FILE",
        env = "ANSIBLE_CONNECTION_PASSWORD_FILE"
    )]
    pub connection_password_file: Option<PathBuf>,
    /// SSH options for every host whose variables set no `ansible_ssh_common_args`
    /// (sandball reads `-o UserKnownHostsFile=…` and `-o StrictHostKeyChecking=…`).
    #[arg(
        long = "ssh-common-args",
        value_name = "SSH_COMMON_ARGS",
        allow_hyphen_values = true
    )]
    pub ssh_common_args: Option<String>,
    /// SSH options for every host whose variables set no `ansible_ssh_extra_args`.
    #[arg(
        long = "ssh-extra-args",
        value_name = "SSH_EXTRA_ARGS",
        allow_hyphen_values = true
    )]
    pub ssh_extra_args: Option<String>,
    /// Accepted for ansible's sake; without effect: sandball copies files over its own
    /// SSH session, never with scp.
    #[arg(
        long = "scp-extra-args",
        value_name = "SCP_EXTRA_ARGS",
        allow_hyphen_values = true
    )]
    pub scp_extra_args: Option<String>,
    /// Accepted for ansible's sake; without effect: sandball copies files over its own
    /// SSH session, never with sftp.
    #[arg(
        long = "sftp-extra-args",
        value_name = "SFTP_EXTRA_ARGS",
        allow_hyphen_values = true
    )]
    pub sftp_extra_args: Option<String>,
    /// Clear the fact cache of every host in the inventory (with `fact_caching =
    /// jsonfile`; the default `memory` cache holds nothing between runs).
    #[arg(long = "flush-cache")]
    pub flush_cache: bool,
}

/// The vault flags of `playbook`, `run` and `inventory`.
#[derive(Args, Debug, Clone)]
pub struct VaultFlags {
    /// A file holding the vault password, or a program printing it (repeatable).
    #[arg(
        long = "vault-password-file",
        alias = "vault-pass-file",
        value_name = "VAULT_PASSWORD_FILES",
        env = "ANSIBLE_VAULT_PASSWORD_FILE"
    )]
    pub vault_password_file: Vec<PathBuf>,
    /// A vault id: `label@file` (or `label@prompt`), repeatable.
    #[arg(long = "vault-id", value_name = "VAULT_IDS")]
    pub vault_id: Vec<String>,
    /// Ask for the vault password (read from the terminal without echo).
    #[arg(short = 'J', long = "ask-vault-pass", alias = "ask-vault-password")]
    pub ask_vault_pass: bool,
}

/// The Ansible commands sandball stands in for, each with its subcommand: a link to
/// sandball under one of these names (`ln -s sandball ansible-playbook`) acts as that
/// command, so scripts and tools written for Ansible run it.
pub const ANSIBLE_COMMANDS: &[(&str, &str)] = &[
    ("ansible-playbook", "playbook"),
    ("ansible", "run"),
    ("ansible-inventory", "inventory"),
    ("ansible-vault", "vault"),
    ("ansible-config", "config"),
    ("ansible-doc", "doc"),
];

/// The Ansible command a program name is (its file name), with its subcommand.
fn ansible_command(program: &std::ffi::OsStr) -> Option<(&'static str, &'static str)> {
    let name = std::path::Path::new(program).file_name()?.to_str()?;
    ANSIBLE_COMMANDS.iter().find(|(n, _)| *n == name).copied()
}

/// The command line as clap should read it: `sandball SUBCOMMAND …`, with the
/// subcommand put in when sandball was started under an Ansible command's name.
fn arguments(args: impl IntoIterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut args: Vec<_> = args.into_iter().collect();
    if let Some((_, sub)) = args.first().and_then(|p| ansible_command(p)) {
        args.insert(1, sub.into());
    }
    args
}

/// `ansible_inventory_sources`: each source as ansible-core lists it, a path made
/// absolute (a host list, with its comma, as given); none given, Ansible's default.
fn inventory_sources(sources: &[String]) -> Vec<String> {
    if sources.is_empty() {
        return vec!["/etc/ansible/hosts".into()];
    }
    sources
        .iter()
        .map(|s| {
            if s.contains(',') {
                return s.clone();
            }
            let expanded = crate::local_files::expand_user(s);
            std::path::absolute(&expanded)
                .unwrap_or(expanded)
                .display()
                .to_string()
        })
        .collect()
}

/// Parses the command line, runs, and returns the exit code.
pub fn main() -> i32 {
    // ansible.cfg first: the run's settings, which the flags and the rest read, are the
    // environment's, then the file's.
    let config = match crate::config::load() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("[ERROR]: {e}");
            return 5;
        }
    };
    for w in &config.warnings {
        eprintln!("[WARNING]: {w}");
    }
    if let Err(e) = crate::compat::init() {
        eprintln!("[ERROR]: {e}");
        return 5;
    }
    let args = arguments(std::env::args_os());
    if version::asked(&args) {
        let command = args.first().and_then(|p| ansible_command(p));
        let text = version::text(command.map(|(name, _)| name), &config);
        // A reader that stops early (`| head -1`) is no error.
        let _ = writeln!(std::io::stdout(), "{text}");
        return 0;
    }
    let cli = match parse(args, crate::config::settings()) {
        Ok(c) => c,
        Err(e) => {
            // Usage errors exit 2, as ansible's argument parser exits.
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let verbosity = match &cli.command {
        Command::Playbook(a) => a.common.verbose,
        Command::Run(a) => a.common.verbose,
        Command::Inventory(a) => a.verbose,
        Command::Audit(_)
        | Command::Vault(_)
        | Command::Config(_)
        | Command::Doc(_)
        | Command::Module(_)
        | Command::InstallAliases(_) => 0,
    };
    init_logging(verbosity);
    if verbosity >= 1 {
        // As ansible's commands start: from -vv, what runs, with which configuration;
        // from -v, which configuration file.
        let header = match &cli.command {
            Command::Playbook(a) => Some(("playbook", &a.common.module_path)),
            Command::Run(a) => Some(("run", &a.common.module_path)),
            _ => None,
        }
        .filter(|_| verbosity >= 2);
        if let Some((command, module_path)) = header {
            let mut searched = module_path.clone();
            searched.extend(crate::assemble::ModuleStore::default_dirs());
            println!(
                "sandball {command} [{} {}, ansible-core {} compatible]\n  config file = {}\n  configured module search path = [{}]\n  executable location = {}",
                env!("CARGO_PKG_NAME"),
                env!("CARGO_PKG_VERSION"),
                crate::compat::core().version(),
                config
                    .path
                    .as_ref()
                    .map_or_else(|| "None".to_string(), |p| p.display().to_string()),
                searched
                    .iter()
                    .map(|d| format!("'{}'", d.display()))
                    .collect::<Vec<_>>()
                    .join(", "),
                std::env::current_exe()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            );
        }
        match &config.path {
            Some(p) => println!("Using {} as config file", p.display()),
            None => println!("No config file found; using defaults"),
        }
        for unused in &config.unused {
            eprintln!("[WARNING]: {unused} in the configuration file is not used by sandball");
        }
    }
    let cli = match cli.command {
        Command::Inventory(a) => return finish(inventory::run(a)),
        Command::Audit(a) => return finish(audit::run(a)),
        Command::Vault(a) => return finish(vault::run(a)),
        Command::Config(a) => return finish(config::run(a, &config)),
        Command::Doc(a) => return finish(doc::run(a)),
        Command::Module(a) => return finish(module::run(a)),
        Command::InstallAliases(a) => return finish(aliases::run(a)),
        other => other,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("[ERROR]: cannot start the runtime: {e}");
            return 1;
        }
    };
    finish(runtime.block_on(async {
        match cli {
            Command::Playbook(a) => playbook::run(a).await,
            Command::Run(a) => adhoc::run(a).await,
            Command::Inventory(a) => inventory::run(a),
            Command::Audit(a) => audit::run(a),
            Command::Vault(a) => vault::run(a),
            Command::Config(a) => config::run(a, &config),
            Command::Doc(a) => doc::run(a),
            Command::Module(a) => module::run(a),
            Command::InstallAliases(a) => aliases::run(a),
        }
    }))
}

/// The command line parsed, the flags that read a setting's variable taking the value
/// `settings` got from ansible.cfg where neither the command line nor the environment
/// gives one ([`file_defaults`]).
fn parse(
    args: Vec<std::ffi::OsString>,
    settings: &'static crate::config::Settings,
) -> Result<Cli, clap::Error> {
    file_defaults(<Cli as clap::CommandFactory>::command(), settings)
        .try_get_matches_from(args)
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m))
}

/// `command` (and its subcommands) with the values ansible.cfg gives the flags that
/// read a setting's variable (`--forks`: `ANSIBLE_FORKS`) as their defaults: the
/// command line, then the environment, then the file, as Ansible's precedence has it.
fn file_defaults(
    command: clap::Command,
    settings: &'static crate::config::Settings,
) -> clap::Command {
    command
        .mut_args(|arg| {
            let from_file = arg.get_env().and_then(|variable| {
                settings
                    .from_file()
                    .find(|(v, _)| std::ffi::OsStr::new(v) == variable)
            });
            match from_file {
                Some((_, value)) => arg.default_value(value),
                None => arg,
            }
        })
        .mut_subcommands(|sub| file_defaults(sub, settings))
}

/// The exit code of a command's outcome, its error printed.
fn finish(outcome: Result<i32, CliError>) -> i32 {
    match outcome {
        Ok(code) => code,
        Err(e) => {
            // Shown under ansible-core 2.19's `[ERROR]:` (the older `ERROR! ` an error
            // starts with is dropped); one already shown is not shown again.
            if !e.message.is_empty() {
                let message = e.message.strip_prefix("ERROR! ").unwrap_or(&e.message);
                eprintln!("[ERROR]: {message}");
            }
            e.code
        }
    }
}

/// The outcome of running a playbook (or an ad-hoc task's play) as the command's: a
/// run that ended while it ran (an error, an interruption) has its message shown by
/// the callback, as it shows errors, and no recap.
pub(crate) async fn run_playbook(
    run: &crate::executor::Run,
    book: &crate::playbook::Playbook,
) -> Result<i32, CliError> {
    match run.playbook(book).await {
        Ok(code) => Ok(code),
        Err(crate::executor::ExecError::Aborted(abort)) => {
            if !abort.message.is_empty() {
                run.callback.error(&abort.message);
            }
            Err(CliError::said(abort.code))
        }
        Err(e) => Err(CliError::parse(e)),
    }
}

/// An error that ends the command, with its exit code.
#[derive(Debug)]
pub struct CliError {
    /// Exit code.
    pub code: i32,
    /// What to print after `[ERROR]:`.
    pub message: String,
}

/// The vault passwords the flags give (`--vault-password-file`, `--vault-id`,
/// `--ask-vault-pass`), set for the run before anything is loaded.
pub(crate) fn vault_secrets(common: &VaultFlags) -> Result<(), CliError> {
    let mut secrets = Vec::new();
    for id in &common.vault_id {
        secrets.push(vault_id_secret(id)?);
    }
    for file in &common.vault_password_file {
        secrets.push(vault_file_secret("default", file)?);
    }
    if common.ask_vault_pass {
        secrets.push(asked_vault_secret("default", false)?);
    }
    crate::vault::set_secrets(secrets);
    Ok(())
}

/// The secret of a `--vault-id`: `label@file` (or a program), `label@prompt`, or a
/// bare file (label `default`).
pub(crate) fn vault_id_secret(id: &str) -> Result<crate::vault::Secret, CliError> {
    match id.split_once('@').unwrap_or(("default", id)) {
        (label, "prompt") => asked_vault_secret(label, true),
        (label, source) => vault_file_secret(label, std::path::Path::new(source)),
    }
}

/// A vault secret read from a file, or printed by a program.
pub(crate) fn vault_file_secret(
    label: &str,
    file: &std::path::Path,
) -> Result<crate::vault::Secret, CliError> {
    Ok(crate::vault::Secret {
        label: label.to_string(),
        password: crate::vault::password_from(file).map_err(CliError::options)?,
    })
}

/// A vault secret asked for (on the terminal, else read from stdin). The prompt names
/// the vault id of a `--vault-id ID@prompt` (`Vault password (ID): `) and none for
/// `--ask-vault-pass` (`Vault password: `), as ansible-core's do: AWX answers each by
/// its own pattern.
pub(crate) fn asked_vault_secret(
    label: &str,
    named: bool,
) -> Result<crate::vault::Secret, CliError> {
    let prompt = if named {
        format!("Vault password ({label}): ")
    } else {
        "Vault password: ".to_string()
    };
    // No answer at all (the input ended) is an error, as ansible-core's: an empty
    // one is a password.
    let password = crate::plugins::callback::prompt::ask_answered(&prompt, true)
        .map_err(|e| CliError::options(format!("cannot ask for the vault password: {e}")))?
        .ok_or_else(|| {
            CliError::other(format!(
                "no answer to the vault password prompt for ({label}): the input ended"
            ))
        })?;
    Ok(crate::vault::Secret {
        label: label.to_string(),
        password: password.into_bytes(),
    })
}

/// `-f`: a number of hosts, at least one (as ansible's usage error says).
fn forks(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("The number of processes (--forks) must be >= 1".into()),
    }
}

impl CliError {
    /// A parse error (exit 4).
    pub fn parse(e: impl std::fmt::Display) -> Self {
        CliError {
            code: 4,
            message: e.to_string(),
        }
    }

    /// A playbook that cannot run, with ansible-playbook's exit code for it.
    pub fn playbook(e: crate::yaml::PlaybookError) -> Self {
        CliError {
            code: e.exit_code(),
            message: e.report(),
        }
    }

    /// An option error (exit 5).
    pub fn options(e: impl std::fmt::Display) -> Self {
        CliError {
            code: 5,
            message: e.to_string(),
        }
    }

    /// An error already shown (by the callback), with its exit code.
    pub fn said(code: i32) -> Self {
        CliError {
            code,
            message: String::new(),
        }
    }

    /// Any other error (exit 1).
    pub fn other(e: impl std::fmt::Display) -> Self {
        CliError {
            code: 1,
            message: e.to_string(),
        }
    }
}

fn init_logging(verbosity: u8) {
    let default = if verbosity >= 4 {
        "sandball=debug"
    } else {
        "warn"
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("SANDBALL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// The inventory's hosts, and the implicit `localhost` when no host has that name.
fn with_implicit_localhost(mut hosts: Vec<String>) -> Vec<String> {
    if !hosts.iter().any(|h| h == "localhost") {
        hosts.push("localhost".into());
    }
    hosts
}

/// The extra vars of every `-e`, later ones over earlier ones.
pub(crate) fn extra_vars_of(
    common: &CommonArgs,
) -> Result<serde_json::Map<String, serde_json::Value>, CliError> {
    let mut extra = serde_json::Map::new();
    for e in &common.extra_vars {
        extra.extend(extra_vars::parse(e)?);
    }
    Ok(extra)
}

/// Tags as ansible-core keeps the `-t`/`--skip-tags` ones: each once, trimmed (sorted
/// here; its order is a set's).
fn tag_set(tags: Vec<String>) -> Vec<String> {
    let set: std::collections::BTreeSet<String> = tags
        .iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect();
    set.into_iter().collect()
}

/// The playbook directory of a command that runs no playbook (`sandball run`,
/// `sandball inventory`): its `--playbook-dir`, else the `playbook_dir` setting
/// (`ANSIBLE_PLAYBOOK_DIR`, ansible.cfg), `~` and `$VAR`s expanded; absolute.
pub(crate) fn playbook_dir_of(flag: Option<&Path>) -> Result<Option<PathBuf>, CliError> {
    let settings = crate::config::settings();
    let dir = match flag {
        Some(dir) => dir.to_path_buf(),
        None => match settings
            .get("ANSIBLE_PLAYBOOK_DIR")
            .filter(|d| !d.is_empty())
        {
            Some(dir) => PathBuf::from(sandball_pycompat::expand::expand_path(dir, &|name| {
                settings.get(name).map(str::to_string)
            })),
            None => return Ok(None),
        },
    };
    std::path::absolute(&dir)
        .map(Some)
        .map_err(|e| CliError::options(format!("--playbook-dir: {e}")))
}

/// The inventory sources: `-i`, else the configured inventory (`ANSIBLE_INVENTORY`,
/// ansible.cfg).
fn inventory_source_list(common: &CommonArgs) -> Vec<String> {
    if common.inventory.is_empty() {
        crate::config::settings()
            .list("ANSIBLE_INVENTORY")
            .unwrap_or_default()
    } else {
        common.inventory.clone()
    }
}

/// The run's magic variables from the common flags ([`crate::vars::Magic`]): those
/// of the playbook in `playbook_dir`, with these (deduplicated) tags.
fn magic_of(
    common: &CommonArgs,
    playbook_dir: Option<PathBuf>,
    tags: Vec<String>,
    skip_tags: Vec<String>,
) -> crate::vars::Magic {
    crate::vars::Magic {
        playbook_dir,
        check_mode: common.check,
        diff_mode: common.diff,
        verbosity: common.verbose,
        playbook_python: crate::assemble::finder::controller_python(),
        run_tags: tag_set(tags),
        skip_tags: tag_set(skip_tags),
        forks: common.forks,
        config_file: crate::config::find().0,
        inventory_sources: inventory_sources(&inventory_source_list(common)),
        limit: common.limit.clone(),
    }
}

/// Builds the shared run state from the common flags.
pub(crate) fn build_run(
    common: &CommonArgs,
    callback: Box<dyn crate::plugins::callback::Callback>,
    playbook_dir: Option<PathBuf>,
    tags: Vec<String>,
    skip_tags: Vec<String>,
) -> Result<crate::executor::Run, CliError> {
    use crate::executor::{Run, RunOptions};
    // Whatever the vault decrypts is masked before any callback sees it.
    let callback: Box<dyn crate::plugins::callback::Callback> =
        Box::new(crate::plugins::callback::Masked(callback));
    let extra = extra_vars_of(common)?;
    let (tags, skip_tags) = (tag_set(tags), tag_set(skip_tags));
    let mut load = crate::inventory::LoadOptions::from_settings();
    load.playbook_dir.clone_from(&playbook_dir);
    load.extra_vars.clone_from(&extra);
    let sources = inventory_source_list(common);
    let inventory =
        crate::inventory::Inventory::load_with(&sources, &load).map_err(CliError::parse)?;
    crate::plugins::callback::inventory_notices(callback.as_ref(), inventory.notices());
    let mut policy =
        crate::policy::Policy::discover(common.policy.as_deref()).map_err(CliError::options)?;
    policy.bind(&inventory).map_err(CliError::options)?;
    let finder = crate::assemble::finder::FinderConfig::from_settings(
        &common.module_path,
        playbook_dir.as_deref(),
    );
    // Collections' components are found where their legacy modules are.
    let collections = finder.collections.clone();
    let legacy = crate::assemble::legacy::LegacyStore::new(finder);
    let mut dirs = common.module_path.clone();
    dirs.extend(crate::assemble::ModuleStore::default_dirs());
    let from_file = |file: &std::path::Path, what: &str| {
        crate::vault::password_from(file)
            .map(|p| crate::plugins::connection::Secret(String::from_utf8_lossy(&p).into_owned()))
            .map_err(|e| CliError::options(format!("cannot read the {what} password: {e}")))
    };
    let ask_pass = if let Some(file) = &common.connection_password_file {
        Some(from_file(file, "connection")?)
    } else if common.ask_pass {
        Some(crate::plugins::connection::Secret(
            crate::plugins::callback::prompt::ask("SSH password: ", true)
                .map_err(CliError::options)?,
        ))
    } else {
        None
    };
    for (flag, value) in [
        ("--scp-extra-args", &common.scp_extra_args),
        ("--sftp-extra-args", &common.sftp_extra_args),
    ] {
        if value.is_some() {
            callback.warning(&format!(
                "{flag} has no effect: sandball copies files over its own SSH session, not with scp or sftp"
            ));
        }
    }
    let options = RunOptions {
        connection: common.connection.clone(),
        remote_user: common.user.clone(),
        private_key: common.private_key.clone(),
        timeout: common.timeout.map(|t| t.to_string()),
        ssh_common_args: common.ssh_common_args.clone(),
        ssh_extra_args: common.ssh_extra_args.clone(),
        force_handlers: false,
        start_at_task: None,
        step: None,
        forks: common.forks,
        check: common.check,
        diff: common.diff,
        verbosity: common.verbose,
        limit: common.limit.clone(),
        tags,
        skip_tags,
        limits: crate::policy::limits_from_env().map_err(CliError::options)?,
        become_: crate::plugins::r#become::Options {
            become_: common.become_ || crate::config::settings().lenient("ANSIBLE_BECOME"),
            user: common.become_user.clone(),
            method: common.become_method.clone(),
            password: if let Some(file) = &common.become_password_file {
                Some(from_file(file, "become")?)
            } else if common.ask_become_pass
                || crate::config::settings().lenient("ANSIBLE_BECOME_ASK_PASS")
            {
                // With `-k` too, an empty answer is the SSH password, as the prompt says.
                let (prompt, fallback) = match &ask_pass {
                    Some(ssh) if common.ask_pass => {
                        ("BECOME password[defaults to SSH password]: ", Some(ssh))
                    }
                    _ => ("BECOME password: ", None),
                };
                let answer = crate::plugins::callback::prompt::ask(prompt, true)
                    .map_err(CliError::options)?;
                Some(match fallback {
                    Some(ssh) if answer.is_empty() => ssh.clone(),
                    _ => crate::plugins::connection::Secret(answer),
                })
            } else {
                None
            },
        },
    };
    let magic = magic_of(
        common,
        playbook_dir,
        options.tags.clone(),
        options.skip_tags.clone(),
    );
    // Facts kept between runs (`fact_caching`), for the inventory's hosts.
    let vars =
        match crate::vars::fact_cache::FactCache::from_settings().map_err(CliError::options)? {
            None => crate::vars::VariableManager::new(extra, magic),
            Some(cache) => {
                let (vars, warnings) = crate::vars::VariableManager::with_fact_cache(
                    extra,
                    magic,
                    cache,
                    &with_implicit_localhost(inventory.host_names()),
                    common.flush_cache,
                );
                for w in warnings {
                    callback.warning(&w);
                }
                vars
            }
        };
    let controller_cache = crate::plugins::connection::pool::controller_cache();
    crate::plugins::connection::compress::keep_in(controller_cache.as_deref());
    Ok(Run {
        templar: crate::template::Templar::new(),
        inventory: std::sync::RwLock::new(std::sync::Arc::new(inventory)),
        modules: crate::assemble::ModuleStore::new(dirs).with_collections(collections),
        legacy,
        vars,
        callback,
        stats: Default::default(),
        sessions: crate::plugins::connection::pool::SessionPool::new(controller_cache)
            .with_password(ask_pass),
        options,
        policy,
        audit_log: None,
        host_errors: Default::default(),
        warned: Default::default(),
        dynamic_changes: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::FromArgMatches;

    fn words(args: &[&str]) -> Vec<std::ffi::OsString> {
        arguments(args.iter().map(std::ffi::OsString::from))
    }

    #[test]
    fn ansible_command_names_stand_for_their_subcommands() {
        assert_eq!(
            words(&["/usr/local/bin/ansible-playbook", "-i", "inv", "site.yml"]),
            [
                "/usr/local/bin/ansible-playbook",
                "playbook",
                "-i",
                "inv",
                "site.yml"
            ]
        );
        assert_eq!(words(&["ansible", "all", "-m", "ping"])[1], "run");
        assert_eq!(words(&["ansible-inventory", "--list"])[1], "inventory");
        assert_eq!(words(&["ansible-vault", "view", "f"])[1], "vault");
        assert_eq!(
            words(&["sandball", "playbook", "site.yml"]),
            ["sandball", "playbook", "site.yml"]
        );
        let cli = Cli::try_parse_from(words(&["ansible-playbook", "site.yml"]));
        assert!(matches!(cli.map(|c| c.command), Ok(Command::Playbook(_))));
    }

    #[test]
    fn flags_take_the_files_settings_beneath_the_command_line() {
        // Variables no test environment sets.
        let file = vec![
            ("SANDBALL_TEST_FORKS", "7".to_string()),
            ("SANDBALL_TEST_USER", "deploy".to_string()),
        ];
        let settings: &'static crate::config::Settings = Box::leak(Box::new(
            crate::config::Settings::new(Vec::new(), None, file),
        ));
        let command = <Cli as clap::CommandFactory>::command().mut_subcommands(|sub| {
            sub.mut_args(|arg| match arg.get_id().as_str() {
                "forks" => arg.env("SANDBALL_TEST_FORKS"),
                "user" => arg.env("SANDBALL_TEST_USER"),
                _ => arg,
            })
        });
        let common = |args: &[&str]| {
            let matches = file_defaults(command.clone(), settings)
                .try_get_matches_from(words(args))
                .expect("the command line parses");
            match Cli::from_arg_matches(&matches).map(|c| c.command) {
                Ok(Command::Playbook(a)) => a.common,
                other => panic!("{other:?}"),
            }
        };
        let from_file = common(&["ansible-playbook", "site.yml"]);
        assert_eq!(from_file.forks, 7);
        assert_eq!(from_file.user.as_deref(), Some("deploy"));
        let flagged = common(&["ansible-playbook", "site.yml", "-f", "3", "-u", "me"]);
        assert_eq!(flagged.forks, 3);
        assert_eq!(flagged.user.as_deref(), Some("me"));
        // Without the file's settings, the flags' own defaults.
        let plain = file_defaults(command.clone(), Box::leak(Box::default()))
            .try_get_matches_from(words(&["ansible-playbook", "site.yml"]))
            .expect("the command line parses");
        match Cli::from_arg_matches(&plain).map(|c| c.command) {
            Ok(Command::Playbook(a)) => assert_eq!(a.common.forks, 50),
            other => panic!("{other:?}"),
        }
    }
}
