//! What a run shows, as ansible-core 2.19 shows it: `callback_result_format = yaml`,
//! `display_ok_hosts`/`display_skipped_hosts`, colours (`ANSIBLE_FORCE_COLOR`,
//! `[colors]`), `--step`, retry files, the `junit` report, ad-hoc `-o`/`--tree`/
//! `--list-hosts` — each compared with ansible-core's own output. The `json` stdout
//! callback and `profile_tasks`/`timer` come from ansible.posix, which ansible-core
//! does not ship: their output is checked against the run's own recap and format.

use sandball_e2e::{Output, Sandbox};
use std::path::Path;

/// Two hosts taking different paths: ok, changed, skipped on one, an ignored failure
/// on the other, a multi-line value.
const PLAY: &str = r#"- hosts: all
  gather_facts: false
  tasks:
    - name: say hi
      debug: msg=hi
    - name: change
      debug: msg=changed
      changed_when: true
    - name: only on b
      debug:
        var: nested
      vars:
        nested: {list: [1, 2], text: "multi\nline\n", empty: "", flag: "yes"}
      when: inventory_hostname == 'b'
    - name: fails on a
      fail: msg=boom
      when: inventory_hostname == 'a'
      ignore_errors: true
"#;

/// Writes the playbook and the two-host inventory; their paths as text. Runs use
/// `-f 1` so that both tools show the hosts in the same order.
fn setup(sb: &Sandbox) -> (String, String) {
    let pb = sb.write("play.yml", PLAY).display().to_string();
    let inv = sb.inventory(&["a", "b"]).display().to_string();
    (pb, inv)
}

