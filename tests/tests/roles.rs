//! Roles, compared with ansible-playbook: the roles path, `tasks`/`handlers`/
//! `defaults`/`vars`/`meta` (dependencies with parameters, run once per host and
//! parameters), the entry's tags and `when` reaching the role and its dependencies,
//! handlers notified by name and by `role : name` (of a name, the first of the last
//! group wins), banners `role : task`, `role_name`/`role_path`/
//! `ansible_play_role_names` (a role named by its path keeps the path as its name,
//! and `role_path` is its real path), the variable layers of roles, `--list-tasks`, the error
//! for a missing role, and roles of collections (`namespace.collection.role`).

use sandball_e2e::{Output, Sandbox};

fn project(sb: &Sandbox) {
    sb.write(
        "roles/common/tasks/main.yml",
        "- name: per-OS vars\n  include_vars: \"{{ lookup('first_found', params) }}\"\n  vars:\n    params:\n      files: [Nonexistent.yml, fallback.yml]\n      paths: [vars]\n- name: per-version vars\n  include_vars: \"{{ item }}\"\n  with_first_found:\n    - files: [Nonexistent.yml, Other.yml]\n      skip: true\n- name: common says\n  debug: {msg: \"common {{ greeting }} {{ shared }} {{ role_name }} {{ role_path | basename }} {{ os_vars }}\"}\n- name: change\n  debug: {msg: c}\n  changed_when: true\n  notify: restart common\n",
    );
    sb.write(
        "roles/common/defaults/main.yml",
        "greeting: hi-default\nshared: from-common-defaults\nlayered: role-default\n",
    );
    sb.write("roles/common/vars/main.yml", "common_var: cv\n");
    // Per-OS variables found with first_found's `paths` in the role, as published
    // roles load them.
    sb.write("roles/common/vars/Other.yml", "os_vars: other\n");
    sb.write("roles/common/vars/fallback.yml", "os_vars: fallback\n");
    sb.write(
        "roles/common/handlers/main.yml",
        "- name: restart common\n  debug: {msg: \"restarting common on {{ inventory_hostname }}\"}\n",
    );
    sb.write("roles/common/meta/main.yml", "dependencies:\n  - base\n");
    sb.write(
        "roles/base/tasks/main.yml",
        "- name: base runs\n  debug: {msg: base}\n",
    );
    sb.write(
        "roles/web/tasks/main.yml",
        "- name: web port\n  debug: {msg: \"port {{ http_port }} {{ common_var }} {{ shared }} {{ layered }} {{ from_vars_dir }}\"}\n- set_fact: {http_port: from-set-fact}\n- name: params win over set_fact\n  debug: {msg: \"{{ http_port }}\"}\n- name: notify by role name\n  debug: {msg: n}\n  changed_when: true\n  notify: \"web : reload web\"\n- name: a module of the role\n  role_mod: {say: hello}\n  register: said\n- name: what it said\n  debug: {var: said.said}\n",
    );
    sb.write(
        "roles/web/defaults/main.yml",
        "http_port: 80\nshared: from-web-defaults\n",
    );
    sb.write("roles/web/vars/main/10-a.yml", "from_vars_dir: a\n");
    sb.write(
        "roles/web/library/role_mod.py",
        "#!/usr/bin/python\n# WANT_JSON\nimport json, sys\nargs = json.load(open(sys.argv[1]))\nprint(json.dumps({'changed': False, 'said': args.get('say')}))\n",
    );
    sb.write("roles/web/vars/main/20-b.yml", "from_vars_dir: b\n");
    sb.write(
        "roles/web/handlers/main.yml",
        "- name: reload web\n  debug: {msg: reloading}\n",
    );
    sb.write(
        "roles/web/meta/main.yml",
        "dependencies:\n  - role: common\n    greeting: from-dep\n",
    );
    sb.write(
        "group_vars/all.yml",
        "layered: inventory-beats-role-defaults\n",
    );
    sb.write(
        "site.yml",
        r#"
- hosts: all
  gather_facts: false
  pre_tasks:
    - name: pre
      debug: {msg: pre}
  roles:
    - common
    - role: web
      http_port: 8080
      tags: [webtag]
    - role: common
    - role: common
      when: inventory_hostname == 'nowhere'
  tasks:
    - name: play task
      debug: {msg: "{{ ansible_play_role_names }} {{ shared }}"}
"#,
    );
}

