//! What reaches the user: a value the module's own argument spec marks `no_log`
//! never appears in any output (task lines, `--output jsonl`, the audit log), not
//! even quoted back in a refused command line or in the controller's refusal of a
//! grant; `no_log` set on a play or a block
//! hides every result beneath it; and control characters a module returns (terminal
//! escapes that write the clipboard or rewrite lines, a newline that fakes an `ok:`
//! line) are shown escaped.

use sandball_e2e::{Binaries, Sandbox};

const SECRET: &str = "spec-secret-9931";
const PLAY_SECRET: &str = "play-secret-1207";

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: a refused program quoting a no_log argument
      adversary:
        attack: exec
        argv: [/bin/echo, spec-secret-9931]
        secret: spec-secret-9931
      capabilities: [{kind: exec, program: /bin/true}]
      ignore_errors: true
    - name: a grant the controller refuses, naming a no_log argument
      adversary:
        attack: read
        path: /nonexistent/spec-secret-9931
        secret: spec-secret-9931
      capabilities: [{kind: fs, path: /nonexistent/spec-secret-9931, access: read}]
      ignore_errors: true

- hosts: all
  gather_facts: false
  no_log: true
  vars:
    pw: play-secret-1207
  tasks:
    - name: a failure quoting a secret under a no_log play
      fail: {msg: "{{ pw }}"}
      ignore_errors: true
    - name: a block under a no_log play
      block:
        - name: a debug quoting it
          debug: {msg: "{{ pw }}"}
"#;

#[test]
fn no_log_values_never_reach_any_output() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", PLAY);
    let policy = sb.write(
        "policy.toml",
        "[[policy.rule]]\nmodules = [\"adversary\"]\nallow = [{kind = \"exec\", program = \"/bin/true\"}]\n",
    );
    let audit = sb.path().join("audit.jsonl");
    let mut tried = 0;
    for format in ["default", "jsonl"] {
        let out = sb
            .play(
                &pb,
                &work,
                &[
                    "--policy",
                    policy.to_str().unwrap_or_default(),
                    "--audit-log",
                    audit.to_str().unwrap_or_default(),
                    "--output",
                    format,
                ],
            )
            .env("SANDBALL_MODULE_PATH", Binaries::fixtures())
            .run();
        out.assert_no_panic().assert_code(0);
        assert!(out.stdout.contains("was denied exec /bin/echo"), "{out}");
        assert!(
            out.stdout
                .contains("may not be granted fs read on /nonexistent/********"),
            "the refused grant: {out}"
        );
        for secret in [SECRET, PLAY_SECRET] {
            assert!(
                !out.stdout.contains(secret) && !out.stderr.contains(secret),
                "{secret} leaked with --output {format}:\n{out}"
            );
            tried += 1;
        }
        let log = std::fs::read_to_string(&audit).unwrap_or_default();
        assert!(
            !log.is_empty() && !log.contains(SECRET),
            "the audit log: {log}"
        );
        tried += 1;
    }
    eprintln!("adversarial: {tried} leaks tried, {tried} contained");
}

const NOISY: &str = "#!/usr/bin/python\n# WANT_JSON\nimport json\nprint(json.dumps({'changed': False, 'warnings': ['copied \\u001b]52;c;cHduZWQ=\\u0007 done', 'fine\\nok: [forged]'], 'deprecations': [{'msg': '\\u001b[2J\\u001b[Hcleared', 'version': '9'}]}))\n";

#[test]
fn terminal_escapes_from_modules_are_shown_escaped() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    sb.write("library/noisy.py", NOISY);
    let work = sb.dir("work");
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - noisy:\n",
    );
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    assert!(
        !out.stdout.contains('\u{1b}') && !out.stderr.contains('\u{1b}'),
        "{out:?}"
    );
    // Warnings are shown on stderr, as Ansible's.
    assert!(out.stderr.contains("\\x1b]52;c;cHduZWQ=\\x07"), "{out}");
    assert!(
        !out.stdout
            .lines()
            .chain(out.stderr.lines())
            .any(|l| l.starts_with("ok: [forged]")),
        "a module's warning faked a result line:\n{out}"
    );
    eprintln!("adversarial: 3 terminal escapes tried, 3 contained");
}
