//! `sandball config`: the settings as ansible.cfg and the environment make them, like
//! `ansible-config` (`list`, `dump [--only-changed]`, `view`).

use super::CliError;
use crate::config::{Loaded, shown};
use clap::{Args, Subcommand};

/// Flags of `sandball config`.
#[derive(Args, Debug)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub action: ConfigAction,
}

/// What to show.
#[derive(Subcommand, Debug)]
pub enum ConfigAction {
    /// Every setting sandball reads: its ansible.cfg entry, variable and default.
    List,
    /// Every setting's value and where it comes from (default, env, the file).
    Dump {
        /// Only the settings whose value is not the default.
        #[arg(long = "only-changed", alias = "changed-only")]
        only_changed: bool,
    },
    /// The configuration file in use.
    View,
}

/// Runs the subcommand; returns the exit code.
pub fn run(args: ConfigArgs, loaded: &Loaded) -> Result<i32, CliError> {
    use std::fmt::Write as _;
    let mut out = String::new();
    match args.action {
        ConfigAction::View => {
            let path = loaded
                .path
                .as_ref()
                .ok_or_else(|| CliError::other("Invalid or no config file was supplied"))?;
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::other(format!("{}: {e}", path.display())))?;
            out = text;
        }
        ConfigAction::Dump { only_changed } => {
            for s in shown() {
                if only_changed && s.origin == "default" {
                    continue;
                }
                let value = s.value.as_deref().unwrap_or("None");
                let _ = writeln!(out, "{}({}) = {value}", s.variable, s.origin);
            }
        }
        ConfigAction::List => {
            for s in shown() {
                let _ = writeln!(
                    out,
                    "{}:\n  ini: {}\n  env: {}\n  default: {}",
                    s.variable,
                    s.ini,
                    s.variable,
                    s.default.unwrap_or("None")
                );
            }
        }
    }
    // A closed pipe (`| head`) ends the output, not the program.
    let _ = std::io::Write::write_all(&mut std::io::stdout(), out.as_bytes());
    Ok(0)
}
