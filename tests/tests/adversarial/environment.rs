//! What a module learns of the node without being granted it: no environment
//! variable (not `HOME`, not `PWD`) and not the directory it was started from. It
//! learns `HOME` only when its grant names a path under `~`, and its working
//! directory only when its grant names a relative path: where the shim resolved
//! those grants, so that the module resolves its arguments the same way.

use sandball_e2e::{Binaries, Sandbox};
use serde_json::Value;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: granted nothing
      adversary: {attack: environ}
      register: nothing
    - name: granted a path under the home directory
      adversary: {attack: environ}
      capabilities: [{kind: fs, path: "~/.sandball-environ-probe", access: read}]
      register: home
    - name: granted a relative path
      adversary: {attack: environ}
      capabilities: [{kind: fs, path: ".", access: read, scope: tree}]
      register: relative
    - name: granted a variable
      adversary: {attack: environ}
      capabilities: [{kind: env, name: LANG}]
      register: variable
    - debug:
        msg: "{{ {'nothing': nothing, 'home': home, 'relative': relative, 'variable': variable} | to_json }}"
"#;

const POLICY: &str = r#"
[[policy.rule]]
modules = ["adversary"]
allow = [
  {kind = "fs", path = "~/.sandball-environ-probe", access = "read"},
  {kind = "fs", path = ".", access = "read", scope = "tree"},
  {kind = "env", name = "LANG"},
]
"#;

#[test]
fn a_module_learns_no_environment_it_was_not_granted() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", PLAY);
    let policy = sb.write("policy.toml", POLICY);
    let out = sb
        .play(
            &pb,
            &work,
            &["--policy", policy.to_str().unwrap_or_default()],
        )
        .env("SANDBALL_MODULE_PATH", Binaries::fixtures())
        .env("LANG", "C.UTF-8")
        .run();
    out.assert_no_panic().assert_code(0);
    let line = out
        .stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("\"msg\": "))
        .unwrap_or_else(|| panic!("no debug message:\n{out}"));
    let text: String = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    let seen: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let names = |run: &str| -> Vec<String> {
        let mut v: Vec<String> = seen[run]["names"]
            .as_array()
            .unwrap_or_else(|| panic!("{run}: {seen}"))
            .iter()
            .filter_map(|n| n.as_str().map(str::to_string))
            .collect();
        v.sort();
        v
    };
    let cwd = |run: &str| seen[run]["cwd"].as_str().unwrap_or_default().to_string();
    let sandbox = std::fs::canonicalize(sb.path()).unwrap_or_else(|_| sb.path().to_path_buf());

    assert_eq!(names("nothing"), Vec::<String>::new(), "{out}");
    assert_eq!(cwd("nothing"), "/", "{out}");
    assert_eq!(names("home"), ["HOME"], "{out}");
    assert_eq!(cwd("home"), "/", "{out}");
    assert_eq!(names("relative"), Vec::<String>::new(), "{out}");
    assert_eq!(cwd("relative"), sandbox.display().to_string(), "{out}");
    assert_eq!(names("variable"), ["LANG"], "{out}");
    eprintln!("adversarial: 4 environments inspected, none held what was not granted");
}
