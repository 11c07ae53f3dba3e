//! The check before anything runs: every task's action must exist, and every keyword a
//! playbook uses must be one sandball honours. A keyword is never read and then
//! ignored: [`support`] says, for each keyword the loader accepts, whether the
//! executor honours it (naming the end-to-end tests that show it behaving as in
//! Ansible) or refuses it, and a playbook using a refused keyword (or a value of it
//! sandball cannot honour) stops here, naming the keyword and its file:line.

use super::resolve::Found;
use super::{ExecError, Run};
use crate::playbook::{Block, Chain, Keywords, Play, Task, TaskItem};
use crate::yaml::Location;
use serde_json::Value;

/// What the executor does with a keyword. The test names are read by the unit test
/// that holds every accepted keyword to this table.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum Support {
    /// Honoured as Ansible does; these end-to-end tests (functions in `tests/tests/`)
    /// show it.
    Honoured(&'static [&'static str]),
    /// Honoured for the values the function accepts; the function says why it
    /// refuses a value. The tests show the accepted values.
    Some(fn(&Value) -> Option<String>, &'static [&'static str]),
    /// Refused before anything runs, with the reason.
    Refused(&'static str),
}

/// What the executor does with keyword `name` (any keyword the loader accepts; a
/// `with_<lookup>` loop is asked as `with_<lookup>`).
pub(crate) fn support(name: &str) -> Support {
    use Support::{Honoured, Refused, Some as Partly};
    match name {
        "name" | "hosts" | "tasks" | "register" | "when" | "loop" | "changed_when"
        | "failed_when" => Honoured(&["keywords_behave_as_in_ansible"]),
        "vars" | "block" | "handlers" | "notify" | "listen" | "loop_control" | "with_<lookup>"
        | "pre_tasks" | "post_tasks" | "action" | "args" => {
            Honoured(&["block_keywords_reach_every_task_as_in_ansible"])
        }
        "until" | "retries" | "delay" => {
            Honoured(&["until_retries_until_the_condition_holds_then_gives_up"])
        }
        "gather_facts" => Honoured(&[
            "plays_gather_facts_first_as_ansible_does",
            "explicit_gathering_and_a_missing_ansible_core",
        ]),
        "gather_subset" | "gather_timeout" | "fact_path" => {
            Honoured(&["fact_path_reaches_fact_gathering"])
        }
        "tags" => Honoured(&[
            "tags_of_plays_blocks_and_tasks_add_up_as_in_ansible",
            "tags_select_tasks_as_in_ansible",
        ]),
        "check_mode" | "diff" => Honoured(&[
            "check_mode_reports_changes_and_makes_none",
            "play_keywords_reach_every_task_as_in_ansible",
        ]),
        "no_log" | "ignore_errors" => Honoured(&[
            "play_keywords_reach_every_task_as_in_ansible",
            "block_keywords_reach_every_task_as_in_ansible",
        ]),
        "ignore_unreachable" => Honoured(&[
            "ignore_unreachable_keeps_the_host_as_in_ansible",
            "ignore_unreachable_in_a_loop_as_in_each_release",
        ]),
        "any_errors_fatal" | "throttle" => {
            Honoured(&["any_errors_fatal_throttle_and_timeout_as_in_ansible"])
        }
        "timeout" => Honoured(&[
            "any_errors_fatal_throttle_and_timeout_as_in_ansible",
            "a_module_that_sleeps_forever_is_ended_by_the_task_timeout",
            "a_node_that_stops_answering_mid_run_is_ended_by_the_task_timeout",
        ]),
        "order" => Partly(known_order, &["order_sorts_the_hosts_as_in_ansible"]),
        "environment" => Honoured(&["environment_of_every_level_reaches_the_module"]),
        "become" | "become_user" | "become_method" => Honoured(&[
            "become_runs_legacy_modules_as_the_become_user",
            "become_runs_raw_and_the_shim_session_as_another_user",
        ]),
        "become_flags" | "become_exe" => {
            Honoured(&["become_runs_legacy_modules_as_the_become_user"])
        }
        "capabilities" => Honoured(&[
            "the_keyword_widens_only_where_a_rule_allows_it",
            "every_attack_is_contained",
        ]),
        "strategy" => Partly(
            super::strategy::refused,
            &["free_strategy_lets_hosts_run_ahead_as_in_ansible"],
        ),
        "debugger" => Partly(
            only_never,
            &["play_keywords_reach_every_task_as_in_ansible"],
        ),
        "collections" => Partly(
            collection_names,
            &["collections_are_searched_for_unqualified_names_as_in_ansible"],
        ),
        "rescue" | "always" => Honoured(&["block_rescue_and_always_as_in_ansible"]),
        "connection" | "port" | "remote_user" => {
            Honoured(&["connection_keywords_yield_to_host_variables_as_in_ansible"])
        }
        "user" => Honoured(&["a_plays_user_is_its_remote_user_as_in_ansible"]),
        "run_once" | "force_handlers" => Honoured(&["run_once_and_meta_actions_as_in_ansible"]),
        "serial" | "max_fail_percentage" => {
            Honoured(&["serial_batches_and_max_fail_percentage_as_in_ansible"])
        }
        "vars_prompt" => Partly(
            known_prompt_keys,
            &["vars_prompt_without_a_terminal_takes_defaults_as_in_ansible"],
        ),
        "module_defaults" => Honoured(&["module_defaults_fill_in_arguments_as_in_ansible"]),
        "vars_files" => Honoured(&["vars_files_are_a_layer_above_play_vars_as_in_ansible"]),
        "delegate_to" | "delegate_facts" | "local_action" => {
            Honoured(&["delegate_to_runs_the_module_elsewhere_as_in_ansible"])
        }
        "async" => Honoured(&["async_tasks_are_polled_as_in_ansible"]),
        "poll" => Honoured(&["async_tasks_are_polled_as_in_ansible"]),
        "roles" => Honoured(&["roles_run_as_in_ansible"]),
        _ => Refused("sandball does not know this keyword"),
    }
}