fn same(ours: &Output, theirs: &Output) {
    assert_eq!(theirs.code, ours.code, "{theirs}\n{ours}");
    ours.assert_same_stdout_as(theirs);
}

#[test]
fn roles_run_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    project(&sb);
    let pb = sb.path().join("site.yml");
    let work = sb.dir("work");
    for args in [
        &[][..],
        &["-t", "webtag"],
        &["--skip-tags", "webtag"],
        &["--list-tasks"],
        &["-e", "http_port=1"],
    ] {
        let ours = sb.play(&pb, &work, args).run();
        ours.assert_no_panic();
        if args.is_empty() {
            ours.assert_code(0);
            ours.assert_stdout_has("TASK [web : web port]");
            ours.assert_stdout_has(
                "\"msg\": \"port 8080 cv from-web-defaults inventory-beats-role-defaults b\"",
            );
            ours.assert_stdout_has("RUNNING HANDLER [web : reload web]");
            ours.assert_stdout_has("\"said.said\": \"hello\"");
        }
        if let Some(theirs) = sb.ansible_play(&pb, &work, args) {
            same(&ours, &theirs.run());
        }
    }
}

#[test]
fn a_missing_role_is_named_with_where_it_was_looked_for() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  roles:\n    - nosuchrole\n",
    );
    let out = sb.play(&pb, &sb.dir("work"), &[]).run();
    out.assert_no_panic();
    assert_ne!(out.code, 0, "{out}");
    out.assert_stderr_has("the role 'nosuchrole' was not found in");
    out.assert_stderr_has("play.yml");
    out.assert_stderr_has(&format!("{}/roles", sb.path().display()));
    assert!(!out.stdout.contains("TASK ["), "{out}");
    // Included at run time, it fails the host with the reason and the search path
    // ansible-core gives: `roles/` beside the playbook, the roles path, the playbook's
    // directory.
    let pb = sb.write(
        "include.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - include_role: {name: nosuchrole}\n",
    );
    let roles = sb.dir("elsewhere");
    let run = |cmd: sandball_e2e::Invocation| cmd.env("ANSIBLE_ROLES_PATH", &roles).run();
    let out = run(sb.play(&pb, &sb.dir("work"), &[]));
    out.assert_code(2);
    let base = sb.path().display();
    out.assert_stdout_has(&format!(
        "fatal: [alpha]: FAILED! => {{\"changed\": false, \"reason\": \"the role 'nosuchrole' was not found in {base}/roles:{}:{base}\"}}",
        roles.display()
    ));
    if let Some(theirs) = sb.ansible_play(&pb, &sb.dir("work"), &[]) {
        out.assert_same_stdout_as(&run(theirs));
    }
}

#[test]
fn role_argument_specs_are_validated_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write(
        "roles/svc/meta/argument_specs.yml",
        "argument_specs:\n  main:\n    short_description: Main entry point\n    options:\n      svc_port: {type: int, required: true}\n      svc_mode: {type: str, choices: [fast, slow], default: fast}\n",
    );
    sb.write("roles/svc/defaults/main.yml", "svc_mode: fast\n");
    sb.write(
        "roles/svc/tasks/main.yml",
        "- name: run\n  debug: {msg: \"{{ svc_port }} {{ svc_mode }}\"}\n",
    );
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  roles:\n    - role: svc\n      svc_port: \"80\"\n- hosts: all\n  gather_facts: false\n  roles:\n    - role: svc\n      svc_port: 81\n      svc_mode: medium\n",
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(2);
    ours.assert_stdout_has(
        "TASK [svc : Validating arguments against arg spec 'main' - Main entry point]",
    );
    ours.assert_stdout_has("value of svc_mode must be one of: fast, slow, got: medium");
    for args in [&["-t", "nothing"][..], &[]] {
        if let Some(theirs) = sb.ansible_play(&pb, &work, args) {
            let theirs = theirs.run();
            sb.play(&pb, &work, args)
                .run()
                .assert_same_recap_as(&theirs);
        }
    }
}

