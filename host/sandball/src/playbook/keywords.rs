//! Which keywords each kind of playbook object accepts, as in Ansible 2.19, plus
//! sandball's own `capabilities` (per-play and per-task capability grant changes).

/// Keywords every object (play, role entry, block, task) accepts.
const COMMON: &[&str] = &[
    "name",
    "connection",
    "port",
    "remote_user",
    "vars",
    "module_defaults",
    "environment",
    "no_log",
    "run_once",
    "ignore_errors",
    "ignore_unreachable",
    "check_mode",
    "diff",
    "any_errors_fatal",
    "throttle",
    "timeout",
    "debugger",
    "become",
    "become_user",
    "become_method",
    "become_flags",
    "become_exe",
    "collections",
    "tags",
    "capabilities",
];

/// Keywords only a play accepts.
const PLAY: &[&str] = &[
    "hosts",
    // The older name of `remote_user` (see `playbook::play`).
    "user",
    "gather_facts",
    "gather_subset",
    "gather_timeout",
    "fact_path",
    "vars_files",
    "vars_prompt",
    "roles",
    "handlers",
    "pre_tasks",
    "post_tasks",
    "tasks",
    "force_handlers",
    "max_fail_percentage",
    "serial",
    "strategy",
    "order",
];

/// Keywords of the objects that sit among tasks (role entries, blocks, tasks):
/// conditionals and delegation.
const IN_TASK_LISTS: &[&str] = &["when", "delegate_to", "delegate_facts"];

/// Keywords only a block accepts.
const BLOCK: &[&str] = &["block", "rescue", "always", "notify"];

/// Keywords only a task accepts (the `with_<lookup>` loops aside).
const TASK: &[&str] = &[
    "action",
    "local_action",
    "args",
    "register",
    "loop",
    "loop_control",
    "changed_when",
    "failed_when",
    "until",
    "retries",
    "delay",
    "async",
    "poll",
    "notify",
];

/// Every keyword some object accepts, once each; the `with_<lookup>` loops are one
/// entry, `with_<lookup>`.
#[cfg(test)]
pub(crate) fn all() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = [COMMON, PLAY, IN_TASK_LISTS, BLOCK, TASK]
        .into_iter()
        .flatten()
        .copied()
        .chain(["listen", "with_<lookup>"])
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Whether a play accepts `name`.
pub(crate) fn is_play_keyword(name: &str) -> bool {
    COMMON.contains(&name) || PLAY.contains(&name)
}

/// Whether a block accepts `name`.
pub(crate) fn is_block_keyword(name: &str) -> bool {
    COMMON.contains(&name) || IN_TASK_LISTS.contains(&name) || BLOCK.contains(&name)
}

/// Whether a role entry of a play's `roles:` accepts `name` as a keyword (its other keys
/// are role parameters).
pub(crate) fn is_role_keyword(name: &str) -> bool {
    COMMON.contains(&name) || IN_TASK_LISTS.contains(&name)
}

/// Whether `name` is a task keyword rather than an action. `listen` counts for every
/// task here, as Ansible's action detection does; only handlers may then use it.
pub(crate) fn is_task_keyword(name: &str) -> bool {
    COMMON.contains(&name)
        || IN_TASK_LISTS.contains(&name)
        || TASK.contains(&name)
        || name == "listen"
        || name
            .strip_prefix("with_")
            .is_some_and(|lookup| !lookup.is_empty())
}

/// Whether `name` is one of the keys that make a mapping a block.
pub(crate) fn is_block_section(name: &str) -> bool {
    matches!(name, "block" | "rescue" | "always")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plays() {
        for name in [
            "hosts",
            "tasks",
            "become",
            "capabilities",
            "serial",
            "vars_files",
        ] {
            assert!(is_play_keyword(name), "{name}");
        }
        for name in ["when", "loop", "register", "block", "notify"] {
            assert!(!is_play_keyword(name), "{name}");
        }
    }

    #[test]
    fn blocks() {
        for name in [
            "block",
            "rescue",
            "always",
            "when",
            "notify",
            "delegate_to",
            "become",
        ] {
            assert!(is_block_keyword(name), "{name}");
        }
        for name in ["loop", "register", "hosts", "with_items", "debug"] {
            assert!(!is_block_keyword(name), "{name}");
        }
    }

    #[test]
    fn tasks() {
        for name in [
            "register",
            "loop",
            "with_items",
            "with_fileglob",
            "listen",
            "async",
            "local_action",
            "capabilities",
        ] {
            assert!(is_task_keyword(name), "{name}");
        }
        for name in [
            "debug",
            "ansible.builtin.command",
            "hosts",
            "block",
            "with_",
        ] {
            assert!(!is_task_keyword(name), "{name}");
        }
    }

    #[test]
    fn roles_and_sections() {
        assert!(is_role_keyword("when"));
        assert!(is_role_keyword("become"));
        assert!(!is_role_keyword("loop"));
        assert!(!is_role_keyword("some_param"));
        assert!(is_block_section("rescue"));
        assert!(!is_block_section("tasks"));
    }
}
