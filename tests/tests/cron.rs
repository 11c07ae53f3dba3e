//! The `cron` component against ansible-core's module of the same name: one playbook
//! of scenarios run under sandball and ansible-playbook 2.19 — root's crontab through
//! the node's `crontab` program (jobs added, re-added, changed, named, disabled,
//! removed; variables placed; check mode; the errors), then a file of /etc/cron.d (by
//! its name) and one elsewhere — each task's result fields compared, then what the
//! crontab and the files hold after each run (the play prints them). Needs `crontab`
//! (`make cron`, Debian's `cron` package); root's crontab is restored afterwards.

use sandball_e2e::Sandbox;
use sandball_e2e::compare::{ansible_bin, both_run, result};
use std::process::{Command, Stdio};

const PLAY: &str = r##"
- hosts: all
  gather_facts: false
  tasks:
    - name: start without a crontab
      command: crontab -r
      failed_when: false
    - name: start without the cron file
      file: {path: /etc/cron.d/CRONFILE, state: absent}

    - name: a job
      cron: {name: check, minute: "*/5", job: /usr/bin/check}
    - name: the job again
      cron: {name: check, minute: "*/5", job: /usr/bin/check}
    - name: the job at another hour
      cron: {name: check, minute: "*/5", hour: "3", job: /usr/bin/check}
    - name: at reboot
      cron: {name: boot, special_time: reboot, job: /bin/boot}
    - name: disabled
      cron: {name: idle, job: /bin/idle, weekday: "1-5", disabled: true}
    - name: a variable
      cron: {name: MAILTO, job: "", env: true}
    - name: a variable after it
      cron: {name: PATH, job: /bin, env: true, insertafter: MAILTO}
    - name: a variable before it
      cron: {name: SHELL, job: /bin/sh, env: true, insertbefore: PATH}
    - name: a variable changed
      cron: {name: PATH, job: "/usr/bin:/bin", env: true}
    - name: check mode
      cron: {name: later, job: /bin/later}
      check_mode: true
    - name: a job removed
      cron: {name: boot, state: absent}
    - name: a job removed again
      cron: {name: boot, state: absent}
    - name: a variable removed
      cron: {name: SHELL, env: true, state: absent}
    - name: what the crontab holds
      command: crontab -l

    - name: special time with an hour
      cron: {name: x, special_time: daily, hour: "1", job: /bin/x}
      ignore_errors: true
    - name: no job
      cron: {name: x}
      ignore_errors: true
    - name: insertafter without env
      cron: {name: x, job: /bin/x, insertafter: PATH}
      ignore_errors: true
    - name: a variable after a missing one
      cron: {name: X, job: "1", env: true, insertafter: NOPE}
      ignore_errors: true
    - name: cron_file without user
      cron: {name: x, job: /bin/x, cron_file: CRONFILE}
      ignore_errors: true
    - name: the system crontab
      cron: {name: x, job: /bin/x, cron_file: /etc/crontab, user: root}
      ignore_errors: true

    - name: a job in /etc/cron.d
      cron: {name: sweep, job: /bin/sweep, hour: "4", user: root, cron_file: CRONFILE}
    - name: the job in /etc/cron.d again
      cron: {name: sweep, job: /bin/sweep, hour: "4", user: root, cron_file: CRONFILE}
    - name: a variable in /etc/cron.d
      cron: {name: MAILTO, job: root, env: true, user: root, cron_file: CRONFILE}
    - name: what the cron file holds
      command: cat /etc/cron.d/CRONFILE
    - name: the variable out of /etc/cron.d
      cron: {name: MAILTO, env: true, state: absent, user: root, cron_file: CRONFILE}
    - name: the last job out of /etc/cron.d
      cron: {name: sweep, state: absent, user: root, cron_file: CRONFILE}
    - name: the cron file is gone
      stat: {path: /etc/cron.d/CRONFILE}

    - name: a cron file elsewhere with a dotted name
      cron: {name: w, job: /bin/w, user: nobody, cron_file: "{{ work }}/my.jobs"}
    - name: the cron file elsewhere in check mode
      cron: {name: w, state: absent, user: nobody, cron_file: "{{ work }}/my.jobs"}
      check_mode: true
    - name: the end without a crontab
      command: crontab -r
      failed_when: false
"##;

// Warnings are compared apart: ansible-playbook prints them beside the result.
const RESULT: &[&str] = &["changed", "jobs", "envs", "cron_file", "state"];
const FAILED: &[&str] = &["failed", "msg"];

const FIELDS: &[(&str, &[&str])] = &[
    ("a job", RESULT),
    ("the job again", RESULT),
    ("the job at another hour", RESULT),
    ("at reboot", RESULT),
    ("disabled", RESULT),
    ("a variable", RESULT),
    ("a variable after it", RESULT),
    ("a variable before it", RESULT),
    ("a variable changed", RESULT),
    ("check mode", RESULT),
    ("a job removed", RESULT),
    ("a job removed again", RESULT),
    ("a variable removed", RESULT),
    ("what the crontab holds", &["stdout"]),
    ("special time with an hour", FAILED),
    ("no job", FAILED),
    ("insertafter without env", FAILED),
    ("a variable after a missing one", FAILED),
    ("cron_file without user", FAILED),
    ("the system crontab", FAILED),
    ("a job in /etc/cron.d", RESULT),
    ("the job in /etc/cron.d again", RESULT),
    ("a variable in /etc/cron.d", RESULT),
    ("what the cron file holds", &["stdout"]),
    ("the variable out of /etc/cron.d", RESULT),
    ("the last job out of /etc/cron.d", RESULT),
    ("the cron file is gone", &["stat/exists"]),
    ("a cron file elsewhere with a dotted name", RESULT),
    ("the cron file elsewhere in check mode", RESULT),
];