#[test]
fn collection_roles_and_handlers_sharing_a_name_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    // The collection is linked into the collections path, as a collection being
    // worked on often is: its role's paths go through the link.
    sb.write(
        "src/col/roles/tool/tasks/main.yml",
        "- name: from the collection\n  debug: {msg: \"{{ role_name }} {{ tool_param }} {{ ansible_role_name }} {{ ansible_play_role_names }}\"}\n  changed_when: true\n  notify: tool done\n- include_tasks: more.yml\n",
    );
    sb.write(
        "src/col/roles/tool/tasks/more.yml",
        "- debug: {var: role_path}\n",
    );
    sb.write(
        "src/col/roles/tool/handlers/main.yml",
        "- name: tool done\n  debug: {msg: collection handler}\n",
    );
    std::fs::create_dir_all(sb.path().join("collections/ansible_collections/ns")).unwrap();
    std::os::unix::fs::symlink(
        sb.path().join("src/col"),
        sb.path().join("collections/ansible_collections/ns/col"),
    )
    .unwrap();
    let pb = sb.write(
        "site.yml",
        "- hosts: all\n  gather_facts: false\n  roles:\n    - role: ns.col.tool\n      tool_param: p\n  tasks:\n    - name: notify twice-named\n      debug: {msg: go}\n      changed_when: true\n      notify: twice\n  handlers:\n    - name: twice\n      debug: {msg: first of the name}\n    - name: twice\n      debug: {msg: second of the name}\n    - name: listener\n      debug: {msg: listening}\n      listen: twice\n",
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"msg\": \"first of the name\"");
    ours.assert_stdout_has("\"msg\": \"collection handler\"");
    // role_name is the role's name in its collection, ansible_role_name and the
    // play's role names its full one.
    ours.assert_stdout_has("\"msg\": \"tool p ns.col.tool ['ns.col.tool']\"");
    assert!(!ours.stdout.contains("second of the name"), "{ours}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        same(&ours, &theirs.run());
    }
}

#[test]
fn a_role_skipped_by_its_when_runs_at_its_next_entry_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    sb.write("roles/a/tasks/main.yml", "- debug: {msg: A}\n");
    sb.write(
        "roles/set_var/tasks/main.yml",
        "- set_fact: {ready: true}\n",
    );
    let pb = sb.write(
        "site.yml",
        "- hosts: all\n  gather_facts: false\n  roles:\n    - {role: a, when: ready is defined}\n    - set_var\n    - {role: a, when: ready is defined}\n    - {role: a, when: ready is defined}\n",
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    assert_eq!(ours.stdout.matches("\"msg\": \"A\"").count(), 1, "{ours}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        same(&ours, &theirs.run());
    }
}

#[test]
fn a_role_a_host_was_unreachable_in_runs_again_at_its_next_entry() {
    let sb = Sandbox::new();
    sb.write(
        "inventory.ini",
        "[nodes]\nup ansible_connection=local\ndown ansible_host=127.0.0.1 ansible_port=1 ansible_connection=ssh\n",
    );
    sb.write("roles/probe/tasks/main.yml", "- ping: {data: reachable}\n");
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  ignore_unreachable: true\n  roles:\n    - probe\n    - probe\n",
    );
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic();
    assert_eq!(out.host("down").ignored, 2, "{out}");
    assert_eq!(out.host("up").ok, 1, "{out}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        out.assert_same_recap_as(&theirs.run());
    }
}

