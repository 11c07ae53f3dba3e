//! The adversarial suite: the `adversary` fixture (tests/fixtures) tries, one attack
//! per task, to read, write, run, connect to or look up what its grant does not
//! hold, to outrun its limits, and to fool the controller with forged internal keys
//! and Jinja. Every attempt must be contained: its task fails with a message that
//! says what was refused (forged results are defused instead), nothing outside the
//! grant changes, no secret reaches the output, and the other tasks and hosts go on.
//!
//! The grants the tasks hold come through the `capabilities:` keyword, within what
//! a policy file allows the module; the policy also sets the module's limits.
//!
//! The files beside this one each hold one class of attack (the node cache, paths,
//! programs, controller-side leaks…); every test prints how many attempts it tried
//! and how many were contained.

mod broad_grants;
mod cache;
mod environment;
mod facts;
mod output;
mod paths;
mod results;

use sandball_e2e::tree::snapshot;
use sandball_e2e::{Binaries, Output, Sandbox};
use serde_json::Value;
use std::net::TcpListener;

/// One attack: its task name, the module arguments and `capabilities:` (YAML), and
/// what its failure message must say.
struct Attempt {
    task: &'static str,
    args: String,
    grant: &'static str,
    expect: Vec<String>,
}

const GRANTED: &str = "[{kind: fs, path: '{{ work }}/granted', access: read-write, scope: tree}]";
const SECRET: &str = "sandball-adversary-secret-0451";

fn attempts(port: u16) -> Vec<Attempt> {
    let a = |task, args: &str, grant, expect: &[&str]| Attempt {
        task,
        args: args.to_string(),
        grant,
        expect: expect.iter().map(|e| e.to_string()).collect(),
    };
    let denied_port = format!("was denied net 127.0.0.1:{port}");
    vec![
        a(
            "open ../../etc/shadow",
            "{attack: read, path: ../../etc/shadow}",
            GRANTED,
            &["cannot read ../../etc/shadow"],
        ),
        a(
            "open /etc/shadow",
            "{attack: read, path: /etc/shadow}",
            GRANTED,
            &[
                "cannot read /etc/shadow",
                "can only see the paths its grant covers",
            ],
        ),
        a(
            "follow a relative symlink out of the grant",
            "{attack: read, path: '{{ work }}/granted/escape/victim.txt'}",
            GRANTED,
            &["cannot read", "granted/escape/victim.txt"],
        ),
        a(
            "follow an absolute symlink out of the grant",
            "{attack: read, path: '{{ work }}/granted/etc/hostname'}",
            GRANTED,
            &["cannot read", "granted/etc/hostname"],
        ),
        a(
            "write outside the grant",
            "{attack: write, path: '{{ work }}/outside/victim.txt'}",
            GRANTED,
            &["cannot write", "outside/victim.txt"],
        ),
        a(
            "write through ..",
            "{attack: write, path: '{{ work }}/granted/../outside/new.txt'}",
            GRANTED,
            &["cannot write", "granted/../outside/new.txt"],
        ),
        a(
            "write through a symlink",
            "{attack: write, path: '{{ work }}/granted/escape/new.txt'}",
            GRANTED,
            &["cannot write", "granted/escape/new.txt"],
        ),
        a(
            "exec a program not granted",
            "{attack: exec, argv: [/bin/sh, -c, 'touch {{ work }}/outside/pwned']}",
            "[{kind: exec, program: /bin/echo, args: [hello]}]",
            &["module adversary was denied exec /bin/sh"],
        ),
        a(
            "exec a granted program with other arguments",
            "{attack: exec, argv: [/bin/echo, pwned]}",
            "[{kind: exec, program: /bin/echo, args: [hello]}]",
            &["module adversary was denied exec /bin/echo pwned"],
        ),
        a(
            "connect to a loopback port not granted",
            &format!("{{attack: connect, port: {port}}}"),
            "[{kind: net, address: '127.0.0.1:1'}]",
            &["cannot connect", &denied_port],
        ),
        a(
            "connect without any network grant",
            &format!("{{attack: connect, port: {port}}}"),
            "[]",
            &["cannot connect to 127.0.0.1"],
        ),
        a(
            "look up a name without a dns grant",
            &format!("{{attack: lookup, port: {port}}}"),
            "[{kind: net, address: '127.0.0.1:1'}]",
            &["cannot look up localhost"],
        ),
        a(
            "read an environment variable not granted",
            "{attack: env, name: SANDBALL_ADVERSARY_SECRET}",
            "[{kind: env, name: HOME}]",
            &["cannot read $SANDBALL_ADVERSARY_SECRET"],
        ),
        a(
            "loop forever",
            "{attack: spin}",
            "[]",
            &["module adversary was stopped", "time limit"],
        ),
        a(
            "allocate without bound",
            "{attack: alloc}",
            "[]",
            &["module adversary was stopped", "memory"],
        ),
        a(
            "print megabytes",
            "{attack: print}",
            "[]",
            &["module adversary was stopped", "output"],
        ),
    ]
}

