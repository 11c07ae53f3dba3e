//! The ad-hoc command, `sandball run PATTERN -m MODULE [-a ARGS]`, printing results
//! as `ansible` does.

use sandball_e2e::Sandbox;

#[test]
fn ping_localhost_without_an_inventory() {
    let sb = Sandbox::new();
    let out = sb.sandball(["run", "localhost", "-m", "ping"]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("localhost | SUCCESS => {")
        .assert_stdout_has("\"ping\": \"pong\"");
}

#[test]
fn a_change_and_a_failure_are_reported_like_ansible() {
    let sb = Sandbox::new();
    let inv = sb.inventory(&["localhost"]);
    let work = sb.dir("work");
    let target = work.join("adhoc");
    let inv = inv.display().to_string();

    let touch = format!("path={} state=touch", target.display());
    let out = sb
        .sandball(["run", "all", "-i", &inv, "-m", "file", "-a", &touch])
        .run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("localhost | CHANGED => {")
        .assert_stdout_has("\"changed\": true");
    assert!(target.is_file(), "{out}");

    let missing = format!("path={} state=file", work.join("missing").display());
    let out = sb
        .sandball(["run", "all", "-i", &inv, "-m", "file", "-a", &missing])
        .run();
    out.assert_no_panic().assert_code(2);
    out.assert_stdout_has("localhost | FAILED! => {")
        .assert_stdout_has("is absent, cannot continue");
    assert!(!work.join("missing").exists());
}

#[test]
fn the_stdout_callback_setting_counts_only_with_bin_ansible_callbacks_as_in_ansible() {
    let sb = Sandbox::new();
    let inv = sb.inventory(&["one", "two"]).display().to_string();
    let args = ["run", "all", "-i", &inv, "-m", "ping"];
    let result_lines = |stdout: &str| -> Vec<String> {
        stdout
            .lines()
            .filter(|l| l.contains(" | SUCCESS"))
            .map(str::to_string)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    let mut shown = Vec::new();
    for load in ["True", "False"] {
        let out = sb
            .sandball(args)
            .env("ANSIBLE_STDOUT_CALLBACK", "oneline")
            .env("ANSIBLE_LOAD_CALLBACK_PLUGINS", load)
            .run();
        out.assert_no_panic().assert_code(0);
        shown.push(result_lines(&out.stdout));
    }
    // Loaded, `oneline` gives each host one line; otherwise `minimal` opens a block.
    assert_eq!(
        shown[0],
        vec![
            "one | SUCCESS => {\"changed\": false,\"ping\": \"pong\"}".to_string(),
            "two | SUCCESS => {\"changed\": false,\"ping\": \"pong\"}".to_string(),
        ]
    );
    assert_eq!(
        shown[1],
        vec![
            "one | SUCCESS => {".to_string(),
            "two | SUCCESS => {".to_string()
        ]
    );
    let python = sandball_e2e::binaries::ansible_python();
    let interpreter = format!("ansible_python_interpreter={}", python.display());
    for (load, ours) in ["True", "False"].iter().zip(&shown) {
        let Some(theirs) = sb.ansible_tool(
            "ansible",
            args.iter()
                .skip(1)
                .copied()
                .chain(["-e", interpreter.as_str()]),
        ) else {
            return;
        };
        let theirs = theirs
            .env("ANSIBLE_STDOUT_CALLBACK", "oneline")
            .env("ANSIBLE_LOAD_CALLBACK_PLUGINS", load)
            .env("ANSIBLE_DEPRECATION_WARNINGS", "False")
            .run();
        assert_eq!(theirs.code, 0, "{theirs}");
        assert_eq!(&result_lines(&theirs.stdout), ours, "{theirs}");
    }
}

#[test]
fn a_range_left_as_written_says_why_at_vvv_as_in_ansible() {
    // `advanced_host_list` leaves `local[1:]` (a range without its end) a host name, and
    // says so from -vvv on, whatever the stdout callback.
    let sb = Sandbox::new();
    for (verbosity, said) in [("-vv", false), ("-vvv", true)] {
        let args = [
            "all",
            "-i",
            "local[1:],",
            "-m",
            "ping",
            "-c",
            "local",
            verbosity,
        ];
        let ours = sb
            .sandball(["run"].into_iter().chain(args))
            .env("ANSIBLE_INVENTORY_ENABLED", "advanced_host_list")
            .env("ANSIBLE_LOAD_CALLBACK_PLUGINS", "True")
            .env("ANSIBLE_STDOUT_CALLBACK", "oneline")
            .run();
        ours.assert_no_panic().assert_code(0);
        let line = "Unable to parse address from hostname, leaving unchanged: host range must specify end value";
        assert_eq!(ours.stdout.contains(line), said, "{ours}");
        ours.assert_stdout_has("local[1:] | SUCCESS");
        if let Some(theirs) = sb.ansible_tool("ansible", args) {
            let theirs = theirs
                .env("ANSIBLE_INVENTORY_ENABLED", "advanced_host_list")
                .env("ANSIBLE_LOAD_CALLBACK_PLUGINS", "True")
                .env("ANSIBLE_STDOUT_CALLBACK", "oneline")
                .run();
            assert_eq!(theirs.stdout.contains(line), said, "{theirs}");
        }
    }
}

/// The arguments of a run, its environment and the `playbook_dir` it shows.
type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);

#[test]
fn playbook_dir_comes_from_the_flag_the_environment_or_ansible_cfg_as_in_ansible() {
    let sb = Sandbox::new();
    let cfg = sb.write(
        "playbookdir.cfg",
        "[defaults]\nplaybook_dir = /doesnotexist/cfg\n",
    );
    let debug = ["localhost", "-m", "debug", "-a", "var=playbook_dir"];
    let flag = [&debug[..], &["--playbook-dir=/doesnotexist/flag"]].concat();
    // The flag over the environment, the environment over the file.
    let cases: [Case; 4] = [
        (
            &flag,
            &[("ANSIBLE_PLAYBOOK_DIR", "/doesnotexist/env")],
            "/doesnotexist/flag",
        ),
        (
            &debug,
            &[("ANSIBLE_PLAYBOOK_DIR", "/doesnotexist/env")],
            "/doesnotexist/env",
        ),
        (
            &debug,
            &[("ANSIBLE_CONFIG", cfg.to_str().unwrap_or_default())],
            "/doesnotexist/cfg",
        ),
        (
            &debug,
            &[
                ("ANSIBLE_CONFIG", cfg.to_str().unwrap_or_default()),
                ("ANSIBLE_PLAYBOOK_DIR", "/doesnotexist/env"),
            ],
            "/doesnotexist/env",
        ),
    ];
    let shown = |stdout: &str| -> Vec<String> {
        stdout
            .lines()
            .filter(|l| l.contains("\"playbook_dir\""))
            .map(|l| l.trim().to_string())
            .collect()
    };
    for (args, env, want) in cases {
        let mut ours = sb.sandball(["run"].iter().chain(args));
        for (k, v) in env {
            ours = ours.env(k, v);
        }
        let ours = ours.run();
        ours.assert_no_panic().assert_code(0);
        assert_eq!(
            shown(&ours.stdout),
            vec![format!("\"playbook_dir\": \"{want}\"")],
            "{ours}"
        );
        let Some(mut theirs) = sb.ansible_tool("ansible", args.iter()) else {
            continue;
        };
        for (k, v) in env {
            theirs = theirs.env(k, v);
        }
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        assert_eq!(shown(&theirs.stdout), shown(&ours.stdout), "{theirs}");
    }
}

#[test]
fn a_skipped_untrusted_template_is_warned_about_when_asked_as_in_ansible() {
    let sb = Sandbox::new();
    let extra =
        r#"{"fromcli": {"no_trust": {"__ansible_unsafe": "{{ 'hello' }}"}, "trust": "{{ 1 }}"}}"#;
    let args = ["localhost", "-m", "debug", "-a", "var=fromcli", "-e", extra];
    let warned = |o: &sandball_e2e::Output| {
        format!("{}{}", o.stdout, o.stderr).contains("Encountered untrusted template or expression")
    };
    for (behavior, warns) in [
        (Some("warning"), true),
        (Some("ignore"), false),
        (None, false),
    ] {
        let mut ours = sb.sandball(["run"].iter().chain(&args));
        if let Some(b) = behavior {
            ours = ours.env("_ANSIBLE_TEMPLAR_UNTRUSTED_TEMPLATE_BEHAVIOR", b);
        }
        let ours = ours.run();
        ours.assert_no_panic().assert_code(0);
        // The untrusted template is shown as written, the trusted one rendered.
        ours.assert_stdout_has(r#""no_trust": "{{ 'hello' }}""#)
            .assert_stdout_has(r#""trust": 1"#);
        assert_eq!(warned(&ours), warns, "{behavior:?}: {ours}");
        let Some(mut theirs) = sb.ansible_tool("ansible", args.iter()) else {
            continue;
        };
        if let Some(b) = behavior {
            theirs = theirs.env("_ANSIBLE_TEMPLAR_UNTRUSTED_TEMPLATE_BEHAVIOR", b);
        }
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        assert_eq!(warned(&theirs), warns, "{behavior:?}: {theirs}");
    }
}

#[test]
fn the_playbook_dirs_python_plugins_and_collections_serve_an_ad_hoc_run_as_in_ansible() {
    let sb = Sandbox::new();
    let filter = |name: &str| {
        format!(
            "class FilterModule:\n    def filters(self):\n        return {{'{name}': lambda s: s.upper() + '!'}}\n"
        )
    };
    sb.write("base/filter_plugins/local.py", &filter("shout"));
    sb.write(
        "base/collections/ansible_collections/ns/coll/plugins/filter/coll.py",
        &filter("yell"),
    );
    let base = sb.path().join("base").display().to_string();
    let args = [
        "localhost",
        "-m",
        "debug",
        "-a",
        "msg={{ 'a' | shout }}{{ 'b' | ns.coll.yell }}",
        "--playbook-dir",
        &base,
    ];
    let ours = sb
        .sandball(["run"].iter().chain(&args))
        .env(
            "SANDBALL_ANSIBLE_PYTHON",
            sandball_e2e::binaries::ansible_python(),
        )
        .run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has(r#""msg": "A!B!""#);
    assert!(!ours.stderr.contains("Error loading plugin"), "{ours}");
    if let Some(theirs) = sb.ansible_tool("ansible", args.iter()) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        theirs.assert_stdout_has(r#""msg": "A!B!""#);
    }
}
