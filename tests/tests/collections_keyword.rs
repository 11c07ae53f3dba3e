//! The `collections` keyword: a search list for module and action names written without
//! a collection, on a play, a block, a task and in a role's `meta/main.yml`, with a
//! collection's role searching its own collection first, and roles named without a
//! collection found in the list (filters, tests and lookups are not: they need their
//! full names) — compared with ansible-playbook on a collection of the playbook's own
//! (`collections/ansible_collections/ns/coll`).

use sandball_e2e::Sandbox;

/// A module that says who it is and the `x` it was given.
fn module(who: &str) -> String {
    format!(
        r#"#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule

m = AnsibleModule(argument_spec=dict(x=dict(default="none")))
m.exit_json(changed=False, who="{who}", x=m.params["x"])
"#
    )
}

const COLL: &str = "collections/ansible_collections/ns/coll";

/// The collection (modules, a routed name, an action plugin, roles), the playbook's
/// `library/` and its roles.
fn write_tree(sb: &Sandbox) {
    for name in ["cmod", "shared", "ping"] {
        sb.write(
            &format!("{COLL}/plugins/modules/{name}.py"),
            &module(&format!("coll-{name}")),
        );
    }
    sb.write(
        &format!("{COLL}/meta/runtime.yml"),
        "requires_ansible: '>=2.15'\nplugin_routing:\n  modules:\n    oldname:\n      redirect: ns.coll.cmod\naction_groups:\n  grp:\n    - ansible.builtin.shared\n    - cmod\n",
    );
    sb.write(
        &format!("{COLL}/plugins/action/cact.py"),
        "from ansible.plugins.action import ActionBase\n\n\nclass ActionModule(ActionBase):\n    def run(self, tmp=None, task_vars=None):\n        return dict(changed=False, who='coll-cact')\n",
    );
    sb.write(
        &format!("{COLL}/roles/crole/tasks/main.yml"),
        "- cmod:\n  register: r\n- debug: {msg: \"crole cmod {{ r.who }}\"}\n- shared:\n  register: r\n- debug: {msg: \"crole shared {{ r.who }}\"}\n",
    );
    sb.write(
        &format!("{COLL}/roles/other/tasks/main.yml"),
        "- debug: {msg: the other role}\n",
    );
    sb.write(
        &format!("{COLL}/plugins/lookup/clook.py"),
        "from ansible.plugins.lookup import LookupBase\n\n\nclass LookupModule(LookupBase):\n    def run(self, terms, variables=None, **kwargs):\n        return ['clook']\n",
    );
    sb.write(
        &format!("{COLL}/plugins/filter/cfilters.py"),
        "class FilterModule:\n    def filters(self):\n        return {'cfilt': lambda v: 'cfilt'}\n",
    );
    // A collection's role finds its dependency and the roles it imports and includes
    // by their short names in its own collection.
    sb.write(
        &format!("{COLL}/roles/deprole/meta/main.yml"),
        "dependencies:\n  - other\n",
    );
    sb.write(
        &format!("{COLL}/roles/deprole/tasks/main.yml"),
        "- import_role: {name: other}\n- include_role: {name: other}\n- cmod:\n",
    );
    sb.write("library/shared.py", &module("lib-shared"));
    sb.write("library/libonly.py", &module("lib-libonly"));
    // A role outside collections, without a list: the play's list does not reach it.
    sb.write(
        "roles/plain/tasks/main.yml",
        "- shared:\n  register: r\n- debug: {msg: \"plain shared {{ r.who }}\"}\n",
    );
    // A role whose meta names the collection.
    sb.write("roles/listed/meta/main.yml", "collections:\n  - ns.coll\n");
    sb.write(
        "roles/listed/tasks/main.yml",
        "- shared:\n  register: r\n- debug: {msg: \"listed shared {{ r.who }}\"}\n- libonly:\n  register: r\n- debug: {msg: \"listed libonly {{ r.who }}\"}\n",
    );
}

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  collections: [ns.coll]
  module_defaults:
    ns.coll.cmod: {x: from-defaults}
  roles: [plain, listed, ns.coll.crole, other, ns.coll.deprole]
  tasks:
    - cmod:
      register: r
    - debug: {msg: "play cmod {{ r.who }} {{ r.x }}"}
    - shared:
      register: r
    - debug: {msg: "play shared {{ r.who }}"}
    - ping:
      register: r
    - debug: {msg: "play ping {{ r.who }}"}
    - libonly:
      register: r
    - debug: {msg: "play libonly {{ r.who }}"}
    - oldname:
      register: r
    - debug: {msg: "play oldname {{ r.who }}"}
    - cact:
      register: r
    - debug: {msg: "play cact {{ r.who }}"}
    - block:
        - shared:
          register: r
        - debug: {msg: "block shared {{ r.who }}"}
        - shared:
          register: r
          collections: [ns.coll]
        - debug: {msg: "task in block shared {{ r.who }}"}
      collections: [ansible.legacy]
    - shared:
      register: r
      collections: []
    - debug: {msg: "empty list shared {{ r.who }}"}
    - include_role: {name: other}
    - import_role: {name: crole}
"#;