/// Both tools' stdout for the same run with the same environment; `None` without
/// ansible-core.
fn both(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Option<(Output, Output)> {
    let mut ours = sb.sandball(std::iter::once("playbook").chain(args.iter().copied()));
    let mut theirs = sb.ansible_playbook(args.iter().copied())?;
    for (k, v) in env {
        ours = ours.env(k, v);
        theirs = theirs.env(k, v);
    }
    Some((ours.run(), theirs.run()))
}

#[test]
fn yaml_results_read_as_ansibles() {
    let sb = Sandbox::new();
    let (pb, inv) = setup(&sb);
    let env = [("ANSIBLE_CALLBACK_RESULT_FORMAT", "yaml")];
    let Some((ours, theirs)) = both(&sb, &[&pb, "-i", &inv, "-f", "1"], &env) else {
        return;
    };
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("ok: [b] => \n    nested:\n        empty: ''\n        flag: 'yes'\n        list:\n        - 1\n        - 2\n        text: |-\n            multi\n            line\n");
    assert_eq!(
        ours.stdout, theirs.stdout,
        "\n--- ours:\n{ours}\n--- ansible:\n{theirs}"
    );
}

#[test]
fn hidden_ok_and_skipped_hosts_as_ansible_hides_them() {
    let sb = Sandbox::new();
    let (pb, inv) = setup(&sb);
    let env = [
        ("ANSIBLE_DISPLAY_OK_HOSTS", "false"),
        ("ANSIBLE_DISPLAY_SKIPPED_HOSTS", "false"),
    ];
    let Some((ours, theirs)) = both(&sb, &[&pb, "-i", &inv, "-f", "1"], &env) else {
        return;
    };
    ours.assert_no_panic().assert_code(0);
    assert!(!ours.stdout.contains("TASK [say hi]"), "{ours}");
    assert!(!ours.stdout.contains("skipping:"), "{ours}");
    assert_eq!(
        ours.stdout, theirs.stdout,
        "\n--- ours:\n{ours}\n--- ansible:\n{theirs}"
    );
}

#[test]
fn failures_on_stderr_with_their_task_path_as_ansible_shows_them() {
    let sb = Sandbox::new();
    let inv = sb.inventory(&["a"]).display().to_string();
    // A debug loop that fails shows its summary line too.
    let pb = sb
        .write(
            "loop.yml",
            "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: msg=d{{ item }}\n      failed_when: item == 2\n      ignore_errors: true\n      loop: [1, 2]\n    - fail: msg=boom\n      ignore_errors: true\n",
        )
        .display()
        .to_string();
    let env = [
        ("ANSIBLE_DISPLAY_FAILED_STDERR", "true"),
        ("ANSIBLE_SHOW_TASK_PATH_ON_FAILURE", "true"),
    ];
    let Some((ours, theirs)) = both(&sb, &[&pb, "-i", &inv], &env) else {
        return;
    };
    ours.assert_no_panic().assert_code(0);
    assert!(!ours.stdout.contains("fatal:"), "{ours}");
    ours.assert_stderr_has("fatal: [a]: FAILED! => {\"msg\": \"One or more items failed\"}");
    ours.assert_stdout_has(&format!("task path: {pb}:8\n"));
    assert_eq!(
        (&ours.stdout, &ours.stderr),
        (&theirs.stdout, &theirs.stderr),
        "\n--- ours:\n{ours}\n--- ansible:\n{theirs}"
    );
}

#[test]
fn colours_are_ansibles() {
    let sb = Sandbox::new();
    let (pb, inv) = setup(&sb);
    for colors in [&[][..], &[("ANSIBLE_COLOR_OK", "bright blue")][..]] {
        let ours = colors
            .iter()
            .fold(
                sb.sandball(["playbook", &pb, "-i", &inv, "-f", "1"])
                    .env_remove("NO_COLOR")
                    .env("ANSIBLE_FORCE_COLOR", "1"),
                |i, (k, v)| i.env(k, v),
            )
            .run();
        ours.assert_no_panic().assert_code(0);
        assert!(ours.stdout.contains("\x1b["), "{ours}");
        // Without forcing, a pipe gets no colour.
        let plain = sb
            .sandball(["playbook", &pb, "-i", &inv, "-f", "1"])
            .env_remove("NO_COLOR")
            .run();
        assert!(!plain.stdout.contains('\x1b'), "{plain}");
        let Some(theirs) = sb.ansible_playbook([&pb, "-i", &inv, "-f", "1"]) else {
            return;
        };
        let theirs = colors
            .iter()
            .fold(theirs.env("ANSIBLE_FORCE_COLOR", "1"), |i, (k, v)| {
                i.env(k, v)
            })
            .run();
        assert_eq!(
            ours.stdout, theirs.stdout,
            "\n--- ours:\n{ours}\n--- ansible:\n{theirs}"
        );
    }
}

#[test]
fn step_asks_before_each_task() {
    let sb = Sandbox::new();
    let (pb, inv) = setup(&sb);
    // Run the first task, skip the second, run the third and stop asking.
    let answers = sb.write("answers", "y\nn\nc\n");
    let ours = sb
        .sandball(["playbook", &pb, "-i", &inv, "-f", "1", "--step"])
        .run_with_stdin(&answers);
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("Perform task: TASK: change (N)o/(y)es/(c)ontinue: ");
    assert!(!ours.stdout.contains("TASK [change]"), "{ours}");
    assert_eq!(ours.stdout.matches("Perform task:").count(), 6, "{ours}");
    let Some(theirs) = sb.ansible_playbook([&pb, "-i", &inv, "-f", "1", "--step"]) else {
        return;
    };
    let theirs = theirs.run_with_stdin(&answers);
    assert_eq!(
        ours.stdout, theirs.stdout,
        "\n--- ours:\n{ours}\n--- ansible:\n{theirs}"
    );
}

#[test]
fn retry_files_name_the_failed_hosts() {
    let sb = Sandbox::new();
    let pb = sb
        .write(
            "site.yml",
            "- hosts: all\n  gather_facts: false\n  tasks:\n    - fail: msg=no\n      when: inventory_hostname != 'a'\n",
        )
        .display()
        .to_string();
    let inv = sb.inventory(&["a", "c", "b"]).display().to_string();
    let mine = sb.dir("mine");
    let ours = sb
        .sandball(["playbook", &pb, "-i", &inv, "-f", "1"])
        .env("ANSIBLE_RETRY_FILES_ENABLED", "true")
        .env("ANSIBLE_RETRY_FILES_SAVE_PATH", &mine)
        .run();
    ours.assert_no_panic().assert_code(2);
    let file = mine.join("site.retry");
    assert_eq!(std::fs::read_to_string(&file).unwrap_or_default(), "b\nc\n");
    ours.assert_stdout_has(&format!("\tto retry, use: --limit @{}\n", file.display()));
    // Without the setting (Ansible's default), none is written.
    let none = sb.dir("none");
    sb.sandball(["playbook", &pb, "-i", &inv, "-f", "1"])
        .env("ANSIBLE_RETRY_FILES_SAVE_PATH", &none)
        .run()
        .assert_code(2);
    assert!(!none.join("site.retry").exists());
    let Some(theirs) = sb.ansible_playbook([&pb, "-i", &inv, "-f", "1"]) else {
        return;
    };
    let theirs_dir = sb.dir("theirs");
    let theirs = theirs
        .env("ANSIBLE_RETRY_FILES_ENABLED", "true")
        .env("ANSIBLE_RETRY_FILES_SAVE_PATH", &theirs_dir)
        .run();
    assert_eq!(
        std::fs::read_to_string(theirs_dir.join("site.retry")).unwrap_or_default(),
        "b\nc\n"
    );
    let ours_text = ours.stdout.replace(&mine.display().to_string(), "DIR");
    let theirs_text = theirs
        .stdout
        .replace(&theirs_dir.display().to_string(), "DIR");
    assert_eq!(
        ours_text, theirs_text,
        "\n--- ours:\n{ours}\n--- ansible:\n{theirs}"
    );
}

/// The test cases of a junit report: (classname, name, what ended them), sorted, and
/// the suite's counters.
fn junit_cases(dir: &Path) -> (Vec<(String, String, String)>, String) {
    let file = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .find(|e| e.path().extension().is_some_and(|x| x == "xml"))
        .unwrap_or_else(|| panic!("no report in {}", dir.display()))
        .path();
    let xml = std::fs::read_to_string(&file).unwrap_or_default();
    let attr = |tag: &str, name: &str| -> String {
        let key = format!(" {name}=\"");
        let tag = format!(" {tag}");
        tag.find(&key)
            .map(|i| {
                let rest = &tag[i + key.len()..];
                rest[..rest.find('"').unwrap_or(rest.len())].to_string()
            })
            .unwrap_or_default()
    };
    let mut cases = Vec::new();
    for chunk in xml.split("<testcase ").skip(1) {
        let head = &chunk[..chunk.find('>').unwrap_or(chunk.len())];
        let body = &chunk[..chunk.find("</testcase>").unwrap_or(chunk.len())];
        let ended = ["<failure", "<error", "<skipped", "<system-out"]
            .iter()
            .find(|t| body.contains(*t))
            .map_or("", |t| &t[1..])
            .to_string();
        cases.push((attr(head, "classname"), attr(head, "name"), ended));
    }
    cases.sort();
    let suite = xml
        .split("<testsuite ")
        .nth(1)
        .map(|s| {
            let head = &s[..s.find('>').unwrap_or(s.len())];
            ["errors", "failures", "name", "skipped", "tests"]
                .iter()
                .map(|k| format!("{k}={}", attr(head, k)))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    (cases, suite)
}

#[test]
fn junit_reports_as_ansibles() {
    let sb = Sandbox::new();
    let (pb, inv) = setup(&sb);
    let mine = sb.dir("junit-mine");
    let ours = sb
        .sandball(["playbook", &pb, "-i", &inv, "-f", "1"])
        .env("ANSIBLE_CALLBACKS_ENABLED", "junit")
        .env("JUNIT_OUTPUT_DIR", &mine)
        .env("JUNIT_FAIL_ON_IGNORE", "true")
        .run();
    ours.assert_no_panic().assert_code(0);
    let (cases, suite) = junit_cases(&mine);
    assert_eq!(
        suite, "errors=1 failures=0 name=play skipped=2 tests=8",
        "{cases:?}"
    );
    let Some(theirs) = sb.ansible_playbook([&pb, "-i", &inv, "-f", "1"]) else {
        return;
    };
    let dir = sb.dir("junit-theirs");
    theirs
        .env("ANSIBLE_CALLBACKS_ENABLED", "junit")
        .env("JUNIT_OUTPUT_DIR", &dir)
        .env("JUNIT_FAIL_ON_IGNORE", "true")
        .run()
        .assert_code(0);
    assert_eq!((cases, suite), junit_cases(&dir));
}

#[test]
fn json_output_holds_the_run() {
    let sb = Sandbox::new();
    let (pb, inv) = setup(&sb);
    let ours = sb
        .sandball(["playbook", &pb, "-i", &inv, "-f", "1"])
        .env("ANSIBLE_STDOUT_CALLBACK", "ansible.posix.json")
        .run();
    ours.assert_no_panic().assert_code(0);
    let doc: serde_json::Value = serde_json::from_str(&ours.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}):\n{ours}"));
    let tasks = doc["plays"][0]["tasks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let names: Vec<&str> = tasks
        .iter()
        .filter_map(|t| t["task"]["name"].as_str())
        .collect();
    assert_eq!(names, ["say hi", "change", "only on b", "fails on a"]);
    assert_eq!(tasks[0]["hosts"]["a"]["msg"], "hi");
    let play = &doc["plays"][0]["play"];
    assert!(
        play["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("play.yml:1")),
        "{play}"
    );
    let ids: Vec<&str> = std::iter::once(&play["id"])
        .chain(tasks.iter().map(|t| &t["task"]["id"]))
        .filter_map(serde_json::Value::as_str)
        .collect();
    assert_eq!(ids.len(), 5, "{doc}");
    assert!(
        ids.iter()
            .all(|i| i.len() == 36 && i.split('-').count() == 5),
        "{ids:?}"
    );
    assert!(ids.windows(2).all(|w| w[0] != w[1]), "{ids:?}");
    assert_eq!(tasks[0]["hosts"]["b"]["action"], "debug");
    assert_eq!(tasks[2]["hosts"]["a"]["skipped"], true);
    assert_eq!(tasks[3]["hosts"]["a"]["failed"], true);
    assert!(
        tasks[3]["task"]["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("play.yml:15")),
        "{}",
        tasks[3]
    );
    // The counters are the recap ansible-playbook prints for the same run.
    let Some(theirs) = sb.ansible_playbook([&pb, "-i", &inv, "-f", "1"]) else {
        return;
    };
    let theirs = theirs.run();
    for (host, r) in theirs.recap() {
        let s = &doc["stats"][&host];
        let mine: Vec<u64> = ["ok", "changed", "failures", "skipped", "ignored", "rescued"]
            .iter()
            .map(|k| s[*k].as_u64().unwrap_or(u64::MAX))
            .collect();
        let reference: Vec<u64> = [r.ok, r.changed, r.failed, r.skipped, r.ignored, r.rescued]
            .iter()
            .map(|n| u64::from(*n))
            .collect();
        assert_eq!(mine, reference, "{host}: {s}");
    }
}

#[test]
fn profile_tasks_and_timer_time_the_run() {
    let sb = Sandbox::new();
    let (pb, inv) = setup(&sb);
    let ours = sb
        .sandball(["playbook", &pb, "-i", &inv, "-f", "1"])
        .env(
            "ANSIBLE_CALLBACKS_ENABLED",
            "ansible.posix.profile_tasks, timer, nosuch",
        )
        .run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stderr_has("[WARNING]: Skipping callback plugin 'nosuch', unable to load");
    let lines: Vec<&str> = ours.stdout.lines().collect();
    let stamp = regex_lite(
        r"^[A-Z][a-z]+day [0-9]{2} [A-Z][a-z]+ [0-9]{4}  [0-9]{2}:[0-9]{2}:[0-9]{2} [+-][0-9]{4} \([0-9]+:[0-9]{2}:[0-9]{2}\.[0-9]{3}\)       [0-9]+:[0-9]{2}:[0-9]{2}\.[0-9]{3} \*+ $",
    );
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with("TASK [") {
            assert!(stamp(lines[i + 1]), "no timestamp under {l}:\n{ours}");
        }
    }
    let recap = lines
        .iter()
        .position(|l| l.starts_with("TASKS RECAP"))
        .unwrap_or_else(|| panic!("no TASKS RECAP:\n{ours}"));
    assert_eq!(lines[recap + 2], format!("{} ", "=".repeat(79)));
    let timed: Vec<&str> = lines[recap + 3..recap + 7].to_vec();
    for name in ["say hi", "change", "only on b", "fails on a"] {
        assert!(
            timed.iter().any(|l| l.starts_with(&format!("{name} ---"))
                && l.len() == 79
                && l.ends_with('s')),
            "{name} not timed: {timed:?}"
        );
    }
    ours.assert_stdout_has("PLAYBOOK RECAP")
        .assert_stdout_has("Playbook run took 0 days, 0 hours, 0 minutes, ");
}

/// A matcher for `pattern` (the e2e crate has no regex dependency: `grep -E` decides).
fn regex_lite(pattern: &str) -> impl Fn(&str) -> bool + '_ {
    move |line: &str| {
        let mut child = std::process::Command::new("grep")
            .args(["-qE", pattern])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("grep runs");
        if let Some(mut stdin) = child.stdin.take() {
            use std::io::Write;
            let _ = writeln!(stdin, "{line}");
        }
        child.wait().is_ok_and(|s| s.success())
    }
}

#[test]
fn ad_hoc_one_line_tree_and_list_hosts_as_ansibles() {
    let sb = Sandbox::new();
    let inv = sb.inventory(&["a", "b"]).display().to_string();
    let tree = sb.dir("tree-mine");
    let tree_text = tree.display().to_string();
    let ours = sb
        .sandball([
            "run", "all", "-i", &inv, "-m", "ping", "-o", "--tree", &tree_text,
        ])
        .run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("a | SUCCESS => {\"changed\": false,\"ping\": \"pong\"}\n");
    let saved = std::fs::read_to_string(tree.join("b")).unwrap_or_default();
    assert_eq!(saved, "{\"changed\": false, \"ping\": \"pong\"}");
    let cmd = sb
        .sandball(["run", "a", "-i", &inv, "-a", "printf 'x\\ny'", "-o"])
        .run();
    cmd.assert_no_panic().assert_code(0);
    cmd.assert_stdout_has("a | CHANGED | rc=0 | (stdout) x\\ny\n");
    let list = sb
        .sandball(["run", "all", "-i", &inv, "--list-hosts"])
        .run();
    list.assert_no_panic().assert_code(0);
    assert_eq!(list.stdout, "  hosts (2):\n    a\n    b\n");
    let Some(theirs) = sb.ansible_tool("ansible", ["all", "-i", &inv, "--list-hosts"]) else {
        return;
    };
    assert_eq!(list.stdout, theirs.run().stdout);
    let theirs_tree = sb.dir("tree-theirs");
    let theirs_tree_text = theirs_tree.display().to_string();
    let theirs = sb
        .ansible_tool(
            "ansible",
            [
                "all",
                "-i",
                &inv,
                "-m",
                "ping",
                "-o",
                "--tree",
                &theirs_tree_text,
            ],
        )
        .map(|i| i.run());
    if let Some(theirs) = theirs {
        let mut a: Vec<&str> = ours.stdout.lines().collect();
        let mut b: Vec<&str> = theirs.stdout.lines().collect();
        a.sort();
        b.sort();
        assert_eq!(a, b, "\n--- ours:\n{ours}\n--- ansible:\n{theirs}");
        assert_eq!(
            saved,
            std::fs::read_to_string(theirs_tree.join("b")).unwrap_or_default()
        );
    }
}

#[test]
fn flags_ansible_has_are_taken() {
    let sb = Sandbox::new();
    let (pb, inv) = setup(&sb);
    // Without effect here, said so.
    let out = sb
        .sandball([
            "playbook",
            &pb,
            "--inventory-file",
            &inv,
            "--scp-extra-args",
            "-l 100",
        ])
        .run();
    out.assert_no_panic().assert_code(0);
    out.assert_stderr_has("[WARNING]: --scp-extra-args has no effect");
    // A password file that is not there is an error naming it.
    let missing = sb.path().join("no-such-file").display().to_string();
    let out = sb
        .sandball([
            "playbook",
            &pb,
            "-i",
            &inv,
            "--become-password-file",
            &missing,
        ])
        .run();
    out.assert_no_panic().assert_code(5);
    out.assert_stderr_has("become password")
        .assert_stderr_has("no-such-file");
    // Without its value, a usage error (exit 2, as ansible's).
    let out = sb
        .sandball(["playbook", &pb, "-i", &inv, "--become-pass-file"])
        .run();
    out.assert_no_panic().assert_code(2);
    // One read from a file is used (the playbook does not need it: it runs).
    let pw = sb.write("pw", "secret\n");
    let out = sb
        .sandball([
            "playbook",
            &pb,
            "-i",
            &inv,
            "--become-password-file",
            &pw.display().to_string(),
            "--connection-password-file",
            &pw.display().to_string(),
        ])
        .run();
    out.assert_no_panic().assert_code(0);
}

#[test]
fn a_progress_line_shows_on_a_terminal_only() {
    let sb = Sandbox::new();
    let inv = sb.inventory(&["h1", "h2", "h3"]).display().to_string();
    let pb = sb
        .write(
            "slow.yml",
            "- hosts: all\n  gather_facts: false\n  tasks:\n    - command: \"sleep {{ 0 if inventory_hostname == 'h1' else 3 }}\"\n",
        )
        .display()
        .to_string();
    // `script` gives the run a terminal.
    let bins = sandball_e2e::Binaries::get();
    let line = format!("{} playbook -i {inv} {pb}", bins.sandball.display());
    let mut cmd = std::process::Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"])
        .current_dir(sb.path())
        .env("SANDBALL_SHIM", &bins.shim)
        .env(
            "SANDBALL_CACHE_DIR",
            sandball_e2e::binaries::workspace_root().join("target/e2e-shim-cache"),
        )
        .env("NO_COLOR", "1");
    let tty = Output::run(cmd, std::time::Duration::from_secs(120));
    assert_eq!(tty.code, 0, "{tty}");
    assert!(
        // The seconds depend on how loaded the machine is.
        tty.stdout.contains("\r\x1b[K[1/3 hosts done, "),
        "no progress line on a terminal:\n{tty:?}"
    );
    // Cleared before the next result: no line ends with it.
    assert!(
        !tty.stdout
            .lines()
            .any(|l| l.trim_end_matches('\r').ends_with("s]")),
        "{tty:?}"
    );
    let piped = sb.sandball(["playbook", "-i", &inv, &pb]).run();
    piped.assert_code(0);
    assert!(!piped.stdout.contains("hosts done"), "{piped}");
}

#[test]
fn verbose_runs_say_what_runs_and_where_each_task_is() {
    let sb = Sandbox::new();
    let (pb, inv) = setup(&sb);
    let ours = sb
        .sandball(["playbook", &pb, "-i", &inv, "-f", "1", "-vv"])
        .run();
    ours.assert_no_panic().assert_code(0);
    let first: Vec<&str> = ours.stdout.lines().take(5).collect();
    assert!(
        first[0].starts_with("sandball playbook [sandball "),
        "{ours}"
    );
    assert!(first[1].starts_with("  config file = "), "{ours}");
    assert!(
        first[4] == "No config file found; using defaults"
            || (first[4].starts_with("Using ") && first[4].ends_with(" as config file")),
        "{ours}"
    );
    let paths = |out: &Output| -> Vec<String> {
        out.stdout
            .lines()
            .filter(|l| l.starts_with("task path: "))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(paths(&ours).len(), 4, "{ours}");
    assert!(paths(&ours)[3].ends_with("play.yml:15"), "{ours}");
    let quiet = sb.sandball(["playbook", &pb, "-i", &inv]).run();
    assert!(
        paths(&quiet).is_empty() && !quiet.stdout.contains("config file"),
        "{quiet}"
    );
    let Some(theirs) = sb.ansible_playbook([&pb, "-i", &inv, "-f", "1", "-vv"]) else {
        return;
    };
    assert_eq!(paths(&ours), paths(&theirs.run()));
}
