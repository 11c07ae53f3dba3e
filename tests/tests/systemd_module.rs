//! The `systemd_service` component (and its other name, `systemd`, which `service`
//! runs where systemd manages services) against ansible-core's module, on a node
//! without systemd as process 1 (this container): systemctl then works on unit files
//! only (enable, disable, mask, unmask) and fails for the rest, and both modules must
//! report the same. A unit file the play writes (in /usr/lib/systemd/system, so that
//! masking can link over it) and removes is the subject; the node's own units are
//! left alone. Then what sandball refuses (`scope: user`).

use sandball_e2e::Sandbox;
use sandball_e2e::binaries::ansible_python;
use sandball_e2e::compare::{ansible_bin, both_run, result};
use std::path::Path;

const UNIT: &str = "sandball-e2e-systemd.service";

/// Removes the test unit and its links whatever the test's outcome.
struct Cleanup;

impl Drop for Cleanup {
    fn drop(&mut self) {
        for path in [
            format!("/usr/lib/systemd/system/{UNIT}"),
            format!("/etc/systemd/system/{UNIT}"),
            format!("/etc/systemd/system/multi-user.target.wants/{UNIT}"),
        ] {
            let _ = std::fs::remove_file(path);
        }
    }
}

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: no leftovers
      file: {path: "{{ item }}", state: absent}
      loop: &leftovers
        - /etc/systemd/system/UNIT
        - /etc/systemd/system/multi-user.target.wants/UNIT
    - name: a unit
      copy:
        dest: /usr/lib/systemd/system/UNIT
        content: "[Unit]\nDescription=sandball test\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"
    - name: enable in check mode
      systemd_service: {name: UNIT, enabled: true}
      check_mode: true
    - name: enable
      systemd_service: {name: UNIT, enabled: true}
    - name: enable again
      systemd_service: {name: UNIT, enabled: true}
    - name: disable through service
      service: {name: UNIT, enabled: false, use: systemd}
    - name: disable again through the systemd name
      systemd: {name: UNIT, enabled: false}
    - name: mask
      systemd_service: {name: UNIT, masked: true}
    - name: mask again
      systemd_service: {name: UNIT, masked: true}
    - name: unmask in check mode
      systemd_service: {name: UNIT, masked: false}
      check_mode: true
    - name: unmask
      systemd_service: {name: UNIT, masked: false}
    - name: start
      systemd_service: {name: UNIT, state: started}
      ignore_errors: true
    - name: start in check mode
      systemd_service: {name: UNIT, state: restarted, no_block: true}
      check_mode: true
      ignore_errors: true
    - name: a missing unit
      systemd_service: {name: sandball-no-such-unit, state: stopped}
      ignore_errors: true
    - name: a missing unit to enable
      systemd_service: {name: sandball-no-such-unit, enabled: true, force: true}
      ignore_errors: true
    - name: daemon reload
      systemd_service: {daemon_reload: true}
      ignore_errors: true
    - name: daemon reexec in check mode
      systemd_service: {daemon_reexec: true}
      check_mode: true
    - name: a glob
      systemd_service: {name: "sandball-*", state: started}
      ignore_errors: true
    - name: nothing to do
      systemd_service: {name: UNIT}
      ignore_errors: true
    - name: state without a name
      systemd_service: {state: started}
      ignore_errors: true
    - name: a bad state
      systemd_service: {name: UNIT, state: running}
      ignore_errors: true
    - name: unit file state
      command: systemctl is-enabled UNIT
      register: final
      failed_when: false
    - name: no unit
      file: {path: "{{ item }}", state: absent}
      loop: *leftovers
    - name: no unit file
      file: {path: /usr/lib/systemd/system/UNIT, state: absent}
"#;

const CORE: &[&str] = &[
    "changed", "msg", "name", "status", "enabled", "state", "rc", "stderr",
];

const FIELDS: &[(&str, &[&str])] = &[
    ("enable in check mode", CORE),
    ("enable", CORE),
    ("enable again", CORE),
    ("disable through service", CORE),
    ("disable again through the systemd name", CORE),
    ("mask", CORE),
    ("mask again", CORE),
    ("unmask in check mode", CORE),
    ("unmask", CORE),
    ("start", CORE),
    ("start in check mode", CORE),
    ("a missing unit", CORE),
    ("a missing unit to enable", CORE),
    ("daemon reload", CORE),
    ("daemon reexec in check mode", CORE),
    ("a glob", CORE),
    ("nothing to do", CORE),
    ("state without a name", &["msg"]),
    ("a bad state", &["msg"]),
    ("unit file state", &["stdout", "rc"]),
];

#[test]
fn systemd_service_matches_ansible_core() {
    if !Path::new("/etc/systemd/system").is_dir() || !Path::new("/usr/bin/systemctl").exists() {
        eprintln!("no systemctl here: nothing to compare");
        return;
    }
    let _cleanup = Cleanup;
    let sb = Sandbox::new();
    let play = PLAY.replace("UNIT", UNIT);
    let (ours, theirs, work, _) =
        both_run(&sb, &ansible_bin("ANSIBLE_BIN_DIR", "venv"), &play, FIELDS);
    assert!(!ours.stdout.contains("legacy"), "{ours}");
    // What the scenarios did, the same for both (compared above).
    assert_eq!(result(&ours, "enable", &work)["changed"], true, "{ours}");
    assert_eq!(result(&ours, "enable again", &work)["changed"], false);
    assert_eq!(
        result(&ours, "unit file state", &work)["stdout"],
        "disabled"
    );
    assert!(
        result(&ours, "start", &work)["msg"] == "Service is in unknown state",
        "{ours}\n{theirs}"
    );
}

#[test]
fn scope_user_is_refused_by_name() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - name: user\n      systemd_service: {name: x, state: started, scope: user}\n      ignore_errors: true\n",
    );
    let work = sb.dir("work");
    // Refused by sandball's component when policy keeps ansible-core's module out.
    let policy = sb.policy_denying_legacy();
    let out = sb
        .play(&pb, &work, &["-v", "--policy", &policy])
        .env("SANDBALL_ANSIBLE_PYTHON", ansible_python())
        .run();
    out.assert_no_panic();
    assert!(
        result(&out, "user", &work)["msg"]
            .as_str()
            .unwrap()
            .starts_with("The systemd_service module does not support scope=user"),
        "{out}"
    );
}