#[test]
fn rolespec_validate_and_import_options_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    sb.write(
        "roles/needs_port/meta/argument_specs.yml",
        "argument_specs:\n  main:\n    options:\n      port: {type: int, required: true}\n",
    );
    sb.write("roles/needs_port/tasks/main.yml", "- debug: {msg: ran}\n");
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - import_role: {name: needs_port, rolespec_validate: false}\n    - include_role: {name: needs_port, rolespec_validate: false}\n    - include_role: {name: needs_port}\n      ignore_errors: true\n",
    );
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    // The include's `ignore_errors` is the include's own: the role's failed
    // validation fails the host, as in Ansible.
    out.assert_no_panic().assert_code(2);
    assert_eq!(out.host("localhost").ok, 4, "{out}");
    assert_eq!(out.host("localhost").failed, 1, "{out}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        out.assert_same_recap_as(&theirs.run());
    }
    // `apply` belongs to the includes: an import refuses it before anything runs.
    let bad = sb.write(
        "bad.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - import_tasks:\n        file: t.yml\n        apply: {tags: [x]}\n",
    );
    sb.write("t.yml", "- debug: {msg: t}\n");
    let refused = sb.play(&bad, &work, &[]).run();
    refused.assert_no_panic();
    assert_ne!(refused.code, 0, "{refused}");
    refused.assert_stderr_has("Invalid options for import_tasks: apply");
}

#[test]
fn a_role_sees_its_dependencies_vars_over_its_parents_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let show = "- name: level\n  debug: {msg: \"{{ role_name }} {{ level }}\"}\n";
    sb.write("roles/top/meta/main.yml", "dependencies: [mid]\n");
    sb.write("roles/top/tasks/main.yml", show);
    sb.write("roles/mid/meta/main.yml", "dependencies: [leaf]\n");
    sb.write("roles/mid/vars/main.yml", "level: parent\n");
    sb.write("roles/mid/tasks/main.yml", show);
    sb.write("roles/leaf/meta/main.yml", "dependencies: [deeper]\n");
    sb.write("roles/leaf/tasks/main.yml", show);
    sb.write("roles/deeper/vars/main.yml", "level: dependency\n");
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  roles: [top]\n  tasks:\n    - name: level\n      debug: {msg: \"play {{ level }}\"}\n",
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"msg\": \"leaf dependency\"");
    ours.assert_stdout_has("\"msg\": \"mid parent\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        same(&ours, &theirs.run());
    }
}

#[test]
fn a_role_sees_the_roles_above_it_and_its_dependencies_defaults_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let said = |who: &str, names: &[&str]| {
        let shown: Vec<String> = names
            .iter()
            .map(|n| format!("{{{{ {n} | default('-') }}}}"))
            .collect();
        format!("- debug: {{msg: \"{who} sees {}\"}}\n", shown.join(" "))
    };
    for r in ["a", "b", "c", "d"] {
        sb.write(
            &format!("roles/{r}/vars/main.yml"),
            &format!("{r}_var: {r}_vars\n"),
        );
        sb.write(
            &format!("roles/{r}/defaults/main.yml"),
            &format!("{r}_def: {r}_defaults\n"),
        );
    }
    // a depends on b, includes c (which includes d) and imports d.
    sb.write("roles/a/meta/main.yml", "dependencies: [b]\n");
    sb.write(
        "roles/a/tasks/main.yml",
        &format!(
            "{}- include_role: {{name: c}}\n- import_role: {{name: d}}\n",
            said("a", &["b_var", "b_def"])
        ),
    );
    sb.write("roles/b/tasks/main.yml", &said("b", &["a_var", "a_def"]));
    sb.write(
        "roles/c/tasks/main.yml",
        &format!(
            "{}- include_role: {{name: d}}\n",
            said("c", &["a_var", "a_def", "b_var", "b_def"])
        ),
    );
    sb.write(
        "roles/d/tasks/main.yml",
        &said("d", &["a_var", "a_def", "c_var", "c_def"]),
    );
    // An import's name templated with the role's variables and `role_path`.
    for (file, text) in [
        ("vars/main.yml", "e_dir: \"{{ role_path }}/extra\"\n"),
        (
            "tasks/main.yml",
            "- import_tasks: \"{{ role_path }}/extra/one.yml\"\n- import_tasks: \"{{ e_dir }}/two.yml\"\n",
        ),
        ("extra/one.yml", "- debug: {msg: one}\n"),
        ("extra/two.yml", "- debug: {msg: two}\n"),
    ] {
        sb.write(&format!("roles/e/{file}"), text);
    }
    let after = said("play", &["a_var", "c_var", "c_def", "d_var", "d_def"]);
    let indented: String = after.lines().map(|l| format!("    {l}\n")).collect();
    let pb = sb.write(
        "play.yml",
        &format!(
            "- hosts: all\n  gather_facts: false\n  roles: [a]\n  tasks:\n{indented}\
             - hosts: all\n  gather_facts: false\n  tasks:\n    - include_role: {{name: a}}\n{indented}\
             - hosts: all\n  gather_facts: false\n  tasks:\n    - import_role: {{name: d, public: false}}\n{indented}    - import_role: {{name: e}}\n"
        ),
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"msg\": \"d sees a_vars a_defaults c_vars c_defaults\"");
    ours.assert_stdout_has("\"msg\": \"b sees a_vars a_defaults\"");
    ours.assert_stdout_has("\"msg\": \"two\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        same(&ours, &theirs.run());
    }
}

