//! Module components shipped in an Ansible collection: a collection holding a Rust
//! component (`examples/modules/component`'s `json_key`), the Python example as a
//! component beside its Python original (`conf_line.wasm` and `conf_line.py`) and the
//! JavaScript example (`js_conf_line.wasm`), built with `ansible-galaxy collection
//! build` and installed with `ansible-galaxy collection install`, whose modules a
//! playbook calls by their full names, through a `collections:` search list and through
//! the collection's `meta/runtime.yml` routing. A policy rule naming the collection's
//! modules makes the components run; without one, the module that is also a Python
//! module runs as that one, as ansible-playbook runs it (which the same playbook shows).
//! `sandball doc` and `sandball audit` find the components by their full names.
//!
//! Two tests, each installing the collection once: the components' run (the Python and
//! JavaScript ones compile in minutes in a debug shim, once per test run: the shim cache
//! is shared with `module_languages`), and the rest, which runs no large component.

use sandball_e2e::{Binaries, Sandbox};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The first run of a large component compiles it on the node (an unoptimised wasmtime
/// takes minutes for the Python and JavaScript engines, once per test run: the shim
/// cache is shared).
const FIRST_COMPILE: Duration = Duration::from_secs(900);

/// The collection's source: `galaxy.yml`, the routing, the modules.
fn write_collection(sb: &Sandbox) -> PathBuf {
    let src = sb.dir("src/sbtest/modules");
    sb.write(
        "src/sbtest/modules/galaxy.yml",
        "namespace: sbtest\nname: modules\nversion: 1.0.0\nreadme: README.md\nauthors: [sandball tests]\n",
    );
    sb.write(
        "src/sbtest/modules/README.md",
        "# sbtest.modules\n\nSandboxed modules for the tests.\n",
    );
    sb.write(
        "src/sbtest/modules/meta/runtime.yml",
        "requires_ansible: '>=2.15'\nplugin_routing:\n  modules:\n    set_line:\n      redirect: sbtest.modules.js_conf_line\n",
    );
    let modules = src.join("plugins/modules");
    std::fs::create_dir_all(&modules).unwrap();
    let root = sandball_e2e::binaries::workspace_root();
    let copies: [(PathBuf, &str); 4] = [
        (
            root.join("examples/modules/python/conf_line.py"),
            "conf_line.py",
        ),
        (
            Binaries::example_python_module().join("conf_line.wasm"),
            "conf_line.wasm",
        ),
        (
            Binaries::example_js_module().join("conf_line.wasm"),
            "js_conf_line.wasm",
        ),
        (
            Binaries::example_component().join("json_key.wasm"),
            "json_key.wasm",
        ),
    ];
    for (from, to) in copies {
        std::fs::copy(&from, modules.join(to))
            .unwrap_or_else(|e| panic!("{} -> {to}: {e}", from.display()));
    }
    src
}

/// Builds the collection and installs it into `colls/`: the collections path the runs
/// are given. `None` without ansible-core (ANSIBLE_BIN_DIR unset).
fn built_and_installed(sb: &Sandbox) -> Option<PathBuf> {
    let src = write_collection(sb);
    let dist = sb.dir("dist");
    let built = sb
        .ansible_tool(
            "ansible-galaxy",
            [
                "collection",
                "build",
                src.to_str().unwrap(),
                "--output-path",
                dist.to_str().unwrap(),
            ],
        )?
        .run();
    built.assert_code(0);
    let tarball = dist.join("sbtest-modules-1.0.0.tar.gz");
    assert!(tarball.is_file(), "{}", built.stdout);
    let colls = sb.dir("colls");
    sb.ansible_tool(
        "ansible-galaxy",
        [
            "collection",
            "install",
            tarball.to_str().unwrap(),
            "-p",
            colls.to_str().unwrap(),
        ],
    )?
    .run()
    .assert_code(0);
    let installed = colls.join("ansible_collections/sbtest/modules/plugins/modules");
    for file in [
        "conf_line.py",
        "conf_line.wasm",
        "js_conf_line.wasm",
        "json_key.wasm",
    ] {
        assert!(installed.join(file).is_file(), "{file} not installed");
    }
    Some(colls)
}

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: the Python module's component, by its full name
      sbtest.modules.conf_line: {path: "{{ work }}/py.conf", key: port, value: "8080", create: true}
      register: py
    - name: the JavaScript component, by its full name
      sbtest.modules.js_conf_line: {path: "{{ work }}/js.conf", key: port, value: "8080", create: true}
      register: js
    - name: the JavaScript component, through the collection's routing
      sbtest.modules.set_line: {path: "{{ work }}/js.conf", key: host, value: web}
      register: routed
    - name: the Rust component, by its full name
      sbtest.modules.json_key: {path: "{{ work }}/app.json", key: server.port, value: 8080, create: true}
      register: rust
    - name: results
      copy:
        dest: "{{ work }}/results.json"
        content: "{{ {'py': py, 'js': js, 'routed': routed, 'rust': rust} | to_json }}"

- hosts: all
  gather_facts: false
  collections: [sbtest.modules]
  tasks:
    - name: the Rust component, through the search list
      json_key: {path: "{{ work }}/app.json", key: server.host, value: web}
      register: listed
    - copy:
        dest: "{{ work }}/listed.json"
        content: "{{ listed | to_json }}"
"#;

/// The rule that lets the collection's components run, granted what they request.
const POLICY: &str = "[[policy.rule]]\nmodules = [\"sbtest.modules.*\"]\nmanifest = true\n";

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_collections_components_run_by_their_full_names() {
    let sb = Sandbox::new();
    let Some(colls) = built_and_installed(&sb) else {
        return;
    };
    sb.inventory(&["localhost"]);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", PLAY);
    let policy = sb.write("sandball.toml", POLICY);
    let out = sb
        .play_with_core(&pb, &work, &["--policy", policy.to_str().unwrap(), "-vvv"])
        .env("ANSIBLE_COLLECTIONS_PATH", &colls)
        .limit(FIRST_COMPILE)
        .run();
    out.assert_no_panic().assert_code(0);
    let results = read_json(&work.join("results.json"));
    for task in ["py", "js", "rust"] {
        assert_eq!(results[task]["changed"], true, "{task}: {results}");
    }
    assert_eq!(results["py"]["msg"], "line added", "{results}");
    assert_eq!(results["routed"]["msg"], "line added", "{results}");
    assert_eq!(
        std::fs::read_to_string(work.join("js.conf")).unwrap(),
        "port=8080\nhost=web\n"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("py.conf")).unwrap(),
        "port=8080\n"
    );
    assert_eq!(read_json(&work.join("listed.json"))["changed"], true);
    assert_eq!(
        read_json(&work.join("app.json")),
        serde_json::json!({"server": {"port": 8080, "host": "web"}})
    );
    // Each ran as a component, the Python module's too.
    let installed = colls.join("ansible_collections/sbtest/modules/plugins/modules");
    for file in ["conf_line.wasm", "js_conf_line.wasm", "json_key.wasm"] {
        out.assert_stdout_has(&format!(
            "Using module file {} (sandball component",
            installed.join(file).display()
        ));
    }
    assert!(
        !out.stdout.contains("conf_line.py"),
        "the Python module ran: {}",
        out.stdout
    );
}

