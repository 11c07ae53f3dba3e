//! Facts cannot steer the run: a module that returns, as facts, every setting
//! ansible-core reads from variables (connection, become, shell, interpreter,
//! temporary-directory settings: the list is read from the installed ansible-core at
//! test time, one name at a time) and sandball's own settings changes none of them,
//! and the next legacy module does not unpack where the planting module chose.

use sandball_e2e::Sandbox;
use sandball_e2e::binaries::ansible_python;
use std::process::Command;

/// Lists the `ansible_*` variables ansible-core's configuration and its connection,
/// shell and become plugins read, from their documentation.
const LIST_SETTINGS: &str = r#"
import glob, os, re, ansible, yaml
base = os.path.dirname(ansible.__file__)
names = set()
for entry in yaml.safe_load(open(os.path.join(base, 'config', 'base.yml'))).values():
    for var in entry.get('vars') or []:
        names.add(var['name'])
for kind in ('connection', 'shell', 'become', 'doc_fragments'):
    for path in glob.glob(os.path.join(base, 'plugins', kind, '*.py')):
        names.update(re.findall(r'-\s*name:\s*(ansible_[a-z0-9_]+)', open(path).read()))
print('\n'.join(sorted(n for n in names if n.startswith('ansible_'))))
"#;

const PLANT: &str = "#!/usr/bin/python\n# WANT_JSON\nimport json, sys\nargs = json.load(open(sys.argv[1]))\nprint(json.dumps({'changed': False, 'ansible_facts': {n: args['value'] for n in args['names']}}))\n";

#[test]
fn module_facts_never_set_a_setting() {
    let python = ansible_python();
    let listed = Command::new(&python)
        .args(["-c", LIST_SETTINGS])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert!(
        names.len() > 100,
        "ansible-core lists only {} settings",
        names.len()
    );
    names.extend(
        [
            "ansible_keep_remote_files",
            "ansible_remote_tmp",
            "ansible_shell_allow_world_readable_temp",
            "ansible_python_interpreter",
            "ansible_ruby_interpreter",
            "sandball_legacy_modules",
            "sandball_cache_dir",
        ]
        .map(str::to_string),
    );
    names.sort();
    names.dedup();

    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    sb.write("library/plant.py", PLANT);
    let work = sb.dir("work");
    let trap = work.join("trap");
    let shown: Vec<String> = names
        .iter()
        .map(|n| format!("{n}={{{{ {n} | default('unset') }}}}"))
        .collect();
    let pb = sb.write(
        "play.yml",
        &format!(
            r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: plant
      plant:
        value: "{trap}"
        names: {names}
    - name: what the variables say
      debug:
        msg: "{shown}"
    - name: a legacy module after the planting
      shell: echo ok
      vars: {{ansible_pipelining: false}}
"#,
            trap = trap.display(),
            names = serde_json::to_string(&names).expect("names as JSON"),
            shown = shown.join(" "),
        ),
    );
    let out = sb
        .play(&pb, &work, &[])
        .env("SANDBALL_ANSIBLE_PYTHON", &python)
        .run();
    out.assert_no_panic().assert_code(0);
    let lines = out.task_lines("what the variables say").join("\n");
    let mut contained = 0;
    for n in &names {
        assert!(
            lines.contains(&format!("{n}=")) && !lines.contains(&format!("{n}={}", trap.display())),
            "a module set {n}:\n{out}"
        );
        contained += 1;
    }
    assert!(
        !trap.exists(),
        "a legacy module used the planted temporary directory:\n{out}"
    );
    eprintln!(
        "adversarial: {} settings planted as facts, {contained} contained",
        names.len()
    );
}
