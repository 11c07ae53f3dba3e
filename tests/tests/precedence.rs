//! Variable precedence, layer by layer, compared with ansible-playbook: the same
//! variable is set in the lowest layer, then in one more layer at a time, and each run
//! must show the highest layer's value — under sandball and under ansible-playbook.
//! Every adjacent pair of layers is thus compared once (see docs/ARCHITECTURE.md for
//! the table).

use sandball_e2e::binaries::ansible_python;
use sandball_e2e::{Output, Sandbox};

/// The layers, lowest first, as ansible-core documents its precedence.
const LAYERS: &[&str] = &[
    "inventory [all:vars]",
    "inventory parent group",
    "inventory child group",
    "inventory group_vars/all",
    "playbook group_vars/all",
    "inventory group_vars/child",
    "playbook group_vars/child",
    "inventory host var",
    "inventory host_vars",
    "playbook host_vars",
    "facts",
    "play vars",
    "vars_prompt",
    "vars_files",
    "block vars",
    "task vars",
    "include_vars",
    "set_fact",
    "include params",
    "extra vars",
];

const FACTS: &str = "#!/usr/bin/python\n# WANT_JSON\nimport json\nprint(json.dumps({'changed': False, 'ansible_facts': {'v': 'facts'}}))\n";

/// A sandbox where the first `n` layers set `v` to their own name.
fn setup(n: usize) -> (Sandbox, Vec<String>) {
    let sb = Sandbox::new();
    let on = |layer: &str| LAYERS[..n].contains(&layer);
    let python = ansible_python();
    let mut inv = format!(
        "[child]\nh1 ansible_connection=local ansible_python_interpreter={}{}\n[parent:children]\nchild\n",
        python.display(),
        if on("inventory host var") {
            " v='inventory host var'"
        } else {
            ""
        }
    );
    if on("inventory [all:vars]") {
        inv.push_str("[all:vars]\nv='inventory [all:vars]'\n");
    }
    if on("inventory parent group") {
        inv.push_str("[parent:vars]\nv='inventory parent group'\n");
    }
    if on("inventory child group") {
        inv.push_str("[child:vars]\nv='inventory child group'\n");
    }
    sb.write("inv/hosts.ini", &inv);
    for (layer, file) in [
        ("inventory group_vars/all", "inv/group_vars/all.yml"),
        ("playbook group_vars/all", "pb/group_vars/all.yml"),
        ("inventory group_vars/child", "inv/group_vars/child.yml"),
        ("playbook group_vars/child", "pb/group_vars/child.yml"),
        ("inventory host_vars", "inv/host_vars/h1.yml"),
        ("playbook host_vars", "pb/host_vars/h1.yml"),
        ("vars_files", "pb/vars/file.yml"),
        ("include_vars", "pb/vars/included.yml"),
    ] {
        if on(layer) {
            sb.write(file, &format!("v: '{layer}'\n"));
        }
    }
    sb.write("pb/library/plant_fact.py", FACTS);
    let mut play = String::from("- hosts: all\n  gather_facts: false\n");
    if on("play vars") {
        play.push_str("  vars: {v: 'play vars'}\n");
    }
    if on("vars_prompt") {
        play.push_str("  vars_prompt: [{name: v, prompt: v, default: 'vars_prompt'}]\n");
    }
    if on("vars_files") {
        play.push_str("  vars_files: [vars/file.yml]\n");
    }
    play.push_str("  tasks:\n");
    if on("facts") {
        play.push_str("    - plant_fact:\n");
    }
    if on("set_fact") {
        play.push_str("    - set_fact: {v: 'set_fact'}\n");
    }
    // Read after set_fact, yet beneath it: the layer, not the order, decides.
    if on("include_vars") {
        play.push_str("    - include_vars: included.yml\n");
    }
    // The task that shows `v`, in its block, in a file the play includes.
    let mut shown = String::from("- block:\n    - name: show\n      debug: {msg: \"v={{ v }}\"}\n");
    if on("task vars") {
        shown.push_str("      vars: {v: 'task vars'}\n");
    }
    if on("block vars") {
        shown.push_str("  vars: {v: 'block vars'}\n");
    }
    sb.write("pb/shown.yml", &shown);
    play.push_str("    - include_tasks: shown.yml\n");
    if on("include params") {
        play.push_str("      vars: {v: 'include params'}\n");
    }
    sb.write("pb/play.yml", &play);
    let mut extra = Vec::new();
    if on("extra vars") {
        extra.push("-e".to_string());
        extra.push(r#"{"v": "extra vars"}"#.to_string());
    }
    (sb, extra)
}

fn shown(out: &Output) -> String {
    out.task_lines("show")
        .iter()
        .find_map(|l| l.trim().strip_prefix("\"msg\": \"v="))
        .map(|v| v.trim_end_matches('"').to_string())
        .unwrap_or_else(|| format!("nothing shown:\n{out}"))
}

#[test]
fn each_layer_wins_over_the_one_below_as_in_ansible() {
    let python = ansible_python();
    for n in 1..=LAYERS.len() {
        let (sb, extra) = setup(n);
        let inv = sb.path().join("inv/hosts.ini");
        let pb = sb.path().join("pb/play.yml");
        let mut args: Vec<String> = vec![
            "playbook".into(),
            "-i".into(),
            inv.display().to_string(),
            pb.display().to_string(),
        ];
        args.extend(extra.iter().cloned());
        let ours = sb
            .sandball(&args)
            .env("SANDBALL_ANSIBLE_PYTHON", &python)
            .run();
        ours.assert_no_panic().assert_code(0);
        assert_eq!(shown(&ours), LAYERS[n - 1], "with {} layers:\n{ours}", n);
        if let Some(theirs) = sb.ansible_playbook(&args[1..]) {
            let theirs = theirs.run();
            assert_eq!(
                shown(&theirs),
                LAYERS[n - 1],
                "ansible-playbook with {n} layers:\n{theirs}"
            );
        }
    }
}
