//! Every magic variable a task sees — inside a role included by another role, in an
//! extended loop, with `--limit`, `--forks` and `-t` given — compared with
//! ansible-playbook's: whether it is defined, its type, and its value wherever the two
//! tools must agree (`ansible_version` by its keys and release numbers).

use sandball_e2e::Sandbox;
use sandball_e2e::compare::result;
use serde_json::Value;

/// The names checked, and whether their values are compared (`false`: the type only —
/// the facts, `hostvars` and `omit` are objects of each tool's own).
const NAMES: &[(&str, bool)] = &[
    ("ansible_version", true),
    ("ansible_play_hosts", true),
    ("ansible_play_batch", true),
    ("ansible_play_hosts_all", true),
    ("play_hosts", true),
    ("ansible_play_name", true),
    ("groups", true),
    ("group_names", true),
    ("inventory_hostname", true),
    ("inventory_hostname_short", true),
    ("inventory_dir", true),
    ("inventory_file", true),
    ("playbook_dir", true),
    ("role_path", true),
    ("role_name", true),
    ("role_names", true),
    ("ansible_role_names", true),
    ("ansible_play_role_names", true),
    ("ansible_dependent_role_names", true),
    ("ansible_role_name", true),
    ("ansible_collection_name", true),
    ("ansible_parent_role_names", true),
    ("ansible_parent_role_paths", true),
    ("ansible_check_mode", true),
    ("ansible_diff_mode", true),
    ("ansible_forks", true),
    ("ansible_verbosity", true),
    ("ansible_run_tags", true),
    ("ansible_skip_tags", true),
    ("ansible_limit", true),
    ("ansible_config_file", true),
    ("ansible_playbook_python", true),
    ("ansible_inventory_sources", true),
    ("ansible_loop_var", true),
    ("ansible_index_var", true),
    ("ansible_loop", true),
    ("ansible_facts", false),
    ("hostvars", false),
    ("omit", false),
];

/// The role task that shows them all: `[type]` or `[type, value]`, or `undefined`.
fn dump_task() -> String {
    let mut task = String::from("- name: magic\n  debug:\n    msg:\n");
    for (name, value) in NAMES {
        let value = if *value {
            format!(", {name}")
        } else {
            String::new()
        };
        task.push_str(&format!(
            "      {name}: \"{{{{ [{name} | type_debug{value}] if {name} is defined else 'undefined' }}}}\"\n"
        ));
    }
    task.push_str("  loop: [x]\n  loop_control: {loop_var: it, index_var: idx, extended: true}\n");
    task
}

/// A type as both tools can name it: JSON has no tuples (ansible-core's tag lists and
/// inventory sources are), sandball's `hostvars` is a mapping and its `omit` a marker
/// string, where ansible-core has objects of their own.
fn comparable_type(name: &str, ty: &str) -> String {
    match (name, ty) {
        (_, "tuple") => "list".into(),
        ("hostvars", "HostVars") => "dict".into(),
        ("omit", "_OmitType") => "str".into(),
        _ => ty.into(),
    }
}

#[test]
fn magic_variables_are_those_of_ansible_playbook() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["web1.example.com"]);
    sb.write("roles/inner/tasks/main.yml", &dump_task());
    sb.write(
        "roles/outer/tasks/main.yml",
        "- include_role: {name: inner}\n",
    );
    let pb = sb.write(
        "play.yml",
        "- name: the play\n  hosts: all\n  gather_facts: false\n  roles: [outer]\n",
    );
    let config = sb.write("ansible.cfg", "[defaults]\n");
    let work = sb.dir("work");
    let flags = [
        "--limit",
        "all",
        "--forks",
        "7",
        "--skip-tags",
        "never_used",
    ];
    let ours = sb
        .play_with_core(&pb, &work, &flags)
        .env("ANSIBLE_CONFIG", &config)
        .run();
    ours.assert_no_panic().assert_code(0);
    let ours_shown = result(&ours, "inner : magic", &work);
    let ours_shown = &ours_shown["msg"];
    // Without ansible-playbook, the keys ansible-core 2.19 gives `ansible_version`.
    assert_eq!(
        ours_shown["ansible_version"][1]["major"],
        Value::from(2),
        "{ours}"
    );
    let Some(theirs) = sb.ansible_play(&pb, &work, &flags) else {
        return;
    };
    let theirs = theirs.env("ANSIBLE_CONFIG", &config).run();
    assert_eq!(theirs.code, 0, "{theirs}");
    let theirs_shown = result(&theirs, "inner : magic", &work);
    let theirs_shown = &theirs_shown["msg"];
    for (name, _) in NAMES {
        let (a, b) = (&ours_shown[*name], &theirs_shown[*name]);
        let context = format!("{name}: sandball {a}, ansible-playbook {b}");
        let (Some(a), Some(b)) = (a.as_array(), b.as_array()) else {
            assert_eq!(a, b, "{context}");
            continue;
        };
        let ty = |v: &[Value]| comparable_type(name, v[0].as_str().unwrap_or_default());
        assert_eq!(ty(a), ty(b), "{context}");
        match *name {
            // Its release (sandball follows 2.19) and its keys, which are numbers but
            // for `full` and `string`.
            "ansible_version" => {
                let (a, b) = (&a[1], &b[1]);
                for key in ["major", "minor"] {
                    assert_eq!(a[key], b[key], "{context}");
                }
                let keys = |v: &Value| {
                    v.as_object()
                        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.is_number())))
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                };
                assert_eq!(keys(a), keys(b), "{context}");
            }
            // Each tool's own Python: an existing file either way.
            "ansible_playbook_python" => {
                for python in [&a[1], &b[1]] {
                    let path = python.as_str().unwrap_or_default();
                    assert!(std::path::Path::new(path).exists(), "{context}");
                }
            }
            // Sets in ansible-core, in no set order.
            "role_names" | "ansible_role_names" => {
                let sorted = |v: &Value| {
                    let mut names: Vec<String> = v
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(Value::to_string)
                        .collect();
                    names.sort();
                    names
                };
                assert_eq!(sorted(&a[1]), sorted(&b[1]), "{context}");
            }
            _ => assert_eq!(a.get(1), b.get(1), "{context}"),
        }
    }
}
