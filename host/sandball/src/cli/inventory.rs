//! `sandball inventory`: the ansible-inventory of sandball. `--list` prints the JSON
//! `ansible-inventory --list` prints (or YAML with `--yaml`), `--host` one host's
//! variables, `--graph` the group tree, and `--list-hosts PATTERN` the hosts a pattern
//! selects as `ansible PATTERN --list-hosts` shows them.

use super::CliError;
use crate::inventory::listing::{Listing, to_json_text};
use crate::inventory::vars::{reserved_name_warning, reserved_names};
use crate::inventory::{Inventory, InventoryError, LoadOptions, Notice};
use clap::Args;
use std::path::PathBuf;

/// Flags of `sandball inventory`.
#[derive(Args, Debug)]
pub struct InventoryArgs {
    /// Inventory source: a file, a directory, a script or a comma-separated host list
    /// (repeatable; merged in order).
    #[arg(
        short = 'i',
        long = "inventory",
        visible_alias = "inventory-file",
        value_name = "INVENTORY"
    )]
    pub inventory: Vec<String>,
    /// Print every group and host, with host variables under `_meta.hostvars`.
    #[arg(long = "list")]
    pub list: bool,
    /// Print the variables of one host.
    #[arg(long = "host", value_name = "HOST")]
    pub host: Option<String>,
    /// Print the group tree, from `all` or from the given group.
    #[arg(long = "graph", value_name = "GROUP", num_args = 0..=1, default_missing_value = "all")]
    pub graph: Option<String>,
    /// Print the hosts a pattern selects (as `ansible PATTERN --list-hosts`).
    #[arg(long = "list-hosts", value_name = "PATTERN")]
    pub list_hosts: Option<String>,
    /// With `--graph`: show each host's and group's variables.
    #[arg(long = "vars")]
    pub vars: bool,
    /// Each host's and group's own variables instead of the merged ones per host.
    #[arg(long = "export")]
    pub export: bool,
    /// YAML instead of JSON.
    #[arg(short = 'y', long = "yaml")]
    pub yaml: bool,
    /// TOML instead of JSON (with `--list`).
    #[arg(long = "toml", conflicts_with = "yaml")]
    pub toml: bool,
    /// Extra variables (`k=v`, JSON or YAML text, `@file`), which `constructed` sources
    /// with `use_extra_vars` see.
    #[arg(short = 'e', long = "extra-vars", value_name = "EXTRA_VARS")]
    pub extra_vars: Vec<String>,
    #[command(flatten)]
    pub vault: super::VaultFlags,
    /// Write to this file instead of standard output.
    #[arg(long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Only these hosts (a host pattern, or `@file`).
    #[arg(short = 'l', long = "limit", value_name = "SUBSET")]
    pub limit: Option<String>,
    /// Also read `group_vars/` and `host_vars/` beside this directory, as beside a playbook.
    #[arg(long = "playbook-dir", value_name = "DIR")]
    pub playbook_dir: Option<PathBuf>,
    /// A source no plugin can parse is an error, not a warning
    /// (`ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED`).
    #[arg(long = "strict")]
    pub strict: bool,
    /// Ignore and refresh the cache of script and plugin sources.
    #[arg(long = "flush-cache")]
    pub flush_cache: bool,
    /// More output.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// Loads the inventory and prints what was asked; returns the exit code.