#[test]
fn without_a_rule_the_python_module_runs_as_ansible_playbook_runs_it_and_doc_and_audit_find_the_components()
 {
    const PY_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - sbtest.modules.conf_line: {path: "{{ work }}/py.conf", key: port, value: "8080", create: true}
      register: py
    - copy:
        dest: "{{ work }}/results.json"
        content: "{{ py | to_json }}"
"#;
    let sb = Sandbox::new();
    let Some(colls) = built_and_installed(&sb) else {
        return;
    };
    sb.inventory(&["localhost"]);
    let pb = sb.write("play.yml", PY_PLAY);
    let work = sb.dir("work");
    // No policy file: the default, which names no third-party module.
    let ours = sb
        .play_with_core(&pb, &work, &["-vvv"])
        .env("ANSIBLE_COLLECTIONS_PATH", &colls)
        .run();
    ours.assert_no_panic().assert_code(0);
    let installed = colls.join("ansible_collections/sbtest/modules/plugins/modules");
    ours.assert_stdout_has(&installed.join("conf_line.py").display().to_string());
    assert!(!ours.stdout.contains("conf_line.wasm"), "{}", ours.stdout);
    let our_result = read_json(&work.join("results.json"));

    let their_work = sb.dir("their-work");
    let theirs = sb
        .ansible_play(&pb, &their_work, &[])
        .expect("ansible-core is there: the collection was built with it")
        .env("ANSIBLE_COLLECTIONS_PATH", &colls)
        .run();
    theirs.assert_code(0);
    let their_result = read_json(&their_work.join("results.json"));
    for key in ["changed", "msg", "failed"] {
        assert_eq!(our_result[key], their_result[key], "{key}");
    }
    assert_eq!(
        std::fs::read_to_string(work.join("py.conf")).unwrap(),
        std::fs::read_to_string(their_work.join("py.conf")).unwrap()
    );
    doc_and_audit_find_the_components(&sb, &colls);
}

/// `sandball doc` and `sandball audit` find a component of the installed collection
/// `colls` by its full name.
fn doc_and_audit_find_the_components(sb: &Sandbox, colls: &Path) {
    let doc = sb
        .sandball(["doc", "sbtest.modules.json_key"])
        .env("ANSIBLE_COLLECTIONS_PATH", colls)
        .run();
    doc.assert_code(0);
    assert!(
        doc.stdout
            .contains("> MODULE sbtest.modules.json_key (component, sandboxed: "),
        "{}",
        doc.stdout
    );
    let policy = sb.write("sandball.toml", POLICY);
    let audit = sb
        .sandball([
            "audit",
            "module",
            "sbtest.modules.js_conf_line",
            "--json",
            "--policy",
            policy.to_str().unwrap(),
        ])
        .env("ANSIBLE_COLLECTIONS_PATH", colls)
        .run();
    // Exit code 2: findings (the engine's `wasi:sockets` imports, which the manifest
    // requests no `net` for), listed in the report.
    audit.assert_code(2);
    let report: Value = serde_json::from_str(&audit.stdout).unwrap();
    assert_eq!(report["module"], "sbtest.modules.js_conf_line", "{report}");
    assert_eq!(report["policy"]["manifest_granted"], true, "{report}");
    assert!(
        report["path"]
            .as_str()
            .unwrap()
            .ends_with("ansible_collections/sbtest/modules/plugins/modules/js_conf_line.wasm"),
        "{report}"
    );
}
