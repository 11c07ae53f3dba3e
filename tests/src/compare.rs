//! Comparing runs with ansible-playbook's: the ansible-core venvs, a task's printed
//! result as JSON, and one playbook run under both tools with each task's chosen
//! result fields compared.

use crate::binaries::target_dir;
use crate::{Output, Sandbox};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The bin dir of an ansible-core venv; panics with the command that installs it.
pub fn ansible_bin(var: &str, venv: &str) -> PathBuf {
    let dir = std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir().join(venv).join("bin"));
    assert!(
        dir.join("ansible-playbook").is_file(),
        "{} has no ansible-playbook: run `make ansible ansible-2.16 ansible-2.21` (`make test` does)",
        dir.display()
    );
    dir
}

/// The result JSON printed for `task` (`ok: [h] => {...}`, possibly over several lines),
/// with the work directory written as `WORK`.
pub fn result(out: &Output, task: &str, work: &Path) -> Value {
    let lines = out.task_lines(task);
    let start = lines
        .iter()
        .position(|l| l.contains("=> {"))
        .unwrap_or_else(|| panic!("no result for task {task}:\n{out}"));
    let first = &lines[start][lines[start].find("=> {").unwrap() + 3..];
    let mut text = String::from(first);
    for l in &lines[start + 1..] {
        text.push('\n');
        text.push_str(l);
    }
    let text = text.replace(&work.display().to_string(), "WORK");
    let mut stream = serde_json::Deserializer::from_str(&text).into_iter::<Value>();
    stream
        .next()
        .and_then(Result::ok)
        .unwrap_or_else(|| panic!("task {task}: the result is not JSON: {text}\n{out}"))
}

/// The value at a `/`-separated path (`stat/size`), or null.
pub fn at<'a>(v: &'a Value, path: &str) -> &'a Value {
    v.pointer(&format!("/{path}")).unwrap_or(&Value::Null)
}

pub type BothRun = (Output, Output, PathBuf, PathBuf);

/// Runs `play` in `sb` under sandball (legacy modules from the ansible-core of `bin`) and
/// under that version's ansible-playbook, each with its own `work` directory; checks
/// the recaps and each task's `fields` are the same.
pub fn both_run(sb: &Sandbox, bin: &Path, play: &str, fields: &[(&str, &[&str])]) -> BothRun {
    both_run_env(sb, bin, play, fields, &[])
}

/// [`both_run`] with environment variables set for both runs.
pub fn both_run_env(
    sb: &Sandbox,
    bin: &Path,
    play: &str,
    fields: &[(&str, &[&str])],
    env: &[(&str, &Path)],
) -> BothRun {
    sb.write(
        "inventory.ini",
        "[nodes]\nlocalhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n",
    );
    let pb = sb.write("core.yml", play);
    let ours_work = sb.dir("work");
    let theirs_work = sb.dir("ansible-work");
    let mut ours = sb
        .play(&pb, &ours_work, &["-v"])
        .env("SANDBALL_ANSIBLE_PYTHON", bin.join("python"))
        .env_remove("SANDBALL_ANSIBLE_CORE_VERSION");
    for (k, v) in env {
        ours = ours.env(k, v);
    }
    let ours = ours.run();
    ours.assert_no_panic();
    let inventory = sb.path().join("inventory.ini");
    let mut theirs = sb.ansible_playbook_in(
        bin,
        [
            "-i".to_string(),
            inventory.display().to_string(),
            pb.display().to_string(),
            "-e".to_string(),
            format!("work={}", theirs_work.display()),
            "-v".to_string(),
        ],
    );
    for (k, v) in env {
        theirs = theirs.env(k, v);
    }
    let theirs = theirs.run();
    ours.assert_same_recap_as(&theirs);
    for (task, fields) in fields {
        let a = result(&ours, task, &ours_work);
        let b = result(&theirs, task, &theirs_work);
        for f in *fields {
            assert_eq!(
                at(&a, f),
                at(&b, f),
                "task {task:?}, field {f}: sandball gave {a}\nansible-playbook gave {b}"
            );
        }
    }
    (ours, theirs, ours_work, theirs_work)
}

/// Playbook tasks that each set a fact to one of `expressions` (a Jinja expression),
/// ignoring the error each is expected to raise, and collect their results, in order,
/// in the list variable `list` (for an `assert` to check the messages).
pub fn failing_tasks(list: &str, expressions: &[&str]) -> String {
    expressions
        .iter()
        .enumerate()
        .map(|(i, expression)| {
            format!(
                "    - name: {list} {i}\n      set_fact: {{x: \"{{{{ {expression} }}}}\"}}\n      \
                 ignore_errors: true\n      register: {list}_{i}\n    \
                 - set_fact: {{{list}: \"{{{{ ({list} | default([])) + [{list}_{i}] }}}}\"}}\n"
            )
        })
        .collect()
}

/// Runs the playbook `pb` of `sb` (its inventory written) under sandball, which must
/// exit 0, and, when ansible-playbook is there, under it too: the recaps and the results
/// of `tasks` must be the same.
pub fn same_as_ansible(sb: &Sandbox, pb: &Path, tasks: &[&str]) {
    same_as_ansible_env(sb, pb, tasks, &[]);
}

/// [`same_as_ansible`] with environment variables set for both runs.
pub fn same_as_ansible_env(sb: &Sandbox, pb: &Path, tasks: &[&str], env: &[(&str, &str)]) {
    let work = sb.dir("work");
    let mut ours = sb.play(pb, &work, &[]);
    for (k, v) in env {
        ours = ours.env(k, v);
    }
    let ours = ours.run();
    ours.assert_no_panic().assert_code(0);
    if let Some(mut theirs) = sb.ansible_play(pb, &work, &[]) {
        for (k, v) in env {
            theirs = theirs.env(k, v);
        }
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        ours.assert_same_recap_as(&theirs)
            .assert_same_results_as(&theirs, tasks);
    }
}
