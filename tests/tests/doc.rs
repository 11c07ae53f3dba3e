//! `sandball doc`, like ansible-doc: each module's documented options (and which are
//! required) are ansible-doc's for the same module — for the components, from their
//! manifests; for legacy modules, from their own `DOCUMENTATION`.

use sandball_e2e::Sandbox;
use sandball_e2e::compare::ansible_bin;

/// The option lines of a module's documentation: `-name` or `=name` (required), as
/// both tools mark them, before the sections that follow the options.
fn options(text: &str) -> Vec<String> {
    text.lines()
        .take_while(|l| {
            ![
                "EXAMPLES",
                "ATTRIBUTES",
                "NOTES",
                "SEE ALSO",
                "REQUIREMENTS",
                "AUTHOR",
                "RETURN",
                "CAPABILITIES",
            ]
            .iter()
            .any(|s| l.starts_with(s))
        })
        .filter(|l| l.starts_with("- ") || l.starts_with("= "))
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            Some(format!("{}{}", words.next()?, words.next()?))
        })
        .collect()
}

#[test]
fn options_are_ansible_docs() {
    let sb = Sandbox::new();
    let python = ansible_bin("ANSIBLE_BIN_DIR", "venv").join("python");
    for module in [
        // Components.
        "blockinfile",
        "copy",
        "file",
        "lineinfile",
        "ping",
        "replace",
        "setup",
        "slurp",
        "stat",
        "wait_for",
        "known_hosts",
        "cron",
        // Legacy modules, from ansible-core.
        "getent",
        "tempfile",
        "ansible.builtin.user",
    ] {
        let ours = sb
            .sandball(["doc", module])
            .env("SANDBALL_ANSIBLE_PYTHON", &python)
            .run();
        ours.assert_no_panic().assert_code(0);
        let mine = options(&ours.stdout);
        assert!(!mine.is_empty(), "{ours}");
        let Some(theirs) = sb.ansible_tool("ansible-doc", [module]) else {
            continue;
        };
        let theirs = theirs.run();
        assert_eq!(
            mine,
            options(&theirs.stdout),
            "{module}:\n{ours}\n--- ansible-doc:\n{theirs}"
        );
    }
}

#[test]
fn components_show_their_capabilities_and_snippets_and_lists() {
    let sb = Sandbox::new();
    let out = sb.sandball(["doc", "lineinfile"]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("> MODULE ansible.builtin.lineinfile (component, sandboxed: ")
        .assert_stdout_has("CAPABILITIES (what the sandbox grants it, from its arguments):\n")
        .assert_stdout_has("$path");
    let snippet = sb.sandball(["doc", "-s", "stat"]).run();
    snippet.assert_code(0);
    assert!(snippet.stdout.starts_with("- name: "), "{snippet}");
    snippet
        .assert_stdout_has("\n  stat:\n")
        .assert_stdout_has("\n      path: ")
        .assert_stdout_has("(required)");
    let python = ansible_bin("ANSIBLE_BIN_DIR", "venv").join("python");
    let list = sb
        .sandball(["doc", "-l"])
        .env("SANDBALL_ANSIBLE_PYTHON", &python)
        .run();
    list.assert_code(0);
    let names: Vec<&str> = list
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for name in [
        "ansible.builtin.copy",
        "ansible.builtin.getent",
        "ansible.builtin.user",
    ] {
        assert!(names.contains(&name), "{name} not listed:\n{list}");
    }
    assert!(
        list.stdout
            .lines()
            .any(|l| l.starts_with("ansible.builtin.copy ") && l.contains("[component]")),
        "{list}"
    );
    let missing = sb
        .sandball(["doc", "nosuchmodule"])
        .env("SANDBALL_ANSIBLE_PYTHON", &python)
        .run();
    assert_ne!(missing.code, 0, "{missing}");
    missing.assert_stderr_has("nosuchmodule");
}
