//! sandball under ansible-runner (from PyPI, `make ansible-runner`), as AWX and Ansible
//! Automation Platform run it, once with ansible-core's ansible-playbook first on
//! `PATH`, once with the `ansible-playbook` that `sandball install-aliases` links.
//! Runner sets `ANSIBLE_STDOUT_CALLBACK=awx_display`, sandball's own callback of that
//! name speaks runner's protocol, and the two runs' job events are compared. Each
//! private data dir runs the three ways runner runs a job: `ansible-runner run DIR`;
//! receptor's path without receptor (`transmit DIR | worker | process OUT`, the events
//! read where they are processed); and the Python API (`ansible_runner.run(…)`, whose
//! `event_handler` must receive every event and `status_handler` every status).
//!
//! What may differ, and why: uuids, pids, times and durations (each run's own); the
//! data dir's path in `task_path` and in the output; `resolved_action`, which sandball
//! does not give yet; and these result keys, where sandball's results are not yet
//! ansible-core's: a failure's result keeps `failed`, a loop's whole result keeps
//! `skipped`, `copy`'s has no `diff` or `src`, an unreachable host's no `exception`
//! (each test's `known` lists them by event and task).

use sandball_e2e::binaries::{ansible_python, ansible_runner, runner_venv_tool, workspace_root};
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

/// The result keys known to differ in [`PLAYBOOK`]'s events: (event, task, keys only
/// sandball's result has, keys only ansible-playbook's has).
const KNOWN: &[(&str, &str, &[&str], &[&str])] = &[
    ("runner_on_ok", "write a file", &[], &["diff", "src"]),
    ("runner_on_ok", "loop", &["skipped"], &[]),
    ("runner_on_failed", "fails", &["failed"], &[]),
];

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

/// The three ways runner runs a job.
#[derive(Clone, Copy, Debug)]
enum Via {
    /// `ansible-runner run DIR -p site.yml`.
    Run,
    /// receptor's path without receptor: `ansible-runner transmit DIR -p site.yml |
    /// ansible-runner worker | ansible-runner process OUT`.
    Receptor,
    /// The Python API: `ansible_runner.run(private_data_dir=…, playbook=…,
    /// event_handler=…, status_handler=…)`.
    Api,
}

/// The Python API's caller: every event and status its handlers receive, written out
/// as JSON with the run's `rc` and `status`.
const API_SCRIPT: &str = r#"import json, sys
import ansible_runner

events, statuses = [], []


def on_event(event):
    events.append(event)
    return True


def on_status(data, runner_config):
    statuses.append(data["status"])


r = ansible_runner.run(private_data_dir=sys.argv[1], playbook="site.yml", ident="job",
                       event_handler=on_event, status_handler=on_status, quiet=True)
with open(sys.argv[2], "w") as f:
    json.dump({"rc": r.rc, "status": r.status, "events": events, "statuses": statuses}, f)
"#;

/// What a run left: its `rc`, `status`, job events (by counter) and stdout; `ran_in`,
/// the data dir the job ran in (the output names it); for the Python API, what its
/// handlers received.
struct Artifacts {
    rc: String,
    status: String,
    events: Vec<Value>,
    stdout: String,
    ran_in: PathBuf,
    handled: Option<Value>,
}

/// runner's command with the environment of a test: `path_first` first on `PATH`.
fn runner_command(sb: &Sandbox, program: &Path, path_first: &Path) -> Command {
    let bins = Binaries::get();
    let mut cmd = Command::new(program);
    cmd.current_dir(sb.path())
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
    cmd
}

/// How long a job may take under runner before the test fails.
const LIMIT: Duration = Duration::from_secs(240);