/// Root's crontab as it is now (`None` when there is none).
fn root_crontab() -> Option<Vec<u8>> {
    let out = Command::new("crontab")
        .arg("-l")
        .output()
        .expect("crontab runs");
    out.status.success().then_some(out.stdout)
}

#[test]
fn cron_matches_ansible_core() {
    assert!(
        Command::new("crontab")
            .arg("-l")
            .stderr(Stdio::null())
            .output()
            .is_ok(),
        "no crontab program: run `make cron`"
    );
    let saved = root_crontab();
    let cron_file = format!("sandball-e2e-cron-{}", std::process::id());
    let play = PLAY.replace("CRONFILE", &cron_file);
    let sb = Sandbox::new();
    let outcome = std::panic::catch_unwind(|| {
        let (ours, theirs, ours_work, _) =
            both_run(&sb, &ansible_bin("ANSIBLE_BIN_DIR", "venv"), &play, FIELDS);
        assert!(!ours.stdout.contains("legacy"), "{ours}");
        // Both show the module's warning as a [WARNING] of its own.
        let warning = "Filename portion of cron_file (\"my.jobs\") should consist solely";
        for run in [&ours, &theirs] {
            assert!(
                run.stdout.contains(warning) || run.stderr.contains(warning),
                "{run}"
            );
        }
        // What the runs wrote, read back by the play itself.
        let held = result(&ours, "what the crontab holds", &ours_work);
        let held = held["stdout"].as_str().unwrap_or_default();
        assert!(
            held.contains("#Ansible: check\n*/5 3 * * * /usr/bin/check")
                && held.contains("#Ansible: idle\n#* * * * 1-5 /bin/idle")
                && !held.contains("boot")
                && held.starts_with("MAILTO=\"\"\nPATH=\"/usr/bin:/bin\""),
            "{held}"
        );
        let held = result(&ours, "what the cron file holds", &ours_work);
        assert_eq!(
            held["stdout"],
            "MAILTO=\"root\"\n#Ansible: sweep\n* 4 * * * root /bin/sweep"
        );
        let elsewhere = ours_work.join("my.jobs");
        assert_eq!(
            std::fs::read_to_string(elsewhere).unwrap(),
            "#Ansible: w\n* * * * * nobody /bin/w\n"
        );
    });
    let _ = std::fs::remove_file(format!("/etc/cron.d/{cron_file}"));
    match saved {
        Some(table) => {
            let mut child = Command::new("crontab")
                .arg("-")
                .stdin(Stdio::piped())
                .spawn()
                .expect("crontab runs");
            use std::io::Write;
            child.stdin.take().unwrap().write_all(&table).unwrap();
            assert!(child.wait().unwrap().success(), "root's crontab restored");
        }
        None => {
            let _ = Command::new("crontab")
                .arg("-r")
                .stderr(Stdio::null())
                .status();
        }
    }
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// A cron file by name, one by path, and the module's own user's crontab.
const GRANT_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - {name: by name, cron: {name: a, job: x, user: www, cron_file: myjobs}}
    - {name: by path, cron: {name: a, job: x, user: www, cron_file: /srv/jobs}}
    - {name: mine, cron: {name: a, job: x}}
"#;

#[test]
fn the_grant_is_the_cron_file_or_the_users_crontab() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("cron-grants.yml", GRANT_PLAY);
    let inventory = sb.path().join("inventory.ini");
    let out = sb
        .sandball([
            "audit".as_ref(),
            "playbook".as_ref(),
            pb.as_os_str(),
            "-i".as_ref(),
            inventory.as_os_str(),
        ])
        .run();
    out.assert_code(0);
    let line = |task: &str| {
        out.stdout
            .lines()
            .find(|l| l.starts_with(task))
            .unwrap_or_else(|| panic!("no {task}: {out}"))
            .to_string()
    };
    let crontab = "exec crontab with arguments [-l]; exec crontab with arguments [-]";
    let by_name = line("by name");
    assert!(
        by_name.contains("fs read-write on /etc/cron.d/myjobs "),
        "{by_name}"
    );
    assert!(
        by_name.contains("[-u, www, -l]; exec crontab with arguments [-u, www, -]"),
        "{by_name}"
    );
    assert_eq!(by_name.matches("fs ").count(), 1, "{by_name}");
    let by_path = line("by path");
    assert!(by_path.contains("fs read-write on /srv/jobs "), "{by_path}");
    assert_eq!(by_path.matches("fs ").count(), 1, "{by_path}");
    let mine = line("mine");
    assert!(
        mine.ends_with(crontab) && !mine.contains("fs ") && !mine.contains("-u"),
        "{mine}"
    );
}