#[test]
fn private_role_vars_decides_which_roles_variables_the_play_sees_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    for r in ["listed", "imported", "included", "opened"] {
        sb.write(
            &format!("roles/{r}/vars/main.yml"),
            &format!("{r}_var: {r}\n"),
        );
        sb.write(&format!("roles/{r}/tasks/main.yml"), "- meta: noop\n");
    }
    let names = ["listed", "imported", "included", "opened"]
        .map(|r| format!("{{{{ {r}_var | default('-') }}}}"))
        .join(" ");
    let pb = sb.write(
        "play.yml",
        &format!(
            "- hosts: all\n  gather_facts: false\n  roles: [listed]\n  tasks:\n    - import_role: {{name: imported}}\n    - include_role: {{name: included}}\n    - include_role: {{name: opened, public: true}}\n    - name: sees\n      debug: {{msg: \"{names} {{{{ lookup('config', 'DEFAULT_PRIVATE_ROLE_VARS') }}}}\"}}\n"
        ),
    );
    let work = sb.dir("work");
    for (setting, seen) in [
        (None, "listed imported - opened False"),
        (Some("1"), "- - - opened True"),
        (Some("0"), "listed imported included opened False"),
    ] {
        let with = |mut run: sandball_e2e::Invocation| {
            if let Some(value) = setting {
                run = run.env("ANSIBLE_PRIVATE_ROLE_VARS", value);
            }
            run.run()
        };
        let ours = with(sb.play(&pb, &work, &[]));
        ours.assert_no_panic().assert_code(0);
        ours.assert_stdout_has(&format!("\"msg\": \"{seen}\""));
        if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
            same(&ours, &with(theirs));
        }
    }
}

#[test]
fn role_path_is_the_roles_real_path_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write(
        "shared/roles/x/tasks/main.yml",
        "- debug: {var: role_path}\n- debug: {var: role_name}\n",
    );
    // A role reached through a link keeps the name it is called by (banners,
    // `role_name`), as roles linked in under a galaxy name do.
    std::fs::create_dir_all(sb.path().join("sub/roles")).unwrap();
    std::os::unix::fs::symlink(
        "../../shared/roles/x",
        sb.path().join("sub/roles/ns.linked"),
    )
    .unwrap();
    let pb = sb.write(
        "sub/play.yml",
        "- hosts: all\n  gather_facts: false\n  roles: [../shared/roles/x]\n\
         - hosts: all\n  gather_facts: false\n  roles: [ns.linked]\n",
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    let real = std::fs::canonicalize(sb.path().join("shared/roles/x")).unwrap();
    ours.assert_stdout_has(&format!("\"role_path\": \"{}\"", real.display()));
    ours.assert_stdout_has("TASK [ns.linked : debug]");
    ours.assert_stdout_has("\"role_name\": \"ns.linked\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        same(&ours, &theirs.run());
    }
}
