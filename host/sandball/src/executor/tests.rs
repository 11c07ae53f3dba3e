//! The executor in-process, with no node: plays whose actions all run on the
//! controller (`debug`, `fail`, `set_fact`, `assert`, `add_host`…), their results
//! recorded by a callback that keeps every event. These test the strategies' logic —
//! per-host state, `block`/`rescue`/`always`, handlers, `free`, roles and includes —
//! without a connection, a shim or a module.

use super::{Run, RunOptions};
use crate::plugins::callback::stats::Stats;
use crate::plugins::callback::{Callback, Report, Status};
use std::sync::{Arc, Mutex};

/// What a run showed: task banners and `host status` lines, in order.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl Recorder {
    fn lines(&self) -> Vec<String> {
        self.0.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl Callback for Recorder {
    fn play_start(&self, name: &str) {
        self.push(format!("PLAY {name}"));
    }
    fn task_start(&self, name: &str, handler: bool) {
        self.push(format!(
            "{} {name}",
            if handler { "HANDLER" } else { "TASK" }
        ));
    }
    fn no_more_hosts(&self) {
        self.push("NO MORE HOSTS".into());
    }
    fn result(&self, r: &Report<'_>) {
        if !r.shown() {
            return;
        }
        let status = match r.status {
            Status::Ok => "ok",
            Status::Changed => "changed",
            Status::Failed if r.ignored => "ignored",
            Status::Failed => "failed",
            Status::Skipped => "skipped",
            Status::Unreachable => "unreachable",
        };
        let msg = r.result.get("msg").and_then(|m| m.as_str()).unwrap_or("");
        self.push(
            format!("  {} {status} {msg}", r.host)
                .trim_end()
                .to_string(),
        );
    }
    fn warning(&self, msg: &str) {
        self.push(format!("WARNING {msg}"));
    }
}

impl Recorder {
    fn push(&self, line: String) {
        if let Ok(mut l) = self.0.lock() {
            l.push(line);
        }
    }
}

/// Runs `playbook` (YAML text, in `dir`) over hosts `a`, `b` and `c` (local, never
/// connected to); the lines shown, the exit code and the recap.
fn run_play(
    dir: &std::path::Path,
    playbook: &str,
    options: RunOptions,
) -> (
    Vec<String>,
    i32,
    Vec<(String, crate::plugins::callback::stats::HostStats)>,
) {
    let path = dir.join("play.yml");
    std::fs::write(&path, playbook).expect("the playbook is written");
    let book = crate::playbook::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let inventory =
        crate::inventory::Inventory::load(&["a,b,c".to_string()]).unwrap_or_else(|e| panic!("{e}"));
    let recorder = Recorder::default();
    let run = Run {
        templar: crate::template::Templar::new(),
        inventory: std::sync::RwLock::new(Arc::new(inventory)),
        modules: crate::assemble::ModuleStore::new(Vec::new()),
        legacy: crate::assemble::legacy::LegacyStore::new(Default::default()),
        vars: crate::vars::VariableManager::new(
            serde_json::Map::new(),
            crate::vars::Magic {
                playbook_dir: Some(dir.to_path_buf()),
                ..Default::default()
            },
        ),
        callback: Box::new(recorder.clone()),
        stats: Stats::default(),
        sessions: crate::plugins::connection::pool::SessionPool::new(None),
        options,
        policy: Default::default(),
        audit_log: None,
        host_errors: Default::default(),
        warned: Default::default(),
        dynamic_changes: Default::default(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let code = runtime
        .block_on(run.playbook(&book))
        .unwrap_or_else(|e| panic!("{e}"));
    (recorder.lines(), code, run.stats.snapshot())
}

/// Options running one host at a time, so the lines come in a fixed order.
fn one_fork() -> RunOptions {
    RunOptions {
        forks: 1,
        ..Default::default()
    }
}

fn shown(lines: &[String], wanted: &[&str]) {
    let got: Vec<&str> = lines.iter().map(String::as_str).collect();
    assert_eq!(got, wanted, "{}", lines.join("\n"));
}

#[test]
fn a_failure_is_rescued_for_its_host_only_and_always_runs_for_all() {
    let dir = tempfile::tempdir().expect("a directory");
    let (lines, code, recap) = run_play(
        dir.path(),
        r#"
- hosts: all
  gather_facts: false
  tasks:
    - block:
        - name: try
          fail: {msg: "no {{ inventory_hostname }}"}
          when: inventory_hostname == 'b'
        - name: after try
          debug: {msg: "went on"}
      rescue:
        - name: rescue
          debug: {msg: "{{ ansible_failed_result.msg }}"}
      always:
        - name: always
          debug: {msg: always}
"#,
        one_fork(),
    );
    shown(
        &lines,
        &[
            "PLAY all",
            "TASK try",
            "  a skipped",
            "  b failed no b",
            "  c skipped",
            "TASK after try",
            "  a ok went on",
            "  c ok went on",
            "TASK rescue",
            "  b ok no b",
            "TASK always",
            "  a ok always",
            "  b ok always",
            "  c ok always",
        ],
    );
    assert_eq!(code, 0, "a rescued failure fails nothing");
    let b = recap
        .iter()
        .find(|(h, _)| h == "b")
        .map(|(_, s)| *s)
        .unwrap_or_default();
    assert_eq!((b.failed, b.rescued), (0, 1));
}

#[test]
fn a_failed_host_leaves_the_play_and_its_handlers_do_not_run() {
    let dir = tempfile::tempdir().expect("a directory");
    let (lines, code, _) = run_play(
        dir.path(),
        r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: change
      debug: {msg: c}
      changed_when: true
      notify: h
    - name: break c
      fail: {msg: broken}
      when: inventory_hostname == 'c'
    - name: later
      debug: {msg: later}
  handlers:
    - name: h
      debug: {msg: handled}
"#,
        one_fork(),
    );
    shown(
        &lines,
        &[
            "PLAY all",
            "TASK change",
            "  a changed c",
            "  b changed c",
            "  c changed c",
            "TASK break c",
            "  a skipped",
            "  b skipped",
            "  c failed broken",
            "TASK later",
            "  a ok later",
            "  b ok later",
            "HANDLER h",
            "  a ok handled",
            "  b ok handled",
        ],
    );
    assert_eq!(code, 2);
}

#[test]
fn include_tasks_runs_each_file_for_the_hosts_that_include_it() {
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::write(
        dir.path().join("one.yml"),
        "- name: one\n  debug: {msg: one}\n",
    )
    .expect("a file");
    std::fs::write(
        dir.path().join("two.yml"),
        "- name: two\n  debug: {msg: 'n={{ n }}'}\n",
    )
    .expect("a file");
    let (lines, code, _) = run_play(
        dir.path(),
        r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: include
      include_tasks: {file: "{{ 'one' if inventory_hostname == 'a' else 'two' }}.yml"}
      vars: {n: 2}
"#,
        one_fork(),
    );
    shown(
        &lines,
        &[
            "PLAY all",
            "TASK include",
            "TASK one",
            "  a ok one",
            "TASK two",
            "  b ok n=2",
            "  c ok n=2",
        ],
    );
    assert_eq!(code, 0);
}

#[test]
fn a_role_runs_once_per_host_with_its_variables_and_handlers() {
    let dir = tempfile::tempdir().expect("a directory");
    let role = dir.path().join("roles/greet");
    for (file, text) in [
        (
            "tasks/main.yml",
            "- name: hello\n  debug: {msg: 'hello {{ who }}'}\n  changed_when: true\n  notify: greeted\n",
        ),
        ("defaults/main.yml", "who: world\n"),
        (
            "handlers/main.yml",
            "- name: greeted\n  debug: {msg: done}\n",
        ),
    ] {
        let path = role.join(file);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
        std::fs::write(path, text).expect("a file");
    }
    let (lines, code, _) = run_play(
        dir.path(),
        r#"
- hosts: a
  gather_facts: false
  roles:
    - greet
    - greet
    - role: greet
      who: you
"#,
        RunOptions::default(),
    );
    shown(
        &lines,
        &[
            "PLAY a",
            "TASK greet : hello",
            "  a changed hello world",
            "TASK greet : hello",
            "  a changed hello you",
            "HANDLER greet : greeted",
            "  a ok done",
        ],
    );
    assert_eq!(code, 0);
}

#[test]
fn cacheable_set_fact_makes_facts_too() {
    let dir = tempfile::tempdir().expect("a directory");
    let (lines, code, _) = run_play(
        dir.path(),
        r#"
- hosts: a
  gather_facts: false
  tasks:
    - set_fact: {cached: 1, cacheable: true}
    - set_fact: {plain: 2}
    - name: seen
      debug: {msg: "{{ ansible_facts.cached | default('none') }} {{ ansible_facts.plain | default('none') }} {{ cached }} {{ plain }}"}
"#,
        RunOptions::default(),
    );
    assert_eq!(code, 0, "{}", lines.join("\n"));
    assert!(
        lines.iter().any(|l| l == "  a ok 1 none 1 2"),
        "{}",
        lines.join("\n")
    );
}

#[test]
fn an_include_that_fails_one_host_ends_the_play_under_any_errors_fatal() {
    let dir = tempfile::tempdir().expect("a directory");
    let (lines, code, _) = run_play(
        dir.path(),
        r#"
- hosts: all
  gather_facts: false
  any_errors_fatal: true
  tasks:
    - name: missing
      include_tasks: nope.yml
      when: inventory_hostname == 'b'
    - name: never
      debug: {msg: reached}
"#,
        one_fork(),
    );
    assert_eq!(code, 2, "{}", lines.join("\n"));
    assert!(
        !lines.iter().any(|l| l.contains("reached")),
        "{}",
        lines.join("\n")
    );
}

#[test]
fn any_errors_fatal_fails_every_host_into_rescue_and_always() {
    let dir = tempfile::tempdir().expect("a directory");
    // A rescue saves every host (only the one that failed counts it), as in Ansible.
    let (lines, code, recap) = run_play(
        dir.path(),
        r#"
- hosts: all
  gather_facts: false
  any_errors_fatal: true
  tasks:
    - block:
        - name: fail on a
          fail: {msg: boom}
          when: inventory_hostname == 'a'
        - name: never
          debug: {msg: never}
      rescue:
        - name: rescued
          debug: {msg: rescued}
    - name: after
      debug: {msg: recovered}
"#,
        one_fork(),
    );
    assert_eq!(code, 0, "{}", lines.join("\n"));
    assert!(
        !lines.iter().any(|l| l.contains("never")),
        "{}",
        lines.join("\n")
    );
    let recovered = lines.iter().filter(|l| l.ends_with("ok recovered")).count();
    assert_eq!(recovered, 3, "{}", lines.join("\n"));
    let rescued: Vec<u32> = recap.iter().map(|(_, s)| s.rescued).collect();
    assert_eq!(rescued, [1, 0, 0], "{recap:?}");
    // Without a rescue, `always` runs and then the play ends for every host.
    let (lines, code, _) = run_play(
        dir.path(),
        r#"
- hosts: all
  gather_facts: false
  any_errors_fatal: true
  tasks:
    - block:
        - name: fail on a
          fail: {msg: boom}
          when: inventory_hostname == 'a'
      always:
        - name: always
          debug: {msg: always}
    - name: after
      debug: {msg: should not happen}
"#,
        one_fork(),
    );
    assert_eq!(code, 2, "{}", lines.join("\n"));
    assert_eq!(
        lines.iter().filter(|l| l.ends_with("ok always")).count(),
        3,
        "{}",
        lines.join("\n")
    );
    assert!(
        !lines.iter().any(|l| l.contains("should not happen")),
        "{}",
        lines.join("\n")
    );
}