/// Why an `order` is refused: it names no known order (a template is judged once
/// templated, when the play starts).
pub(super) fn known_order(v: &Value) -> Option<String> {
    if v.as_str().is_some_and(|o| o.contains("{{")) {
        return None;
    }
    let known = [
        "inventory",
        "reverse_inventory",
        "sorted",
        "reverse_sorted",
        "shuffle",
    ];
    (!v.as_str().is_some_and(|o| known.contains(&o))).then(|| {
        format!(
            "order {v}: the host order must be one of {}",
            known.join(", ")
        )
    })
}

/// `vars_prompt` entries sandball can ask.
fn known_prompt_keys(v: &Value) -> Option<String> {
    let known = [
        "name",
        "prompt",
        "default",
        "private",
        "confirm",
        "unsafe",
        "encrypt",
        "salt",
        "salt_size",
    ];
    let entries = match v {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    entries.into_iter().find_map(|e| {
        if e.as_object().is_some_and(|m| !m.contains_key("name")) {
            return Some("Invalid vars_prompt data structure, missing 'name' key".to_string());
        }
        let key = e
            .as_object()?
            .keys()
            .find(|k| !known.contains(&k.as_str()))?;
        Some(format!(
            "`vars_prompt`: `{key}` is not supported by sandball yet (it knows {})",
            known.join(", ")
        ))
    })
}

fn only_never(v: &Value) -> Option<String> {
    (v.as_str() != Some("never")).then(|| {
        format!("`debugger: {v}`: sandball has no task debugger (only `never` is accepted)")
    })
}

/// `collections` is a list of collection names (or one name).
fn collection_names(v: &Value) -> Option<String> {
    let names = match v {
        Value::Array(items) => items.iter().all(Value::is_string),
        other => other.is_string(),
    };
    (!names).then(|| format!("`collections: {v}`: the collections must be a list of names"))
}

/// ansible-core's warning for a `collections` list holding a template: it is used as
/// written (the name is no collection, see `resolve::action`).
fn warn_of_templates(run: &Run, value: &Value) {
    let list = crate::playbook::search_list(value);
    if list.iter().any(|c| crate::template::is_template(c)) {
        let shown = Value::Array(list.into_iter().map(Value::String).collect());
        run.callback.warning(&format!(
            "\"collections\" is not templatable, but we found: {}, it will not be templated and will be used \"as is\".",
            sandball_pycompat::pyfmt::py_repr(&shown)
        ));
    }
}

/// Refuses `keyword` written at `at` with `value`, if sandball cannot honour it.
fn check_keyword(keyword: &str, value: &Value, at: &Location) -> Result<(), ExecError> {
    let refusal = match support(keyword) {
        Support::Honoured(_) => None,
        Support::Some(accepts, _) => accepts(value),
        Support::Refused(why) => Some(format!("`{keyword}`: {why}")),
    };
    match refusal {
        None => Ok(()),
        Some(what) => Err(ExecError::Refused {
            what,
            location: at.clone(),
        }),
    }
}

/// Checks the shared keywords one object sets.
fn check_keywords(run: &Run, k: &Keywords) -> Result<(), ExecError> {
    for (keyword, setting) in k.settings() {
        check_keyword(keyword.name(), &setting.value, &setting.at)?;
        if keyword == crate::playbook::Keyword::Collections {
            warn_of_templates(run, &setting.value);
        }
        if keyword.name() == "module_defaults" {
            defaults_resolve(run, &setting.value).map_err(|what| ExecError::Refused {
                what,
                location: setting.at.clone(),
            })?;
        }
    }
    Ok(())
}

/// Every action group (`group/…`) and action a `module_defaults` value names can be
/// resolved, as ansible-core makes sure when it loads the play: an action by its name
/// alone (a short name is `ansible.legacy`'s, whatever the `collections` list).
fn defaults_resolve(run: &Run, value: &Value) -> Result<(), String> {
    let levels = match value {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    for key in levels
        .into_iter()
        .filter_map(Value::as_object)
        .flat_map(|level| level.keys())
    {
        if let Some(group) = key.strip_prefix("group/") {
            let group = crate::assemble::action_groups::actions(run.legacy.roots(), group)
                .map_err(|e| e.to_string())?;
            for warning in &group.warnings {
                run.callback.warning(warning);
            }
        } else if !crate::template::is_template(key) && super::resolve::lookup(run, key).is_err() {
            let name = match key.contains('.') {
                true => key.clone(),
                false => format!("ansible.legacy.{key}"),
            };
            return Err(format!(
                "Could not resolve action {name} in module_defaults"
            ));
        }
    }
    Ok(())
}

/// Checks, before anything runs, that every task of `play` can be run: its action
/// exists and every keyword it (or its play or block) uses is honoured.
pub fn play(run: &Run, play: &Play) -> Result<(), ExecError> {
    let at = &play.location;
    let present: [(&str, Option<Value>); 12] = [
        ("roles", (!play.roles.is_empty()).then(|| Value::Bool(true))),
        (
            "vars_files",
            (!play.vars_files.is_empty()).then(|| Value::Bool(true)),
        ),
        ("vars_prompt", play.vars_prompt.clone()),
        ("serial", play.serial.clone()),
        ("strategy", play.strategy.clone()),
        ("order", play.order.clone()),
        ("max_fail_percentage", play.max_fail_percentage.clone()),
        ("force_handlers", play.force_handlers.clone()),
        ("gather_facts", play.gather_facts.clone()),
        ("gather_subset", play.gather_subset.clone()),
        ("gather_timeout", play.gather_timeout.clone()),
        ("fact_path", play.fact_path.clone()),
    ];
    for (name, value) in present {
        if let Some(v) = value {
            check_keyword(name, &v, at)?;
        }
    }
    check_keywords(run, &play.keywords)?;
    check_handlers(&play.handlers)?;
    let root = Chain::new(&play.keywords);
    for items in [
        &play.pre_tasks,
        &play.tasks,
        &play.post_tasks,
        &play.handlers,
    ] {
        check_items(run, items, &root)?;
    }
    Ok(())
}

/// Checks the tasks (or handlers) an include brought while the play runs, as the
/// play's own were checked before it: `inherited` are the include's keywords.
pub(crate) fn included(
    run: &Run,
    items: &[TaskItem],
    inherited: &Chain<'_>,
    handlers: bool,
) -> Result<(), ExecError> {
    if handlers {
        check_handlers(items)?;
    }
    check_items(run, items, inherited)
}

/// A role cannot be a handler: Ansible refuses `include_role` there when it reads the
/// play (`import_role` is refused when the imports are read, see `playbook::imports`),
/// and a handler cannot end a role.
fn check_handlers(items: &[TaskItem]) -> Result<(), ExecError> {
    for item in items {
        match item {
            TaskItem::Task(t) => {
                let refused =
                    if sandball_pycompat::fqcn::ansible_short_name(&t.action) == "include_role" {
                        Some("Using 'include_role' as a handler is not supported.")
                    } else if super::task::meta_action(t) == Some("end_role") {
                        Some("Cannot execute 'end_role' from a handler")
                    } else {
                        None
                    };
                if let Some(what) = refused {
                    return Err(ExecError::Refused {
                        what: what.into(),
                        location: t.location.clone(),
                    });
                }
            }
            TaskItem::Block(b) => {
                for part in [&b.block, &b.rescue, &b.always] {
                    check_handlers(part)?;
                }
            }
        }
    }
    Ok(())
}

fn check_items(run: &Run, items: &[TaskItem], inherited: &Chain<'_>) -> Result<(), ExecError> {
    for item in items {
        match item {
            TaskItem::Task(t) => check_task(run, t, inherited)?,
            TaskItem::Block(b) => check_block(run, b, inherited)?,
        }
    }
    Ok(())
}

fn check_block(run: &Run, b: &Block, inherited: &Chain<'_>) -> Result<(), ExecError> {
    check_keywords(run, &b.keywords)?;
    if !b.rescue.is_empty() {
        check_keyword("rescue", &Value::Bool(true), &b.location)?;
    }
    if !b.always.is_empty() {
        check_keyword("always", &Value::Bool(true), &b.location)?;
    }
    let inner = inherited.with(&b.keywords);
    for part in [&b.block, &b.rescue, &b.always] {
        check_items(run, part, &inner)?;
    }
    Ok(())
}

fn check_task(run: &Run, t: &Task, inherited: &Chain<'_>) -> Result<(), ExecError> {
    let unsupported = |what: String| ExecError::Unsupported {
        what,
        location: t.location.clone(),
    };
    check_keywords(run, &t.keywords)?;
    for (name, value) in [("async", &t.async_), ("poll", &t.poll)] {
        if let Some(v) = value {
            check_keyword(name, v, &t.location)?;
        }
    }
    if t.loop_.is_some() {
        let lookup = t.loop_kind.lookup().unwrap_or_default();
        match super::task::loops::supported(&t.loop_kind) {
            Ok(true) => {}
            // As ansible-core reads a `with_<name>` of no lookup: no keyword at all.
            Ok(false) => {
                return Err(ExecError::Refused {
                    what: format!("'with_{lookup}' is not a valid attribute for a Task"),
                    location: t.location.clone(),
                });
            }
            Err(why) => {
                tracing::debug!("{why}");
                return Err(unsupported(format!("the `with_{lookup}` loop ({why})")));
            }
        }
    }
    if crate::template::is_template(&t.action) {
        // Named by a template: resolved when the task runs (`executor/play.rs`, `run_task`).
        return Ok(());
    }
    let short = sandball_pycompat::fqcn::short_name(&t.action);
    if short == "meta" {
        return match super::task::meta_action(t) {
            Some(
                "noop" | "flush_handlers" | "refresh_inventory" | "end_play" | "end_batch"
                | "end_host" | "clear_host_errors" | "clear_facts" | "reset_connection",
            ) => Ok(()),
            // It ends the role the task is in (`executor/meta.rs`).
            Some("end_role") if inherited.role().is_some() => Ok(()),
            Some("end_role") => Err(ExecError::Refused {
                what: "Cannot execute 'end_role' from outside of a role".into(),
                location: t.location.clone(),
            }),
            other => Err(unsupported(format!(
                "`meta: {}`",
                other.unwrap_or_default()
            ))),
        };
    }
    // An include takes only its own options, as ansible-core checks when it loads
    // the task; 2.21's `rescuable` (`executor/include.rs`) is a boolean written out.
    let valid: Vec<&str> = match short {
        "include_tasks" => vec!["file", "_raw_params", "apply"],
        "include_role" => {
            let mut valid = crate::playbook::roles::ROLE_OPTIONS.to_vec();
            valid.push("apply");
            if crate::compat::core().at_least(21) {
                valid.push("rescuable");
            }
            valid
        }
        _ => Vec::new(),
    };
    if !valid.is_empty()
        && let Some(what) = crate::playbook::imports::invalid_options(t, short, &valid)
    {
        return Err(ExecError::Refused {
            what,
            location: t.location.clone(),
        });
    }
    if short == "include_role"
        && let Some(v) = t.args.get("rescuable")
        && let Err(e) = sandball_pycompat::boolean::truthy(Some(v), true)
    {
        return Err(ExecError::Refused {
            what: format!("include_role's rescuable must be a boolean: {e}"),
            location: t.location.clone(),
        });
    }
    if short == "include_role" {
        // The files it names must be names (templates are read when it runs), as
        // ansible-core checks when it loads the task.
        for key in crate::playbook::roles::FILE_OPTIONS {
            if let Some(v) = t.args.get(key).filter(|v| !v.is_string()) {
                return Err(ExecError::Refused {
                    what: crate::playbook::roles::not_a_file_name(key, v),
                    location: t.location.clone(),
                });
            }
        }
    }
    // What an include names must be there, as ansible-core checks when it reads the
    // task (the name itself is templated when it runs).
    let named = |keys: &[&str]| {
        keys.iter()
            .any(|k| t.args.get(*k).is_some_and(|v| !v.is_null()))
    };
    let unnamed = match short {
        "include_tasks" if !named(&["file", "_raw_params"]) => {
            Some(format!("No file specified for {}", t.action))
        }
        "include_role" if !named(&["name", "role"]) => {
            Some("'name' is a required field for include_role.".to_string())
        }
        _ => None,
    };
    if let Some(what) = unnamed {
        return Err(ExecError::Refused {
            what,
            location: t.location.clone(),
        });
    }
    if matches!(short, "include_tasks" | "include_role") {
        // What they include is read when they run (`executor/include.rs`).
        return Ok(());
    }
    let unknown = |legacy: String| ExecError::UnknownAction {
        action: t.action.clone(),
        components: run.modules.searched(),
        legacy,
        location: t.location.clone(),
    };
    // A name without a collection is looked for along the task's collections.
    let collections = inherited.with(&t.keywords).collections();
    let action = super::resolve::action(run, &t.action, &collections).map_err(unknown)?;
    match super::resolve::lookup(run, &action) {
        Ok(Found::Plugin) => Ok(()),
        Ok(Found::Component(module)) => {
            run.modules.want(module);
            Ok(())
        }
        Ok(Found::Legacy(m)) if crate::assemble::module_type::documentation_only(&m.bytes) => {
            Err(unsupported(format!(
                "the `{short}` action (its module file {} holds only documentation: in ansible-core the work is done by an action plugin of that name)",
                m.path.display()
            )))
        }
        Ok(Found::Legacy(_)) => Ok(()),
        Err(searched) => Err(unknown(searched)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::playbook::keywords;

    /// Every keyword the loader accepts is either refused, or honoured with end-to-end
    /// tests that exist and mention it.
    #[test]
    fn every_accepted_keyword_is_honoured_with_tests_or_refused() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/tests");
        let mut sources: Vec<String> = Vec::new();
        let mut dirs = vec![root];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("tests/tests is readable") {
                let path = entry.expect("a directory entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    sources.push(std::fs::read_to_string(&path).expect("a test file"));
                }
            }
        }
        let mut honoured = 0;
        let mut refused = 0;
        for name in keywords::all() {
            let tests = match support(name) {
                Support::Refused(why) => {
                    assert!(
                        why != "sandball does not know this keyword",
                        "{name} is accepted by the loader but missing from the support table"
                    );
                    refused += 1;
                    continue;
                }
                Support::Honoured(tests) | Support::Some(_, tests) => tests,
            };
            assert!(!tests.is_empty(), "{name} names no test");
            // The file that defines each test must use the keyword (or, for the loops,
            // a `with_` loop).
            let word = name.trim_end_matches("<lookup>");
            for test in tests {
                let file = sources
                    .iter()
                    .find(|s| s.contains(&format!("fn {test}()")))
                    .unwrap_or_else(|| {
                        panic!("{name}: the test {test} does not exist in tests/tests")
                    });
                assert!(
                    file.contains(word),
                    "{name}: the file of {test} never mentions it"
                );
            }
            honoured += 1;
        }
        eprintln!("keywords: {honoured} honoured, {refused} refused");
    }

    #[test]
    fn values_sandball_cannot_honour_are_refused() {
        let at = Location {
            file: "p.yml".into(),
            line: 3,
            column: 5,
        };
        let refused = |k: &str, v: Value| check_keyword(k, &v, &at).unwrap_err().to_string();
        assert!(refused("strategy", "debug".into()).contains("linear, free and host_pinned"));
        assert!(refused("debugger", "on_failed".into()).contains("no task debugger"));
        assert!(refused("collections", serde_json::json!([3])).contains("list of names"));
        let prompt = refused(
            "vars_prompt",
            serde_json::json!([{"name": "pw", "hash_it": "sha512_crypt"}]),
        );
        assert!(
            prompt.contains("`vars_prompt`: `hash_it`") && prompt.contains("p.yml:3:5"),
            "{prompt}"
        );
        for ok in [
            ("async", Value::from(10)),
            ("poll", Value::from(5)),
            ("poll", Value::from(0)),
            ("strategy", Value::from("linear")),
            ("strategy", Value::from("ansible.builtin.free")),
            ("debugger", Value::from("never")),
            ("collections", serde_json::json!(["ansible.builtin"])),
            ("collections", serde_json::json!(["my.col"])),
        ] {
            assert!(check_keyword(ok.0, &ok.1, &at).is_ok(), "{ok:?}");
        }
    }
}