/// Runs the job of data dir `dir` `via` one of runner's ways, with `path_first` first on
/// `PATH`, and reads what it left where its events are processed.
fn run_under_runner(sb: &Sandbox, dir: &Path, path_first: &Path, via: Via) -> Artifacts {
    let runner = ansible_runner();
    let sibling = |suffix: &str| PathBuf::from(format!("{}-{suffix}", dir.display()));
    let (out, processed, ran_in, handled_file) = match via {
        Via::Run => {
            let mut cmd = runner_command(sb, &runner, path_first);
            cmd.args(["run", "--ident", "job", "-p", "site.yml"])
                .arg(dir);
            (
                Output::run(cmd, LIMIT),
                dir.to_path_buf(),
                dir.to_path_buf(),
                None,
            )
        }
        Via::Receptor => {
            let (worker, processed) = (sibling("worker"), sibling("processed"));
            let mut cmd = runner_command(sb, Path::new("/bin/bash"), path_first);
            cmd.arg("-c")
                .arg(
                    r#"set -o pipefail
"$0" transmit "$1" --ident job -p site.yml | "$0" worker --private-data-dir "$2" |
    "$0" process "$3" --ident job"#,
                )
                .args([runner.as_path(), dir, worker.as_path(), processed.as_path()]);
            (Output::run(cmd, LIMIT), processed, worker, None)
        }
        Via::Api => {
            let script = sb.write("api.py", API_SCRIPT);
            let handled = sibling("handled.json");
            let python = runner_venv_tool("python");
            let mut cmd = runner_command(sb, &python, path_first);
            cmd.arg(script).arg(dir).arg(&handled);
            (
                Output::run(cmd, LIMIT),
                dir.to_path_buf(),
                dir.to_path_buf(),
                Some(handled),
            )
        }
    };
    let artifacts = processed.join("artifacts/job");
    let read = |name: &str| {
        std::fs::read_to_string(artifacts.join(name))
            .unwrap_or_else(|e| panic!("{via:?}: {name}: {e}\n{out}"))
    };
    let mut events: Vec<Value> = std::fs::read_dir(artifacts.join("job_events"))
        .unwrap_or_else(|e| panic!("{via:?}: no job_events: {e}\n{out}"))
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap();
            serde_json::from_str(&text).unwrap_or_else(|err| panic!("{text}: {err}"))
        })
        .collect();
    events.sort_by_key(|e| e["counter"].as_u64());
    let handled = handled_file.map(|f| {
        let text =
            std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}\n{out}", f.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"))
    });
    Artifacts {
        rc: read("rc"),
        status: read("status"),
        events,
        stdout: read("stdout"),
        ran_in,
        handled,
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

/// The events of a run that are not `verbose` (output outside any event), those of a
/// task's hosts in host order (hosts run side by side and finish in any order; each
/// host's own events keep theirs).
fn proper(events: &[Value]) -> Vec<&Value> {
    let mut out: Vec<&Value> = events.iter().filter(|e| e["event"] != "verbose").collect();
    let mut start = 0;
    while start < out.len() {
        let end = start
            + out[start..]
                .iter()
                .position(|e| e["event_data"]["host"].is_null())
                .unwrap_or(out.len() - start);
        out[start..end].sort_by_key(|e| {
            e["event_data"]["host"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        });
        start = end + 1;
    }
    out
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
/// times made the same; each banner's section's lines sorted (hosts finish in any
/// order).
fn readable(stdout: &str, dir: &Path) -> Vec<Vec<String>> {
    let colours = regex::Regex::new(r"\x1b\[[0-9;]*m").unwrap();
    let times = regex::Regex::new(r#""(delta|end|start)": "[^"]*""#).unwrap();
    let text = colours.replace_all(stdout, "");
    let text = text.replace(&dir.display().to_string(), "DIR");
    let text = times.replace_all(&text, "\"$1\": \"T\"");
    let mut sections: Vec<Vec<String>> = vec![Vec::new()];
    for line in text.lines() {
        if line.ends_with("****") {
            sections.push(Vec::new());
        }
        if let Some(section) = sections.last_mut() {
            section.push(line.trim_end_matches('\r').to_string());
        }
    }
    for section in &mut sections {
        section.sort();
    }
    sections
}

/// The Python API's handlers received every event runner wrote, in order, and the
/// statuses `starting`, `running` and the final one; the API returned the `rc` and
/// `status` of the artifacts.
fn check_handled(run: &Artifacts, who: &str) {
    let Some(handled) = &run.handled else { return };
    let uuids =
        |events: &[Value]| -> Vec<Value> { events.iter().map(|e| e["uuid"].clone()).collect() };
    let received = handled["events"].as_array().cloned().unwrap_or_default();
    assert_eq!(uuids(&received), uuids(&run.events), "{who}: event_handler");
    for (got, written) in received.iter().zip(&run.events) {
        assert_eq!(got["event"], written["event"], "{who}");
        assert_eq!(got["event_data"], written["event_data"], "{who}");
    }
    assert_eq!(
        handled["statuses"],
        serde_json::json!(["starting", "running", run.status.trim()]),
        "{who}: status_handler"
    );
    assert_eq!(handled["rc"].to_string(), run.rc.trim(), "{who}");
    assert_eq!(handled["status"], run.status.trim(), "{who}");
}

/// The events' stats, as `playbook_on_stats` carries them.
fn stats(events: &[&Value]) -> Value {
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
}

/// Compares two runs of the same job: `rc` and `status`, the events in order (name,
/// host, task), each event's data keys but `resolved_action`, the results' keys but
/// those `known` to differ, what is shown outside events, the stats and the output as a
/// person reads it.
fn assert_same_job(ours: &Artifacts, theirs: &Artifacts, known: &[(&str, &str, &[&str], &[&str])]) {
    assert_eq!(
        (ours.rc.trim(), ours.status.trim()),
        (theirs.rc.trim(), theirs.status.trim()),
        "{}",
        ours.stdout
    );
    check_structure(&theirs.events, "ansible-playbook");
    check_structure(&ours.events, "sandball");
    check_handled(theirs, "ansible-playbook");
    check_handled(ours, "sandball");

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
    // The same shown outside any event (a prompt's text, say; sandball asks for the
    // vault's password before become's, ansible-playbook after: runner answers each by
    // its pattern, whatever the order).
    let outside = |run: &Artifacts| -> Vec<String> {
        let mut shown: Vec<String> = run
            .events
            .iter()
            .filter(|e| e["event"] == "verbose")
            .map(|e| e["stdout"].as_str().unwrap_or_default().to_string())
            .collect();
        shown.sort();
        shown
    };
    assert_eq!(outside(ours), outside(theirs), "{}", ours.stdout);

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
    // A diff is the same diff.
    let diffs = |events: &[&Value]| -> Vec<Value> {
        events
            .iter()
            .filter(|e| e["event"] == "runner_on_file_diff")
            .map(|e| e["event_data"]["diff"].clone())
            .collect()
    };
    assert_eq!(diffs(&ours_proper), diffs(&theirs_proper));
    assert_eq!(stats(&ours_proper), stats(&theirs_proper));

    // What a person reads.
    assert_eq!(
        readable(&ours.stdout, &ours.ran_in),
        readable(&theirs.stdout, &theirs.ran_in)
    );
}

/// ansible-core's bin directory (`make test` sets `ANSIBLE_BIN_DIR` to its venv's).
fn reference_bin() -> PathBuf {
    std::env::var_os("ANSIBLE_BIN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            panic!("ANSIBLE_BIN_DIR is unset: `make test` sets it to ansible-core's venv")
        })
}

/// sandball's `ansible-playbook` and the rest, linked by `sandball install-aliases`.
fn aliases(sb: &Sandbox) -> PathBuf {
    let aliases = sb.path().join("aliases");
    let linked = sb
        .sandball([std::ffi::OsStr::new("install-aliases"), aliases.as_os_str()])
        .run();
    assert_eq!(linked.code, 0, "{linked}");
    aliases
}

/// [`PLAYBOOK`]'s job `via` one of runner's ways, under both tools, compared.
fn playbook_under(via: Via) {
    let sb = Sandbox::new();
    let aliases = aliases(&sb);
    // A port that was free a moment ago: connecting to it is refused.
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let ours_dir = private_data_dir(&sb, "ours", closed_port);
    let theirs_dir = private_data_dir(&sb, "theirs", closed_port);
    let ours = run_under_runner(&sb, &ours_dir, &aliases, via);
    let theirs = run_under_runner(&sb, &theirs_dir, &reference_bin(), via);

    // The unreachable host fails the run.
    assert_eq!((theirs.rc.trim(), theirs.status.trim()), ("4", "failed"));
    assert_same_job(&ours, &theirs, KNOWN);
    // Nothing is shown outside an event.
    assert_eq!(
        ours.events.len(),
        proper(&ours.events).len(),
        "{}",
        ours.stdout
    );
    // The `no_log` result is hidden the same way.
    let secret = |events: &[Value]| {
        events
            .iter()
            .find(|e| e["event"] == "runner_on_ok" && e["event_data"]["task"] == "secret")
            .map(|e| e["event_data"]["res"]["censored"].clone())
    };
    assert_eq!(secret(&ours.events), secret(&theirs.events));
    assert!(secret(&ours.events).is_some_and(|c| c.is_string()));
    assert!(!ours.stdout.contains("a secret"), "{}", ours.stdout);
}

#[test]
fn job_events_under_ansible_runner_match_ansible_playbooks() {
    playbook_under(Via::Run);
}

#[test]
fn job_events_through_transmit_worker_process_match_ansible_playbooks() {
    playbook_under(Via::Receptor);
}

#[test]
fn python_api_handlers_receive_every_event_as_with_ansible_playbook() {
    playbook_under(Via::Api);
}

/// A play of two hosts, one failing, in check and diff mode, its vars in a vault whose
/// password is asked for, as are become's: the prompts answered from `env/passwords`
/// by AWX's own patterns.
const CASES: &str = r#"- name: cases
  hosts: all
  gather_facts: false
  vars_files: [vars.yml]
  tasks:
    - name: line
      lineinfile: {path: "{{ out }}/{{ inventory_hostname }}.txt", line: hello, create: true}
    - name: fail one
      fail: {msg: boom}
      when: inventory_hostname == 'b'
    - name: opened
      assert: {that: "secret == 'sesame-4711'"}
"#;

/// The result keys known to differ in [`CASES`]' events, as [`KNOWN`]'s.
const CASES_KNOWN: &[(&str, &str, &[&str], &[&str])] =
    &[("runner_on_failed", "fail one", &["failed"], &[])];

/// The patterns AWX answers ansible-playbook's prompts by, with their answers.
const PASSWORDS: &str = r#"'BECOME password.*:\s*?$': become-secret
'Vault password \(x\):\s*?$': vault-secret
'SSH password:\s*?$': never-asked
'Vault password:\s*?$': never-asked
"#;

/// [`CASES`]' data dir: `vars.yml` encrypted (as `vault`, vault id `x`), the prompts in
/// `env/cmdline`, their answers in `env/passwords`. Its files would go to `cases-out`,
/// the same for every run (in check mode, nothing is written there), so that the
/// diffs' headers are the same.
fn cases_data_dir(sb: &Sandbox, name: &str, vault: &str) -> PathBuf {
    let out = sb.dir("cases-out");
    sb.write(&format!("{name}/project/site.yml"), CASES);
    sb.write(&format!("{name}/project/vars.yml"), vault);
    let python = ansible_python();
    sb.write(
        &format!("{name}/inventory/hosts"),
        &format!(
            "a ansible_connection=local ansible_python_interpreter={p}\n\
             b ansible_connection=local ansible_python_interpreter={p}\n",
            p = python.display()
        ),
    );
    sb.write(
        &format!("{name}/env/extravars"),
        &format!("out: {}\n", out.display()),
    );
    sb.write(
        &format!("{name}/env/cmdline"),
        "--check --diff --ask-become-pass --vault-id x@prompt",
    );
    sb.write(&format!("{name}/env/passwords"), PASSWORDS);
    sb.path().join(name)
}

#[test]
fn prompts_check_diff_and_a_failing_host_under_runner_match_ansible_playbooks() {
    let sb = Sandbox::new();
    let aliases = aliases(&sb);
    // The vault, encrypted by ansible-core's ansible-vault.
    let password = sb.write("vault-password", "vault-secret\n");
    let plain = sb.write("vars.yml", "secret: sesame-4711\n");
    let mut encrypt = Command::new(reference_bin().join("ansible-vault"));
    encrypt
        .args(["encrypt", "--vault-id"])
        .arg(format!("x@{}", password.display()))
        .arg(&plain)
        .env("ANSIBLE_HOME", sb.path().join("ansible-home"));
    let encrypted = Output::run(encrypt, LIMIT);
    assert_eq!(encrypted.code, 0, "{encrypted}");
    let vault = std::fs::read_to_string(&plain).unwrap();
    assert!(vault.starts_with("$ANSIBLE_VAULT;1.2;AES256;x"), "{vault}");

    for via in [Via::Run, Via::Receptor] {
        let ours_dir = cases_data_dir(&sb, &format!("ours-{via:?}"), &vault);
        let theirs_dir = cases_data_dir(&sb, &format!("theirs-{via:?}"), &vault);
        let ours = run_under_runner(&sb, &ours_dir, &aliases, via);
        let theirs = run_under_runner(&sb, &theirs_dir, &reference_bin(), via);
        // The failing host fails the run; the vault opened (the assertion passed).
        assert_eq!((theirs.rc.trim(), theirs.status.trim()), ("2", "failed"));
        assert_same_job(&ours, &theirs, CASES_KNOWN);
        let stats = stats(&proper(&ours.events));
        assert_eq!(stats["failures"], serde_json::json!({"b": 1}), "{via:?}");
        assert_eq!(stats["ok"]["a"], 2, "{via:?}: {}", ours.stdout);
        // Both prompts were shown, in the shapes AWX's patterns expect.
        let mut prompts: Vec<&str> = ours
            .events
            .iter()
            .filter(|e| e["event"] == "verbose")
            .filter_map(|e| e["stdout"].as_str())
            .filter(|s| s.contains("password"))
            .collect();
        prompts.sort();
        assert_eq!(
            prompts,
            ["BECOME password: ", "Vault password (x): "],
            "{via:?}"
        );
        // Check mode: nothing written; the diffs say what would have been.
        assert!(
            std::fs::read_dir(sb.path().join("cases-out"))
                .unwrap()
                .next()
                .is_none()
        );
        let diffs = ours
            .events
            .iter()
            .filter(|e| e["event"] == "runner_on_file_diff")
            .count();
        assert_eq!(diffs, 2, "{via:?}: {}", ours.stdout);
    }
}

/// A small job's data dir: one task on localhost, and `files` (path, content) added.
fn small_data_dir(sb: &Sandbox, name: &str, files: &[(&str, &str)]) -> PathBuf {
    sb.write(
        &format!("{name}/inventory/hosts"),
        &format!(
            "localhost ansible_connection=local ansible_python_interpreter={}\n",
            ansible_python().display()
        ),
    );
    for (path, content) in files {
        sb.write(&format!("{name}/{path}"), content);
    }
    sb.path().join(name)
}

const SMALL: &str = "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: {msg: hi}\n";

#[test]
fn bad_input_under_runner_ends_as_with_ansible_playbook_never_hanging() {
    let sb = Sandbox::new();
    let aliases = aliases(&sb);
    let both = |name: &str, files: &[(&str, &str)]| -> (Artifacts, Artifacts) {
        let ours = small_data_dir(&sb, &format!("ours-{name}"), files);
        let theirs = small_data_dir(&sb, &format!("theirs-{name}"), files);
        let start = std::time::Instant::now();
        let ours = run_under_runner(&sb, &ours, &aliases, Via::Run);
        // Well under the harness's limit: nothing waits on what never comes.
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{name}: {:?}",
            start.elapsed()
        );
        (
            ours,
            run_under_runner(&sb, &theirs, &reference_bin(), Via::Run),
        )
    };
    let outcome = |run: &Artifacts| (run.rc.trim().to_string(), run.status.trim().to_string());

    // A private data dir without a project: the playbook is not found, said once.
    let (ours, theirs) = both("no-project", &[]);
    assert_eq!(outcome(&ours), ("1".to_string(), "failed".to_string()));
    assert_eq!(outcome(&ours), outcome(&theirs));
    assert!(ours.stdout.contains("site.yml"), "{}", ours.stdout);

    // An unknown stdout callback (runner passes it on as ORIGINAL_STDOUT_CALLBACK):
    // ansible-playbook fails with a traceback, sandball says which callback.
    let unknown = [
        ("project/site.yml", SMALL),
        ("env/envvars", "ANSIBLE_STDOUT_CALLBACK: nosuch\n"),
    ];
    let (ours, theirs) = both("unknown-callback", &unknown);
    assert_eq!(outcome(&theirs).1, "failed");
    assert_eq!(outcome(&ours).1, "failed", "{}", ours.stdout);
    assert_ne!(outcome(&ours).0, "0");
    assert!(ours.stdout.contains("nosuch"), "{}", ours.stdout);

    // A prompt that nothing answers: the job waits as ansible-playbook's does, until
    // runner's idle timeout ends it.
    let unanswered = [
        ("project/site.yml", SMALL),
        ("env/cmdline", "--ask-vault-pass"),
        ("env/settings", "idle_timeout: 5\n"),
    ];
    let (ours, theirs) = both("unanswered", &unanswered);
    assert_eq!(outcome(&theirs).1, "timeout");
    assert_eq!(outcome(&ours), outcome(&theirs), "{}", ours.stdout);
    for run in [&ours, &theirs] {
        let asked = run.events.iter().any(|e| e["stdout"] == "Vault password: ");
        assert!(asked, "{:?}", run.events);
    }

    // Without a terminal (a session of its own: `setsid`), the input closed: an error,
    // not a run without the vault.
    let playbook = sb.write("small.yml", SMALL);
    let without_terminal = |program: &Path| {
        let mut cmd = Command::new("setsid");
        cmd.arg("--wait")
            .arg(program)
            .args(["-i", "localhost,", "--ask-vault-pass"])
            .arg(&playbook)
            .current_dir(sb.path())
            .env("ANSIBLE_HOME", sb.path().join("ansible-home"));
        Output::run(cmd, LIMIT)
    };
    let ours = without_terminal(&aliases.join("ansible-playbook"));
    let theirs = without_terminal(&reference_bin().join("ansible-playbook"));
    assert_eq!(theirs.code, 1, "{theirs}");
    assert_eq!(ours.code, theirs.code, "{ours}");
    assert!(ours.stderr.contains("vault password"), "{ours}");
}
