//! Short names of fully qualified collection names (FQCN): `ansible.builtin.file`,
//! `ansible.legacy.file` and `file` all name the built-in `file`.

/// The short name of a module or action: without `ansible.builtin.`,
/// `ansible.legacy.` or `sandball.builtin.` (sandball's own components).
pub fn short_name(action: &str) -> &str {
    for prefix in ["ansible.builtin.", "ansible.legacy.", "sandball.builtin."] {
        if let Some(rest) = action.strip_prefix(prefix) {
            return rest;
        }
    }
    action
}

/// The short name of one of Ansible's own plugins: without `ansible.builtin.` or
/// `ansible.legacy.`; any other name (a `sandball.builtin.` one too) as written.
pub fn ansible_short_name(name: &str) -> &str {
    name.strip_prefix("ansible.builtin.")
        .or_else(|| name.strip_prefix("ansible.legacy."))
        .unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fqcn_names_resolve_to_built_ins() {
        assert_eq!(short_name("ansible.builtin.file"), "file");
        assert_eq!(short_name("ansible.legacy.copy"), "copy");
        assert_eq!(short_name("ping"), "ping");
        assert_eq!(short_name("community.general.foo"), "community.general.foo");
    }

    #[test]
    fn ansible_names_leave_sandballs_own() {
        assert_eq!(short_name("sandball.builtin.file"), "file");
        assert_eq!(ansible_short_name("ansible.legacy.copy"), "copy");
        assert_eq!(
            ansible_short_name("sandball.builtin.file"),
            "sandball.builtin.file"
        );
    }
}
