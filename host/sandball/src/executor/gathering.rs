//! The task a play runs first to gather facts, as ansible-core adds it, and the
//! `gathering` setting (`implicit`, `explicit`, `smart`) that decides it.

use crate::playbook::{Play, Task};
use serde_json::Value;

/// The task a play runs first when it gathers facts, as Ansible adds it: "Gathering
/// Facts", tagged `always`, running the gather_facts action (the built-in `setup`
/// component, or ansible-core's `setup` when asked for) with the play's
/// `gather_subset` and `gather_timeout`. Plays gather unless they say
/// `gather_facts: false`, or unless `ANSIBLE_GATHERING=explicit` and they do not say
/// `gather_facts: true`; with `smart`, only hosts without facts gather.
pub(crate) fn gathering_task(play: &Play) -> Option<Task> {
    let implicit = !gathering_is("explicit");
    let gather = match &play.gather_facts {
        Some(v) => sandball_pycompat::boolean::truthy(Some(v), implicit).unwrap_or(implicit),
        None => implicit,
    };
    if !gather {
        return None;
    }
    let args = [
        ("gather_subset", &play.gather_subset),
        ("gather_timeout", &play.gather_timeout),
        ("fact_path", &play.fact_path),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some((k.to_string(), v.clone()?)))
    .collect();
    let mut task = Task {
        name: Some("Gathering Facts".into()),
        action: "ansible.builtin.gather_facts".into(),
        args,
        location: play.location.clone(),
        ..Task::default()
    };
    task.keywords.tags = vec!["always".into()];
    // Every host gathers its own facts, whatever the play's `run_once`, as in
    // ansible-core (its gathering block sets `run_once: false`).
    task.keywords.set(
        crate::playbook::Keyword::RunOnce,
        Value::Bool(false),
        play.location.clone(),
    );
    Some(task)
}

/// Whether `ANSIBLE_GATHERING` (`gathering` in ansible.cfg) is `mode` (`implicit`,
/// `explicit`, `smart`).
pub(super) fn gathering_is(mode: &str) -> bool {
    crate::config::settings()
        .get("ANSIBLE_GATHERING")
        .is_some_and(|g| g.trim().eq_ignore_ascii_case(mode))
}
