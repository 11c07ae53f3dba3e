//! The policy file end to end: a rule lets the `capabilities:` keyword widen a
//! third-party module's grant on some hosts only; a deny rule wins over the keyword
//! and the message names its line; a policy file that does not parse stops the run
//! before anything runs, naming the file and line.

use sandball_e2e::{Binaries, HostRecap, Output, Sandbox};
use serde_json::Value;

const PLAY: &str = r#"
- name: policy
  hosts: all
  gather_facts: false
  tasks:
    - name: read with the keyword
      denied_reader:
        via: exec
      capabilities:
        - {kind: exec, program: /bin/cat}

    - name: the others go on
      ping:
"#;

fn run(policy: &str) -> (Output, std::path::PathBuf) {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let pb = sb.write("play.yml", PLAY);
    let file = sb.write("policy.toml", policy);
    let out = sb
        .play(
            &pb,
            &sb.dir("work"),
            &["-v", "--policy", file.to_str().unwrap()],
        )
        .env("SANDBALL_MODULE_PATH", Binaries::fixtures())
        .run();
    out.assert_no_panic();
    (out, file)
}

fn fatal_msg(out: &Output, host: &str) -> String {
    let prefix = format!("fatal: [{host}]: FAILED! => ");
    let line = out
        .task_lines("read with the keyword")
        .into_iter()
        .find_map(|l| l.strip_prefix(prefix.as_str()).map(str::to_string))
        .unwrap_or_else(|| panic!("no failure on {host}:\n{out}"));
    let v: Value = serde_json::from_str(&line).unwrap();
    v["msg"].as_str().unwrap_or_default().to_string()
}

#[test]
fn the_keyword_widens_only_where_a_rule_allows_it() {
    let (out, file) = run(r#"
[policy]
legacy = "warn"

[[policy.rule]]
modules = ["denied_reader"]
hosts = "beta"
allow = [{kind = "exec", program = "/bin/*"}]
"#);
    out.assert_code(2);
    let msg = fatal_msg(&out, "alpha");
    assert!(
        msg.contains("module denied_reader may not be granted exec /bin/cat"),
        "{msg}"
    );
    assert!(
        msg.contains(&format!(
            r#"add to {}: [[policy.rule]] modules = ["denied_reader"] allow = [{{kind = "exec", program = "/bin/cat"}}]"#,
            file.display()
        )),
        "{msg}"
    );
    assert!(
        out.task_lines("read with the keyword")
            .iter()
            .any(|l| l.starts_with("ok: [beta]")),
        "{out}"
    );
    assert_eq!(
        out.host("alpha"),
        HostRecap {
            failed: 1,
            ..HostRecap::default()
        },
        "{out}"
    );
    assert_eq!(
        out.host("beta"),
        HostRecap {
            ok: 2,
            ..HostRecap::default()
        },
        "{out}"
    );
}

#[test]
fn a_deny_rule_wins_and_the_message_names_its_line() {
    let (out, file) = run(r#"
[[policy.rule]]
allow = [{kind = "exec", program = "*"}]

[[policy.rule]]
hosts = "alpha"
deny = [{kind = "exec", program = "/bin/cat"}]
"#);
    out.assert_code(2);
    let msg = fatal_msg(&out, "alpha");
    assert!(
        msg.contains("module denied_reader was denied exec /bin/cat"),
        "{msg}"
    );
    assert!(
        msg.contains(&format!("remove the deny entry at {}:5", file.display())),
        "{msg}"
    );
    assert_eq!(
        out.host("beta"),
        HostRecap {
            ok: 2,
            ..HostRecap::default()
        },
        "{out}"
    );
}

#[test]
fn a_broken_policy_file_stops_the_run_before_it_starts() {
    let (out, file) = run("[[policy.rule]]\ngrnat = []\n");
    out.assert_code(5);
    out.assert_stderr_has(&format!("policy file {}:2", file.display()));
    assert!(!out.stdout.contains("TASK ["), "{out}");
}
