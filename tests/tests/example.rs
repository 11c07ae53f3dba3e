//! examples/site.yml, the tour a new user runs with `make run`: green on the first run,
//! nothing changed on the second, the files it promises on disk, and the same recap
//! as ansible-playbook.

use sandball_e2e::binaries::workspace_root;
use sandball_e2e::{HostRecap, Output, Sandbox};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Runs examples/site.yml with everything it writes under `dir`.
fn site(sb: &Sandbox, dir: &Path) -> Output {
    let root = workspace_root();
    sb.sandball([
        "playbook".as_ref(),
        "-i".as_ref(),
        root.join("examples/inventory.ini").as_os_str(),
        root.join("examples/site.yml").as_os_str(),
        "-e".as_ref(),
        format!("example_dir={}", dir.display()).as_ref(),
    ])
    .run()
}

fn ansible_site(sb: &Sandbox, dir: &Path) -> Option<Output> {
    let root = workspace_root();
    let inv = root.join("examples/inventory.ini");
    let pb = root.join("examples/site.yml");
    let extra = format!("example_dir={}", dir.display());
    sb.ansible_playbook([
        "-i".as_ref(),
        inv.as_os_str(),
        pb.as_os_str(),
        "-e".as_ref(),
        extra.as_ref(),
    ])
    .map(|i| i.run())
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

#[test]
fn site_runs_green_then_changes_nothing() {
    let sb = Sandbox::new();
    let dir = sb.path().join("example");

    let first = site(&sb, &dir);
    first.assert_no_panic().assert_code(0);
    assert_eq!(
        first.host("localhost"),
        HostRecap {
            ok: 9,
            changed: 4,
            skipped: 1,
            ..HostRecap::default()
        },
        "{first}"
    );
    first
        .assert_stdout_has("\"msg\": \"hello.txt has 20 bytes and mode 0644\"")
        .assert_stdout_has("\"msg\": \"made the backup\"")
        .assert_stdout_has("changed: [localhost] => (item=green)");
    assert_eq!(
        first.task_lines("Only runs when the greeting is empty (when)"),
        vec!["skipping: [localhost]"]
    );

    // What it promised on disk.
    assert_eq!(mode(&dir), 0o755);
    let hello = dir.join("hello.txt");
    assert_eq!(
        std::fs::read_to_string(&hello).unwrap(),
        "Hello from sandball\n"
    );
    assert_eq!(mode(&hello), 0o644);
    assert_eq!(
        std::fs::read_to_string(dir.join("hello.bak")).unwrap(),
        "Hello from sandball\n"
    );
    for colour in ["red", "green", "blue"] {
        assert_eq!(
            std::fs::read_to_string(dir.join(format!("{colour}.txt"))).unwrap(),
            format!("{colour}\n")
        );
    }
    assert!(!dir.join("empty-greeting").exists());

    let second = site(&sb, &dir);
    second.assert_no_panic().assert_code(0);
    assert_eq!(
        second.host("localhost"),
        HostRecap {
            ok: 9,
            changed: 0,
            skipped: 1,
            ..HostRecap::default()
        },
        "{second}"
    );
    second
        .assert_stdout_has("\"msg\": \"the backup was already there\"")
        .assert_stdout_has("ok: [localhost] => (item=blue)");
}

#[test]
fn site_recap_matches_ansible_on_both_runs() {
    let sb = Sandbox::new();
    let (ours, theirs) = (sb.path().join("ours"), sb.path().join("theirs"));
    let Some(reference) = ansible_site(&sb, &theirs) else {
        return;
    };
    let first = site(&sb, &ours);
    first.assert_no_panic().assert_same_recap_as(&reference);
    let reference = ansible_site(&sb, &theirs).expect("ansible ran once already");
    site(&sb, &ours)
        .assert_no_panic()
        .assert_same_recap_as(&reference);
}
