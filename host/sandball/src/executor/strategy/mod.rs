//! The strategies: how the hosts of a batch go through the play. A strategy is a file
//! and a row of [`STRATEGIES`], by the name a play's `strategy` gives (with or without
//! `ansible.builtin.`): `linear` (the default: every host finishes a task before the
//! next starts), `free` (each host goes through the play on its own) and `host_pinned`
//! (free's walk). A strategy decides which hosts walk the play together and how many
//! at once; the walk itself — the play's tasks, blocks and handlers on those hosts,
//! each task on all of them together — is the play's ([`Walk`]).

pub(crate) mod free;
mod host_pinned;
mod linear;

use super::{Abort, Run};
use crate::playbook::Play;
use crate::template::Vars;
use free::FreeRun;
use futures::future::LocalBoxFuture;
use serde_json::Value;
use std::sync::Arc;

/// How a play (or one batch of it) ended, for the playbook.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Its tasks ran (or it had no hosts).
    Normally,
    /// `meta: end_play`: no more batches of this play; the playbook goes on.
    Play,
    /// Every one of its hosts failed or became unreachable: Ansible runs no more plays.
    EveryHostFailed,
    /// An error ended the whole run (see `play::abort`).
    Aborted(Abort),
}

/// The play run on some hosts of a batch, each task on all of them together; under the
/// `free` strategy, with what they share with the batch's other hosts.
pub(crate) type Walk<'a> =
    dyn Fn(&'a [String], Option<Arc<FreeRun>>) -> LocalBoxFuture<'a, Ended> + 'a;

/// A strategy: runs one batch of a play on its `hosts`, up to `forks` at a time, by
/// walking the play over them, and says how the batch ended.
pub(crate) trait Strategy {
    /// Runs the batch of `hosts` through `walk`.
    fn run<'a>(
        &self,
        hosts: &'a [String],
        forks: usize,
        walk: &'a Walk<'a>,
    ) -> LocalBoxFuture<'a, Ended>;
}

/// The strategies, by name.
const STRATEGIES: &[(&str, &dyn Strategy)] = &[
    ("linear", &linear::Linear),
    ("free", &free::Free),
    ("host_pinned", &host_pinned::HostPinned),
];

/// The strategy named `name` (with or without `ansible.builtin.`).
fn find(name: &str) -> Option<&'static dyn Strategy> {
    let name = name.strip_prefix("ansible.builtin.").unwrap_or(name);
    STRATEGIES
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, strategy)| *strategy)
}

/// The strategy a play's `strategy` names, templated with `vars`; `linear` when it
/// names none.
pub(crate) fn of_play(
    run: &Run,
    play: &Play,
    vars: &Vars,
) -> Result<&'static dyn Strategy, String> {
    let Some(value) = &play.strategy else {
        return Ok(&linear::Linear);
    };
    let name = run
        .templar
        .template(value, vars)
        .map_err(|e| format!("`strategy`: {e}"))?;
    let name = name.as_str().unwrap_or_default();
    let name = name.strip_prefix("ansible.builtin.").unwrap_or(name);
    find(name).ok_or_else(|| unknown(name))
}

/// Why a play's `strategy` is refused before anything runs: it names no strategy
/// sandball has (a template is judged once templated, when the play starts).
pub(crate) fn refused(v: &Value) -> Option<String> {
    let name = v.as_str()?;
    if name.contains("{{") {
        return None;
    }
    find(name).is_none().then(|| unknown(name))
}

/// The refusal of strategy `name`, naming those there are.
fn unknown(name: &str) -> String {
    let names: Vec<&str> = STRATEGIES.iter().map(|(known, _)| *known).collect();
    let known = match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    format!("`strategy: {name}`: sandball has the {known} strategies")
}
