//! A policy that lets a module run a program that runs others (`find -exec`, `env`,
//! shells, interpreters…) with any arguments has granted it every program: `sandball
//! audit` (module and playbook) and a run under `-v` warn of such a grant, naming it
//! and how to narrow it; a grant that lists the arguments draws no warning.

use sandball_e2e::{Binaries, Sandbox};

const POLICY: &str = r#"
[[policy.rule]]
modules = ["adversary"]
grant = [{kind = "exec", program = "/usr/bin/find"}]
allow = [{kind = "exec", program = "/usr/bin/env", args = ["**"]}]
"#;

const NARROW: &str = r#"
[[policy.rule]]
modules = ["adversary"]
grant = [{kind = "exec", program = "/usr/bin/find", args = ["/var/log", "-name", "*.log"]}]
"#;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: find, as granted
      adversary: {attack: exec, argv: [/usr/bin/find, /nonexistent-dir, -maxdepth, "0"]}
      ignore_errors: true
    - name: again
      adversary: {attack: exec, argv: [/usr/bin/find, /nonexistent-dir, -maxdepth, "0"]}
      ignore_errors: true
"#;

#[test]
fn broad_grants_of_programs_that_run_others_are_warned_of() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", PLAY);
    let policy = sb.write("policy.toml", POLICY);
    let narrow = sb.write("narrow.toml", NARROW);
    let fixtures = Binaries::fixtures();
    let module = |policy: &std::path::Path| {
        sb.sandball([
            "audit",
            "module",
            "adversary",
            "-M",
            fixtures.to_str().unwrap_or_default(),
            "--policy",
            policy.to_str().unwrap_or_default(),
        ])
        .run()
    };

    // The fixture's manifest requests nothing it imports: `audit` finds errors (exit 2)
    // besides the policy's warnings.
    let out = module(&policy);
    out.assert_no_panic().assert_code(2);
    let at = format!("the policy rule at {}:2", policy.display());
    assert!(
        out.stdout.contains(&format!("warning: {at} grants `exec /usr/bin/find`: find may be given any arguments, and it can run other programs")),
        "{out}"
    );
    assert!(
        out.stdout
            .contains("`exec /usr/bin/env with arguments [**]`"),
        "{out}"
    );
    assert!(out.stdout.contains("`args = [...]`"), "{out}");
    let quiet = module(&narrow);
    quiet.assert_no_panic().assert_code(2);
    assert!(!quiet.stdout.contains("can run other programs"), "{quiet}");

    let audit = sb
        .sandball([
            "audit",
            "playbook",
            pb.to_str().unwrap_or_default(),
            "-i",
            sb.path().join("inventory.ini").to_str().unwrap_or_default(),
            "--policy",
            policy.to_str().unwrap_or_default(),
        ])
        .env("SANDBALL_MODULE_PATH", &fixtures)
        .run();
    audit.assert_no_panic().assert_code(0);
    assert_eq!(
        audit.stderr.matches("can run other programs").count(),
        1,
        "one warning for the one grant:\n{audit}"
    );

    let play = |extra: &[&str]| {
        let mut args = vec!["--policy", policy.to_str().unwrap_or_default()];
        args.extend_from_slice(extra);
        sb.play(&pb, &work, &args)
            .env("SANDBALL_MODULE_PATH", &fixtures)
            .run()
    };
    let verbose = play(&["-v"]);
    verbose.assert_no_panic().assert_code(0);
    assert_eq!(
        verbose.stderr.matches("can run other programs").count(),
        1,
        "once per run, on two hosts and two tasks:\n{verbose}"
    );
    let plain = play(&[]);
    plain.assert_no_panic().assert_code(0);
    assert!(!plain.stderr.contains("can run other programs"), "{plain}");
    eprintln!("adversarial: 2 broad grants and 1 narrow one audited, 2 warned of");
}
