//! sandball under ansible-runner (from PyPI, `make ansible-runner`), as AWX and Ansible
//! Automation Platform run it: `ansible-runner run DIR -p site.yml` on a private data
//! dir, once with ansible-core's ansible-playbook first on `PATH`, once with the
//! `ansible-playbook` that `sandball install-aliases` links. Runner sets
//! `ANSIBLE_STDOUT_CALLBACK=awx_display`, sandball's own callback of that name speaks
//! runner's protocol, and the two runs' job events are compared.
//!
//! What may differ, and why: uuids, pids, times and durations (each run's own); the
//! data dir's path in `task_path` and in the output; `resolved_action`, which sandball
//! does not give yet; and these result keys, where sandball's results are not yet
//! ansible-core's: a failure's result keeps `failed`, a loop's whole result keeps
//! `skipped`, `copy`'s has no `diff` or `src`, an unreachable host's no `exception`.

use sandball_e2e::binaries::{ansible_python, ansible_runner, workspace_root};
use sandball_e2e::{Binaries, Output, Sandbox};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const PLAYBOOK: &str = r#"- name: the play
  hosts: localhost
  gather_facts: false
  tasks:
    - name: say hello
      debug: {msg: hello}
    - name: write a file
      copy: {content: "x\n", dest: "{{ out }}/f.txt"}
    - name: skipped
      debug: {msg: never}
      when: false
    - name: loop
      debug: {msg: "{{ item }}"}
      loop: [a, b]
    - name: fails
      command: /bin/false
      ignore_errors: true
    - name: secret
      debug: {msg: a secret}
      no_log: true
    - name: notify
      command: /bin/true
      notify: a handler
  handlers:
    - name: a handler
      debug: {msg: handled}
- name: unreachable
  hosts: down
  gather_facts: false
  tasks:
    - name: ping it
      ping:
"#;

/// A private data dir as runner reads one: `project/`, `inventory/`, `env/extravars`.
/// Its host `down` is an SSH port on loopback nothing listens on.
fn private_data_dir(sb: &Sandbox, name: &str, closed_port: u16) -> PathBuf {
    let out = sb.dir(&format!("{name}-out"));
    sb.write(&format!("{name}/project/site.yml"), PLAYBOOK);
    sb.write(
        &format!("{name}/inventory/hosts"),
        &format!(
            "localhost ansible_connection=local ansible_python_interpreter={}\n\
             down ansible_connection=ssh ansible_host=127.0.0.1 ansible_port={closed_port}\n",
            ansible_python().display()
        ),
    );
    sb.write(
        &format!("{name}/env/extravars"),
        &format!("out: {}\n", out.display()),
    );
    sb.path().join(name)
}

/// What a run left: its `rc`, `status`, job events (by counter) and stdout.
struct Artifacts {
    rc: String,
    status: String,
    events: Vec<Value>,
    stdout: String,
}

/// `ansible-runner run DIR -p site.yml` with `path_first` first on `PATH`.
fn run_under_runner(sb: &Sandbox, dir: &Path, path_first: &Path) -> Artifacts {
    let bins = Binaries::get();
    let mut cmd = Command::new(ansible_runner());
    cmd.args(["run", "--ident", "job", "-p", "site.yml"])
        .arg(dir)
        .current_dir(sb.path())
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", path_first.display()))
        .env("HOME", sb.dir("home"))
        .env("LC_ALL", "C.UTF-8")
        .env("ANSIBLE_HOME", sb.path().join("ansible-home"))
        .env("ANSIBLE_LOCAL_TEMP", sb.path().join("ansible-local"))
        .env("SANDBALL_SHIM", &bins.shim)
        .env(
            "SANDBALL_CACHE_DIR",
            workspace_root().join("target/e2e-shim-cache"),
        )
        .env("SANDBALL_ANSIBLE_PYTHON", ansible_python());
    let out = Output::run(cmd, Duration::from_secs(240));
    let artifacts = dir.join("artifacts/job");
    let read = |name: &str| {
        std::fs::read_to_string(artifacts.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}\n{out}"))
    };
    let mut events: Vec<Value> = std::fs::read_dir(artifacts.join("job_events"))
        .unwrap_or_else(|e| panic!("no job_events: {e}\n{out}"))
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap();
            serde_json::from_str(&text).unwrap_or_else(|err| panic!("{text}: {err}"))
        })
        .collect();
    events.sort_by_key(|e| e["counter"].as_u64());
    Artifacts {
        rc: read("rc"),
        status: read("status"),
        events,
        stdout: read("stdout"),
    }
}