/// Template plugins are not searched for in the collections of the list.
const TEMPLATE_PLUGINS: &str = r#"
- hosts: all
  gather_facts: false
  collections: [ns.coll]
  tasks:
    - name: a lookup is not looked for in the collections
      debug: {msg: "{{ lookup('clook') }}"}
      ignore_errors: true
    - name: nor a filter
      debug: {msg: "{{ 1 | cfilt }}"}
      ignore_errors: true
    - name: nor a lookup in a condition
      assert: {that: "lookup('clook') == 'clook'"}
      ignore_errors: true
"#;

#[test]
fn collections_are_searched_for_unqualified_names_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    write_tree(&sb);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let out = sb.play_with_core(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    for line in [
        "plain shared lib-shared",
        "listed shared coll-shared",
        "listed libonly lib-libonly",
        "crole cmod coll-cmod",
        "play cmod coll-cmod from-defaults",
        "play ping coll-ping",
        "play oldname coll-cmod",
        "play cact coll-cact",
        "block shared lib-shared",
        "task in block shared coll-shared",
        "empty list shared lib-shared",
        "TASK [ns.coll.other : debug]",
        "TASK [ns.coll.deprole : cmod]",
    ] {
        out.assert_stdout_has(line);
    }
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        out.assert_same_stdout_as(&theirs.run());
    }

    let pb = sb.write("plugins.yml", TEMPLATE_PLUGINS);
    let out = sb.play_with_core(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    for line in [
        "Error while resolving value for 'msg': The lookup plugin 'clook' was not found.",
        "No filter named 'cfilt'.",
        "\"msg\": \"Task failed: The lookup plugin 'clook' was not found.\"",
    ] {
        out.assert_stdout_has(line);
    }
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs).assert_same_results_as(
            &theirs,
            &[
                "a lookup is not looked for in the collections",
                "nor a filter",
                "nor a lookup in a condition",
            ],
        );
    }
}

#[test]
fn a_name_no_collection_of_the_list_has_is_refused_before_anything_runs() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    write_tree(&sb);
    let unresolved = "couldn't resolve module/action 'libonly'. This often indicates a misspelling, missing collection, or incorrect module path.";
    // With `ansible.builtin` in the list, the playbook's library is not searched; a
    // collection's role falls back on `ansible.builtin` too; a `module_defaults` entry
    // is resolved by its name alone, whatever the list.
    for (file, play, error, at) in [
        (
            "builtin.yml",
            "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: {msg: first}\n- hosts: all\n  gather_facts: false\n  collections: [ansible.builtin, ns.coll]\n  tasks:\n    - shared:\n    - libonly:\n",
            unresolved,
            "builtin.yml:10:7",
        ),
        (
            "in_role.yml",
            "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: {msg: first}\n    - import_role: {name: ns.coll.crole, tasks_from: lib}\n",
            unresolved,
            "roles/crole/tasks/lib.yml:1:3",
        ),
        (
            "defaults.yml",
            "- hosts: all\n  gather_facts: false\n  collections: [ns.coll]\n  module_defaults:\n    cmod: {x: 1}\n  tasks:\n    - cmod:\n",
            "Could not resolve action ansible.legacy.cmod in module_defaults",
            "",
        ),
    ] {
        sb.write(&format!("{COLL}/roles/crole/tasks/lib.yml"), "- libonly:\n");
        let pb = sb.write(file, play);
        let work = sb.dir("work");
        let out = sb.play_with_core(&pb, &work, &[]).run();
        out.assert_no_panic().assert_code(4);
        out.assert_stderr_has(error);
        out.assert_stderr_has(at);
        assert!(!out.stdout.contains("PLAY ["), "{out}");
        if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
            let theirs = theirs.run();
            theirs.assert_code(4);
            theirs.assert_stderr_has(error);
            theirs.assert_stderr_has(at);
        }
    }
}

const DEFAULTS: &str = r#"
- hosts: all
  gather_facts: false
  collections: [ns.coll]
  module_defaults:
    group/ns.coll.grp: {x: from-group}
  tasks:
    - name: a library module is not the group's ansible.builtin one
      shared:
      register: a
      collections: []
    - name: found in the collection, a member of its group
      cmod:
      register: b
    - ansible.builtin.ping:
      module_defaults:
        ansible.legacy.ping: {data: legacy-key}
      register: c
    - ansible.legacy.ping:
      module_defaults:
        ansible.builtin.ping: {data: builtin-key}
      register: d
      collections: []
    - name: a routed name takes the defaults of the module it is routed to; a broken
        default of another module breaks nothing
      oldname:
      module_defaults:
        ns.coll.cmod: {x: routed}
        ns.coll.shared: {x: "{{ undefined_elsewhere }}"}
      register: e
    - name: what they got
      debug: {msg: "{{ a.x }} {{ b.x }} {{ c.ping }} {{ d.ping }} {{ e.x }}"}
"#;

#[test]
fn module_defaults_see_the_name_an_action_resolves_to_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    write_tree(&sb);
    let pb = sb.write("defaults.yml", DEFAULTS);
    let work = sb.dir("work");
    let out = sb.play_with_core(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("none from-group legacy-key builtin-key routed");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        out.assert_same_stdout_as(&theirs.run());
    }
}