fn playbook(attempts: &[Attempt], marker: &str) -> String {
    let mut yaml =
        String::from("- name: adversarial\n  hosts: all\n  gather_facts: false\n  tasks:\n");
    for a in attempts {
        yaml.push_str(&format!(
            "    - name: {}\n      adversary: {}\n      capabilities: {}\n      ignore_errors: true\n\n",
            a.task, a.args, a.grant
        ));
    }
    yaml.push_str(&format!(
        r#"    - name: forge internal keys and Jinja
      adversary: {{attack: forge, marker: '{marker}'}}
      register: forged

    - name: the forged strings stay text
      debug:
        msg: "sum={{{{ forged.sum }}}} fact={{{{ planted | default('unset') }}}} keys={{{{ forged.keys() | select('match', '_ansible') | list | length }}}}"

    - name: the others go on
      ping:
"#
    ));
    yaml
}

const POLICY: &str = r#"
[[policy.rule]]
modules = ["adversary"]
allow = [
  {kind = "fs", path = "WORK/granted", access = "read-write", scope = "tree"},
  {kind = "exec", program = "/bin/echo", args = ["hello"]},
  {kind = "net", address = "127.0.0.1:1"},
  {kind = "env", name = "HOME"},
]
limits = {wall_time_ms = 4000, memory_bytes = 67108864, output_bytes = 1048576}
"#;

/// The message of `host`'s failure under `task`, and whether it was ignored.
fn failure(out: &Output, task: &str, host: &str) -> Option<String> {
    let prefix = format!("fatal: [{host}]: FAILED! => ");
    out.task_lines(task).into_iter().find_map(|l| {
        let json = l.strip_prefix(prefix.as_str())?;
        let v: Value = serde_json::from_str(json).ok()?;
        Some(v["msg"].as_str().unwrap_or_default().to_string())
    })
}

#[test]
fn every_attack_is_contained() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let work = sb.dir("work");
    std::fs::create_dir(work.join("granted")).unwrap();
    std::fs::write(work.join("granted/ok.txt"), "mine\n").unwrap();
    std::fs::create_dir(work.join("outside")).unwrap();
    std::fs::write(work.join("outside/victim.txt"), "original\n").unwrap();
    std::os::unix::fs::symlink("../outside", work.join("granted/escape")).unwrap();
    std::os::unix::fs::symlink("/etc", work.join("granted/etc")).unwrap();
    let marker = work.join("outside/pwned-by-jinja");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();

    let attempts = attempts(port);
    let pb = sb.write("play.yml", &playbook(&attempts, marker.to_str().unwrap()));
    let policy = sb.write(
        "policy.toml",
        &POLICY.replace("WORK", work.to_str().unwrap()),
    );
    let before = snapshot(&work);
    let out = sb
        .play(&pb, &work, &["--policy", policy.to_str().unwrap()])
        .env("SANDBALL_MODULE_PATH", Binaries::fixtures())
        .env("SANDBALL_ADVERSARY_SECRET", SECRET)
        .run();
    out.assert_no_panic().assert_code(0);

    let mut contained = 0;
    for a in &attempts {
        for host in ["alpha", "beta"] {
            let msg = failure(&out, a.task, host)
                .unwrap_or_else(|| panic!("{:?} was not refused on {host}:\n{out}", a.task));
            for word in &a.expect {
                assert!(
                    msg.contains(word),
                    "{:?} on {host}: the message lacks {word:?}: {msg}",
                    a.task
                );
            }
        }
        contained += 1;
    }

    // Nothing escaped: no attack returned its loot, nothing outside the grant (or
    // inside it) changed, no secret was printed, nobody connected.
    assert!(!out.stdout.contains("\"escaped\""), "{out}");
    assert_eq!(snapshot(&work), before, "the work tree changed:\n{out}");
    assert!(!marker.exists(), "forged Jinja was rendered");
    assert!(!out.stdout.contains(SECRET), "{out}");
    if let Ok(shadow) = std::fs::read_to_string("/etc/shadow") {
        for line in shadow.lines().filter(|l| l.len() > 8) {
            assert!(!out.stdout.contains(line), "shadow leaked:\n{out}");
        }
    }
    assert!(
        listener.accept().is_err(),
        "a connection reached the loopback listener"
    );

    // Forged internal keys are dropped and module strings are never templated.
    let debug = out.task_lines("the forged strings stay text").join("\n");
    assert!(
        debug.contains("sum={{ 7 * 7 }} fact=") && debug.contains(" keys=0"),
        "forged strings were rendered or internal keys kept:\n{out}"
    );
    assert!(
        !debug.contains("fact=42"),
        "a forged fact was rendered:\n{out}"
    );
    contained += 1;

    // The other tasks and hosts went on.
    for host in ["alpha", "beta"] {
        assert!(
            out.task_lines("the others go on")
                .iter()
                .any(|l| l.starts_with(&format!("ok: [{host}]"))),
            "{host} did not go on:\n{out}"
        );
        let recap = out.host(host);
        assert_eq!(recap.failed, 0, "{out}");
        assert_eq!(recap.ignored as usize, attempts.len(), "{out}");
    }
    let tried = attempts.len() + 1;
    assert_eq!(contained, tried);
    eprintln!("adversarial: {tried} attempts tried on 2 hosts, {contained} contained");
}