/// An event's name, host and task, and its result's keys (those not starting with `_`,
/// runner's internal ones).
fn summary(e: &Value) -> (String, Value, Value, Option<BTreeSet<String>>) {
    let data = &e["event_data"];
    let res = data
        .get("res")
        .and_then(Value::as_object)
        .map(|r| r.keys().filter(|k| !k.starts_with('_')).cloned().collect());
    (
        e["event"].as_str().unwrap_or_default().to_string(),
        data["host"].clone(),
        data["task"].clone(),
        res,
    )
}

/// The events of a run that are not `verbose` (output outside any event).
fn proper(events: &[Value]) -> Vec<&Value> {
    events.iter().filter(|e| e["event"] != "verbose").collect()
}

/// Checks what holds within one run: counters run 1, 2, 3…; each event's parent is its
/// task's, play's or playbook's uuid, as runner's plugin links them.
fn check_structure(events: &[Value], who: &str) {
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["counter"], i + 1, "{who}: counters");
    }
    let (mut playbook, mut play, mut task) = (Value::Null, Value::Null, Value::Null);
    for e in proper(events) {
        let uuid = e["uuid"].clone();
        let parent = e.get("parent_uuid").cloned().unwrap_or(Value::Null);
        match e["event"].as_str().unwrap_or_default() {
            "playbook_on_start" => {
                playbook = uuid;
                assert_eq!(parent, Value::Null, "{who}: {e}");
            }
            "playbook_on_play_start" => {
                play = uuid;
                assert_eq!(parent, playbook, "{who}: {e}");
            }
            "playbook_on_task_start" => {
                task = uuid;
                assert_eq!(parent, play, "{who}: {e}");
            }
            "playbook_on_stats" => assert_eq!(parent, playbook, "{who}: {e}"),
            _ => {
                assert_eq!(parent, task, "{who}: {e}");
                assert_eq!(e["event_data"]["task_uuid"], task, "{who}: {e}");
            }
        }
        assert_eq!(e["event_data"]["playbook_uuid"], playbook, "{who}: {e}");
    }
}