pub fn run(args: InventoryArgs) -> Result<i32, CliError> {
    super::vault_secrets(&args.vault)?;
    let actions = [
        args.list,
        args.host.is_some(),
        args.graph.is_some(),
        args.list_hosts.is_some(),
    ];
    match actions.iter().filter(|a| **a).count() {
        0 => {
            return Err(CliError::options(
                "No action selected, at least one of --host, --graph or --list needs to be specified.",
            ));
        }
        1 => {}
        _ => {
            return Err(CliError::options(
                "Conflicting options used, only one of --host, --graph or --list can be used at the same time.",
            ));
        }
    }
    let mut options = LoadOptions::from_settings();
    options.any_unparsed_is_failed |= args.strict;
    options.flush_cache = args.flush_cache;
    for e in &args.extra_vars {
        options.extra_vars.extend(super::extra_vars::parse(e)?);
    }
    options.playbook_dir = super::playbook_dir_of(args.playbook_dir.as_deref())?;
    let inventory = Inventory::load_with(&args.inventory, &options).map_err(|e| match e {
        // A `group_vars/` or `host_vars/` file that does not parse (a source that does not
        // parse is a warning, or `Unparsed`): a parser error, as in Ansible.
        InventoryError::Parse { .. } => CliError::parse(e),
        _ => CliError::other(e),
    })?;
    for notice in inventory.notices() {
        match notice {
            Notice::Warning(w) => warn(w),
            Notice::Error(e) => eprintln!("[ERROR]: {e}"),
            Notice::Verbose(level, line) if args.verbose >= *level => eprintln!("{line}"),
            Notice::Verbose(..) => {}
        }
    }
    let text = if let Some(pattern) = &args.list_hosts {
        list_hosts(&inventory, pattern, args.limit.as_deref())?
    } else if let Some(host) = &args.host {
        if inventory.data().host_index(host).is_none()
            && !crate::inventory::data::is_localhost_name(host)
        {
            warn(&format!(
                "Could not match supplied host pattern, ignoring: {host}"
            ));
            return Err(CliError::options(
                "You must pass a single valid host to --host parameter",
            ));
        }
        let vars = if args.export {
            inventory.host_own_vars(host)
        } else {
            let vars = inventory.listed_vars(host);
            for r in reserved_names(&vars) {
                warn(&reserved_name_warning(r));
            }
            vars
        };
        format(&serde_json::Value::Object(vars), args.yaml)?
    } else {
        // `--graph` ignores the limit, as in ansible-inventory.
        let limit = args.limit.as_deref().filter(|_| args.graph.is_none());
        let hosts = subset(&inventory, limit)?;
        let listing = Listing::new(&inventory, &hosts, args.export);
        let text = if let Some(group) = &args.graph {
            let Some(g) = inventory.data().group_index(group) else {
                return Err(CliError::options(
                    "Pattern must be valid group name when using --graph",
                ));
            };
            listing.graph(g, args.vars)
        } else if args.yaml {
            format(&listing.yaml_tree(), true)?
        } else if args.toml {
            if !args.list {
                return Err(CliError::options("--toml goes with --list only"));
            }
            toml::to_string(&listing.toml_tree()).map_err(|e| {
                CliError::other(format!("the inventory cannot be written as TOML: {e}"))
            })?
        } else {
            to_json_text(&listing.json())
        };
        for w in listing.warnings() {
            warn(&w);
        }
        text
    };
    match &args.output {
        Some(path) => crate::local_files::write_atomically(path, text.as_bytes()).map_err(|e| {
            CliError::other(format!(
                "Unable to write to destination file ({}): {e}",
                path.display()
            ))
        })?,
        None => println!("{text}"),
    }
    Ok(0)
}

fn warn(message: &str) {
    eprintln!("[WARNING]: {message}");
}

/// The hosts of `all`, narrowed by `--limit`.
fn subset(inventory: &Inventory, limit: Option<&str>) -> Result<Vec<String>, CliError> {
    let all = inventory.select("all").map_err(CliError::other)?;
    let Some(limit) = limit else {
        return Ok(all.hosts);
    };
    let limited = inventory
        .apply_limit(&all.hosts, limit)
        .map_err(CliError::other)?;
    for w in &limited.warnings {
        warn(w);
    }
    Ok(limited.hosts)
}

/// `  hosts (N):` and the hosts, as `ansible PATTERN --list-hosts` prints them. As there, a
/// pattern that cannot be evaluated selects nothing (with a warning) unless a limit is
/// given, a limit that leaves no host is an error, and a localhost name is never left empty.
fn list_hosts(
    inventory: &Inventory,
    pattern: &str,
    limit: Option<&str>,
) -> Result<String, CliError> {
    let selected = inventory.select(pattern).and_then(|selected| {
        for w in &selected.warnings {
            warn(w);
        }
        match limit {
            Some(limit) => inventory.apply_limit(&selected.hosts, limit),
            None => Ok(selected),
        }
    });
    let hosts = match selected {
        Ok(limited) => {
            if limit.is_some() {
                for w in &limited.warnings {
                    warn(w);
                }
            }
            limited.hosts
        }
        Err(e) if limit.is_some() => return Err(CliError::other(e)),
        Err(_) => Vec::new(),
    };
    // As Ansible's `list_hosts`: a localhost name that selects nothing (the limit left it
    // out) still names the local machine.
    let hosts = if hosts.is_empty() && crate::inventory::data::is_localhost_name(pattern) {
        vec![pattern.to_string()]
    } else {
        hosts
    };
    if hosts.is_empty() {
        if limit.is_some() {
            return Err(CliError::other(
                "Specified inventory, host pattern and/or --limit leaves us with no hosts to target.",
            ));
        }
        warn("No hosts matched, nothing to do");
    }
    let mut text = format!("  hosts ({}):", hosts.len());
    for h in hosts {
        text.push_str("\n    ");
        text.push_str(&h);
    }
    Ok(text)
}

fn format(value: &serde_json::Value, yaml: bool) -> Result<String, CliError> {
    if yaml {
        let text = crate::template::yaml_dump(value).map_err(CliError::other)?;
        Ok(text.trim_end_matches('\n').to_string())
    } else {
        Ok(to_json_text(value))
    }
}