/// What a person reads of the output: no colours, the data dir's path and the command's
/// times made the same.
fn readable(stdout: &str, dir: &Path) -> String {
    let colours = regex::Regex::new(r"\x1b\[[0-9;]*m").unwrap();
    let times = regex::Regex::new(r#""(delta|end|start)": "[^"]*""#).unwrap();
    let text = colours.replace_all(stdout, "");
    let text = text.replace(&dir.display().to_string(), "DIR");
    times.replace_all(&text, "\"$1\": \"T\"").into_owned()
}

#[test]
fn job_events_under_ansible_runner_match_ansible_playbooks() {
    let Some(reference_bin) = std::env::var_os("ANSIBLE_BIN_DIR").map(PathBuf::from) else {
        panic!("ANSIBLE_BIN_DIR is unset: `make test` sets it to ansible-core's venv");
    };
    let sb = Sandbox::new();
    let aliases = sb.path().join("aliases");
    let linked = sb
        .sandball([std::ffi::OsStr::new("install-aliases"), aliases.as_os_str()])
        .run();
    assert_eq!(linked.code, 0, "{linked}");

    // A port that was free a moment ago: connecting to it is refused.
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let ours_dir = private_data_dir(&sb, "ours", closed_port);
    let theirs_dir = private_data_dir(&sb, "theirs", closed_port);
    let ours = run_under_runner(&sb, &ours_dir, &aliases);
    let theirs = run_under_runner(&sb, &theirs_dir, &reference_bin);

    assert_eq!(
        (ours.rc.trim(), ours.status.trim()),
        (theirs.rc.trim(), theirs.status.trim()),
        "{}",
        ours.stdout
    );
    // The unreachable host fails the run.
    assert_eq!((theirs.rc.trim(), theirs.status.trim()), ("4", "failed"));
    check_structure(&theirs.events, "ansible-playbook");
    check_structure(&ours.events, "sandball");

    let (ours_proper, theirs_proper) = (proper(&ours.events), proper(&theirs.events));
    let names = |events: &[&Value]| -> Vec<(String, Value, Value)> {
        events
            .iter()
            .map(|e| {
                let (name, host, task, _) = summary(e);
                (name, host, task)
            })
            .collect()
    };
    assert_eq!(names(&ours_proper), names(&theirs_proper));
    // Nothing is shown outside an event under either.
    assert_eq!(ours.events.len(), ours_proper.len(), "{}", ours.stdout);

    // The same event data, but for `resolved_action` (not given yet); the same result
    // keys, but for the differences the module header names.
    let known: [(&str, &str, &[&str], &[&str]); 4] = [
        ("runner_on_ok", "write a file", &[], &["diff", "src"]),
        ("runner_on_ok", "loop", &["skipped"], &[]),
        ("runner_on_failed", "fails", &["failed"], &[]),
        ("runner_on_unreachable", "ping it", &[], &["exception"]),
    ];
    for (o, t) in ours_proper.iter().zip(&theirs_proper) {
        let keys = |e: &Value| -> BTreeSet<String> {
            e["event_data"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default()
        };
        let mut their_keys = keys(t);
        their_keys.remove("resolved_action");
        assert_eq!(keys(o), their_keys, "\n{o}\n{t}");
        let (name, _, task, ours_res) = summary(o);
        let (ours_res, theirs_res) = match (ours_res, summary(t).3) {
            (None, None) => continue,
            (Some(a), Some(b)) => (a, b),
            other => panic!("a result in one run only: {name} {task}: {other:?}"),
        };
        let (extra, missing) = known
            .iter()
            .find(|(n, k, _, _)| *n == name && task == *k)
            .map(|(_, _, extra, missing)| (*extra, *missing))
            .unwrap_or_default();
        let only_ours: Vec<&str> = ours_res
            .difference(&theirs_res)
            .map(String::as_str)
            .collect();
        let only_theirs: Vec<&str> = theirs_res
            .difference(&ours_res)
            .map(String::as_str)
            .collect();
        assert_eq!(
            (only_ours.as_slice(), only_theirs.as_slice()),
            (extra, missing),
            "{name} {task}"
        );
    }
    // The `no_log` result is hidden the same way.
    let secret = |events: &[&Value]| {
        events
            .iter()
            .find(|e| e["event"] == "runner_on_ok" && e["event_data"]["task"] == "secret")
            .map(|e| e["event_data"]["res"]["censored"].clone())
    };
    assert_eq!(secret(&ours_proper), secret(&theirs_proper));
    assert!(!ours.stdout.contains("a secret"), "{}", ours.stdout);

    // The recap's counters.
    let stats = |events: &[&Value]| -> Value {
        let data = &events.last().expect("events")["event_data"];
        [
            "changed",
            "dark",
            "failures",
            "ignored",
            "ok",
            "processed",
            "rescued",
            "skipped",
            "artifact_data",
        ]
        .iter()
        .map(|k| (k.to_string(), data[*k].clone()))
        .collect::<serde_json::Map<_, _>>()
        .into()
    };
    assert_eq!(stats(&ours_proper), stats(&theirs_proper));

    // What a person reads.
    assert_eq!(
        readable(&ours.stdout, &ours_dir),
        readable(&theirs.stdout, &theirs_dir)
    );
}
