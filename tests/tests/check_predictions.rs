//! What every native module predicts under `-C`, against ansible-core's module of the
//! same name: one table of tasks — each module in its main states, on things that are
//! already as asked and on things that are not — run as one dry run under sandball and
//! under ansible-playbook, each task's outcome (ok, changed, skipped or failed)
//! compared; neither run may change anything. The modules that read or change the
//! machine itself (packages, accounts, the user's crontab, the host name, services)
//! have a table of their own, run one test at a time with the others that touch the
//! machine (`.config/nextest.toml`).

use crate::http::Server;
use sandball_e2e::compare::ansible_bin;
use sandball_e2e::tree::snapshot;
use sandball_e2e::{Output, Sandbox};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

/// How long one run of a table may take: a hundred tasks, each module compiled on the
/// node on its first use in a debug build.
const TABLE_LIMIT: Duration = Duration::from_secs(900);

/// The files, directories and links each run starts from, in its work directory.
fn fixtures(work: &Path) {
    let write = |name: &str, text: &str, mode: u32| {
        let path = work.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("fixture directory");
        }
        std::fs::write(&path, text).expect("fixture file");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .expect("fixture mode");
    };
    write("present.txt", "alpha\nbeta\n", 0o644);
    write("gone.txt", "to be removed\n", 0o644);
    write("same.txt", "same\n", 0o644);
    write("rendered.txt", "42", 0o644);
    write("rendered-newline.txt", "42\n", 0o644);
    write(
        "block.txt",
        "top\n# BEGIN ANSIBLE MANAGED BLOCK\nkept\n# END ANSIBLE MANAGED BLOCK\n",
        0o644,
    );
    write("dir/inside.txt", "inside\n", 0o644);
    std::fs::set_permissions(work.join("dir"), std::fs::Permissions::from_mode(0o755))
        .expect("fixture mode");
    std::os::unix::fs::symlink(work.join("present.txt"), work.join("link")).expect("fixture link");
    write(
        "known_hosts",
        "known.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n",
        0o644,
    );
    write(
        "cron.d/job",
        "#Ansible: kept\n*/5 * * * * root /bin/true\n",
        0o644,
    );
    write("served", "served\n", 0o644);
}

/// A key for a host `known_hosts` does not hold.
const NEW_KEY: &str =
    "new.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ3Y0zDzYt3Dq0mNQ0y8Q8a8kK2yPqN3i3kqJ0m6Lr3Z";
/// The key `known_hosts` holds.
const OLD_KEY: &str = "known.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl";

/// The tasks on files and programs: `(name, task)`, the task a module call of the
/// play (`W` is the work directory, `S` the sandbox, `PORT` the test server's port).
fn file_rows() -> Vec<(&'static str, String)> {
    let rows: &[(&str, &str)] = &[
        (
            "file directory new",
            r#"file: {path: W/newdir, state: directory}"#,
        ),
        (
            "file directory existing",
            r#"file: {path: W/dir, state: directory}"#,
        ),
        (
            "file directory over a file",
            r#"file: {path: W/present.txt, state: directory}"#,
        ),
        (
            "file directory mode",
            r#"file: {path: W/dir, state: directory, mode: "0700"}"#,
        ),
        (
            "file directory recurse",
            r#"file: {path: W/dir, state: directory, mode: "u=rwX,go=rX", recurse: true}"#,
        ),
        (
            "file absent existing",
            r#"file: {path: W/gone.txt, state: absent}"#,
        ),
        (
            "file absent directory",
            r#"file: {path: W/dir, state: absent}"#,
        ),
        (
            "file absent missing",
            r#"file: {path: W/nothing, state: absent}"#,
        ),
        ("file touch new", r#"file: {path: W/touched, state: touch}"#),
        (
            "file touch existing",
            r#"file: {path: W/present.txt, state: touch}"#,
        ),
        (
            "file touch preserving times",
            r#"file: {path: W/present.txt, state: touch, access_time: preserve, modification_time: preserve}"#,
        ),
        (
            "file file mode change",
            r#"file: {path: W/present.txt, mode: "0600"}"#,
        ),
        (
            "file file same mode",
            r#"file: {path: W/present.txt, mode: "0644"}"#,
        ),
        (
            "file file symbolic mode",
            r#"file: {path: W/present.txt, mode: "u+x"}"#,
        ),
        (
            "file file missing",
            r#"file: {path: W/nothing, state: file}"#,
        ),
        (
            "file link new",
            r#"file: {src: W/present.txt, dest: W/newlink, state: link}"#,
        ),
        (
            "file link existing",
            r#"file: {src: W/present.txt, dest: W/link, state: link}"#,
        ),
        (
            "file link elsewhere",
            r#"file: {src: W/same.txt, dest: W/link, state: link}"#,
        ),
        (
            "file link over a file",
            r#"file: {src: W/same.txt, dest: W/present.txt, state: link}"#,
        ),
        (
            "file link over a file forced",
            r#"file: {src: W/same.txt, dest: W/present.txt, state: link, force: true}"#,
        ),
        (
            "file link to a missing source",
            r#"file: {src: W/nothing, dest: W/dangling, state: link}"#,
        ),
        (
            "file hard new",
            r#"file: {src: W/present.txt, dest: W/hardlink, state: hard}"#,
        ),
        (
            "file hard missing source",
            r#"file: {src: W/nothing, dest: W/hardlink2, state: hard}"#,
        ),
        (
            "copy content new",
            r#"copy: {content: "new\n", dest: W/copied.txt}"#,
        ),
        (
            "copy content same",
            r#"copy: {content: "same\n", dest: W/same.txt}"#,
        ),
        (
            "copy content different",
            r#"copy: {content: "other\n", dest: W/same.txt}"#,
        ),
        (
            "copy content mode only",
            r#"copy: {content: "same\n", dest: W/same.txt, mode: "0600"}"#,
        ),
        (
            "copy content not forced",
            r#"copy: {content: "other\n", dest: W/same.txt, force: false}"#,
        ),
        (
            "copy content into a directory",
            r#"copy: {content: "x\n", dest: W/dir}"#,
        ),
        (
            "copy content into a missing directory",
            r#"copy: {content: "x\n", dest: W/nodir/file}"#,
        ),
        (
            "copy src new",
            r#"copy: {src: a.txt, dest: W/from-src.txt}"#,
        ),
        (
            "copy src into a directory",
            r#"copy: {src: a.txt, dest: W/dir/}"#,
        ),
        ("copy src tree", r#"copy: {src: tree, dest: W/}"#),
        (
            "copy remote src",
            r#"copy: {src: W/present.txt, dest: W/remote-copy.txt, remote_src: true}"#,
        ),
        (
            "copy remote src same",
            r#"copy: {src: W/same.txt, dest: W/same.txt, remote_src: true}"#,
        ),
        (
            "copy remote src missing",
            r#"copy: {src: W/nothing, dest: W/remote-copy2.txt, remote_src: true}"#,
        ),
        (
            "template new",
            r#"template: {src: t.j2, dest: W/rendered-new.txt}"#,
        ),
        (
            "template same",
            r#"template: {src: t.j2, dest: W/rendered.txt}"#,
        ),
        (
            "template with a newline more",
            r#"template: {src: t.j2, dest: W/rendered-newline.txt}"#,
        ),
        (
            "template mode only",
            r#"template: {src: t.j2, dest: W/rendered.txt, mode: "0600"}"#,
        ),
        (
            "lineinfile present new",
            r#"lineinfile: {path: W/present.txt, line: gamma}"#,
        ),
        (
            "lineinfile present existing",
            r#"lineinfile: {path: W/present.txt, line: beta}"#,
        ),
        (
            "lineinfile regexp replace",
            r#"lineinfile: {path: W/present.txt, regexp: '^beta', line: BETA}"#,
        ),
        (
            "lineinfile regexp same",
            r#"lineinfile: {path: W/present.txt, regexp: '^beta', line: beta}"#,
        ),
        (
            "lineinfile backrefs no match",
            r#"lineinfile: {path: W/present.txt, regexp: '^zeta(.*)', line: 'z\1', backrefs: true}"#,
        ),
        (
            "lineinfile absent existing",
            r#"lineinfile: {path: W/present.txt, line: alpha, state: absent}"#,
        ),
        (
            "lineinfile absent missing line",
            r#"lineinfile: {path: W/present.txt, line: omega, state: absent}"#,
        ),
        (
            "lineinfile absent missing file",
            r#"lineinfile: {path: W/nothing, line: omega, state: absent}"#,
        ),
        (
            "lineinfile create",
            r#"lineinfile: {path: W/created.txt, line: x, create: true}"#,
        ),
        (
            "lineinfile create in a missing directory",
            r#"lineinfile: {path: W/nodir/created.txt, line: x, create: true}"#,
        ),
        (
            "lineinfile missing file",
            r#"lineinfile: {path: W/nothing, line: x}"#,
        ),
        (
            "lineinfile mode only",
            r#"lineinfile: {path: W/present.txt, line: beta, mode: "0600"}"#,
        ),
        (
            "blockinfile insert",
            r#"blockinfile: {path: W/present.txt, block: "one\ntwo"}"#,
        ),
        (
            "blockinfile same",
            r#"blockinfile: {path: W/block.txt, block: kept}"#,
        ),
        (
            "blockinfile changed block",
            r#"blockinfile: {path: W/block.txt, block: other}"#,
        ),
        (
            "blockinfile absent existing",
            r#"blockinfile: {path: W/block.txt, state: absent}"#,
        ),
        (
            "blockinfile absent missing",
            r#"blockinfile: {path: W/present.txt, state: absent}"#,
        ),
        (
            "blockinfile create",
            r#"blockinfile: {path: W/block-new.txt, block: x, create: true}"#,
        ),
        (
            "blockinfile missing file",
            r#"blockinfile: {path: W/nothing, block: x}"#,
        ),
        (
            "replace match",
            r#"replace: {path: W/present.txt, regexp: 'a', replace: A}"#,
        ),
        (
            "replace no match",
            r#"replace: {path: W/present.txt, regexp: 'zzz', replace: A}"#,
        ),
        (
            "replace same text",
            r#"replace: {path: W/present.txt, regexp: 'alpha', replace: alpha}"#,
        ),
        (
            "replace missing file",
            r#"replace: {path: W/nothing, regexp: 'a', replace: A}"#,
        ),
        ("command plain", r#"command: touch W/by-command"#),
        (
            "command creates missing",
            r#"command: {cmd: touch W/by-command, creates: W/by-command}"#,
        ),
        (
            "command creates existing",
            r#"command: {cmd: touch W/by-command, creates: W/present.txt}"#,
        ),
        (
            "command removes existing",
            r#"command: {cmd: rm W/present.txt, removes: W/present.txt}"#,
        ),
        (
            "command removes missing",
            r#"command: {cmd: rm W/nothing, removes: W/nothing}"#,
        ),
        ("shell plain", r#"shell: touch W/by-shell"#),
        (
            "shell creates existing",
            r#"shell: {cmd: touch W/by-shell, creates: W/present.txt}"#,
        ),
        (
            "cron file new job",
            r#"cron: {name: added, job: /bin/true, cron_file: W/cron.d/job, user: root}"#,
        ),
        (
            "cron file same job",
            r#"cron: {name: kept, minute: "*/5", job: /bin/true, cron_file: W/cron.d/job, user: root}"#,
        ),
        (
            "cron file changed job",
            r#"cron: {name: kept, minute: "*/10", job: /bin/true, cron_file: W/cron.d/job, user: root}"#,
        ),
        (
            "cron file absent job",
            r#"cron: {name: kept, cron_file: W/cron.d/job, user: root, state: absent}"#,
        ),
        (
            "cron file absent missing job",
            r#"cron: {name: nothing, cron_file: W/cron.d/job, user: root, state: absent}"#,
        ),
        (
            "cron file new file",
            r#"cron: {name: added, job: /bin/true, cron_file: W/cron.d/new, user: root}"#,
        ),
        (
            "cron file env",
            r#"cron: {name: PATH, job: /bin, env: true, cron_file: W/cron.d/job, user: root}"#,
        ),
        (
            "known_hosts add",
            r#"known_hosts: {path: W/known_hosts, name: new.example, key: "NEW_KEY"}"#,
        ),
        (
            "known_hosts add existing",
            r#"known_hosts: {path: W/known_hosts, name: known.example, key: "OLD_KEY"}"#,
        ),
        (
            "known_hosts add to a new file",
            r#"known_hosts: {path: W/known_hosts_new, name: new.example, key: "NEW_KEY"}"#,
        ),
        (
            "known_hosts remove existing",
            r#"known_hosts: {path: W/known_hosts, name: known.example, state: absent}"#,
        ),
        (
            "known_hosts remove missing",
            r#"known_hosts: {path: W/known_hosts, name: new.example, state: absent}"#,
        ),
        (
            "git clone new",
            r#"git: {repo: S/upstream, dest: W/clone-new}"#,
        ),
        (
            "git clone existing",
            r#"git: {repo: S/upstream, dest: S/clone}"#,
        ),
        (
            "git clone another version",
            r#"git: {repo: S/upstream, dest: S/clone, version: first}"#,
        ),
        (
            "git clone no update",
            r#"git: {repo: S/upstream, dest: S/clone, version: first, update: false}"#,
        ),
        (
            "get_url new",
            r#"get_url: {url: "http://127.0.0.1:PORT/text", dest: W/fetched}"#,
        ),
        (
            "get_url existing not forced",
            r#"get_url: {url: "http://127.0.0.1:PORT/text", dest: W/served}"#,
        ),
        (
            "get_url existing forced",
            r#"get_url: {url: "http://127.0.0.1:PORT/text", dest: W/served, force: true}"#,
        ),
        (
            "get_url mode only",
            r#"get_url: {url: "http://127.0.0.1:PORT/text", dest: W/served, mode: "0600"}"#,
        ),
        ("uri get", r#"uri: {url: "http://127.0.0.1:PORT/text"}"#),
        ("tempfile file", r#"tempfile: {path: W}"#),
        (
            "wait_for file",
            r#"wait_for: {path: W/present.txt, timeout: 1}"#,
        ),
        ("find files", r#"find: {paths: W}"#),
        ("stat file", r#"stat: {path: W/present.txt}"#),
        ("slurp file", r#"slurp: {src: W/present.txt}"#),
        ("ping", r#"ping:"#),
        ("setup min", r#"setup: {gather_subset: [min]}"#),
        ("getent root", r#"getent: {database: passwd, key: root}"#),
    ];
    rows.iter()
        .map(|(name, task)| {
            let task = task.replace("NEW_KEY", NEW_KEY).replace("OLD_KEY", OLD_KEY);
            (*name, task)
        })
        .collect()
}

/// The machine's own things, read and never changed under `-C` (as root): packages,
/// accounts, the user's crontab, the host name. `HOSTNAME` is the host's name.
const MACHINE_ROWS: &[(&str, &str)] = &[
    (
        "apt present installed",
        r#"apt: {name: bash, state: present}"#,
    ),
    ("apt present new", r#"apt: {name: sl, state: present}"#),
    (
        "apt latest installed",
        r#"apt: {name: bash, state: latest}"#,
    ),
    ("apt absent missing", r#"apt: {name: sl, state: absent}"#),
    (
        "apt absent installed",
        r#"apt: {name: bash, state: absent}"#,
    ),
    ("user present existing", r#"user: {name: root}"#),
    ("user present new", r#"user: {name: sbt_check_new}"#),
    (
        "user present another shell",
        r#"user: {name: root, shell: /bin/sbt-none}"#,
    ),
    (
        "user absent missing",
        r#"user: {name: sbt_check_new, state: absent}"#,
    ),
    (
        "user absent existing",
        r#"user: {name: daemon, state: absent}"#,
    ),
    ("group present existing", r#"group: {name: root}"#),
    ("group present new", r#"group: {name: sbt_check_new}"#),
    (
        "group present another gid",
        r#"group: {name: daemon, gid: 4711}"#,
    ),
    (
        "group absent missing",
        r#"group: {name: sbt_check_new, state: absent}"#,
    ),
    (
        "group absent existing",
        r#"group: {name: daemon, state: absent}"#,
    ),
    ("cron new job", r#"cron: {name: sbt check, job: /bin/true}"#),
    (
        "cron absent job",
        r#"cron: {name: sbt check, state: absent}"#,
    ),
    ("hostname same", r#"hostname: {name: HOSTNAME}"#),
    ("hostname another", r#"hostname: {name: sbt-check-other}"#),
    (
        "systemd_service unknown unit",
        r#"systemd_service: {name: sbt-check-none.service, state: started}"#,
    ),
];

/// A playbook of `rows`, each task ignoring its errors (`W` in a task is the work
/// directory, `S` the sandbox).
fn playbook(rows: &[(&str, String)], sandbox: &Path, work: &Path) -> String {
    let (sandbox, work) = (sandbox.display(), work.display());
    let mut play = String::from("- hosts: all\n  gather_facts: false\n  tasks:\n");
    for (name, task) in rows {
        let task = task
            .replace("W/", &format!("{work}/"))
            .replace("W}", &format!("{work}}}"))
            .replace("S/", &format!("{sandbox}/"));
        play.push_str(&format!(
            "    - name: {name}\n      {task}\n      ignore_errors: true\n"
        ));
    }
    play
}

/// A task's outcome as the default callback shows it: ok, changed, skipped or failed.
fn outcome(out: &Output, task: &str) -> String {
    let lines = out.task_lines(task);
    let first = lines
        .iter()
        .find_map(|l| {
            [
                ("ok: ", "ok"),
                ("changed: ", "changed"),
                ("skipping: ", "skipped"),
                ("fatal: ", "failed"),
                ("failed: ", "failed"),
            ]
            .iter()
            .find(|(prefix, _)| l.starts_with(prefix))
            .map(|(_, word)| *word)
        })
        .unwrap_or("none");
    first.to_string()
}

/// The rows whose outcomes differ: `name: sandball X, ansible-core Y`.
fn differences(rows: &[(&str, String)], ours: &Output, theirs: &Output) -> Vec<String> {
    rows.iter()
        .filter_map(|(name, _)| {
            let (a, b) = (outcome(ours, name), outcome(theirs, name));
            (a != b).then(|| format!("{name}: sandball {a}, ansible-core {b}"))
        })
        .collect()
}

/// Runs `rows` under `-C` in `sb`, each tool in a work directory of its own made by
/// `prepare`, and checks that neither changed its work directory and that the outcomes
/// are ansible-core's. The sandball run's output, for further checks.
fn compare(sb: &Sandbox, rows: &[(&str, String)], prepare: impl Fn(&Path)) -> Output {
    sb.inventory_with_python(&["alpha"]);
    let ours_work = sb.dir("work");
    let theirs_work = sb.dir("ansible-work");
    prepare(&ours_work);
    prepare(&theirs_work);
    let ours_pb = sb.write("ours.yml", &playbook(rows, sb.path(), &ours_work));
    let theirs_pb = sb.write("theirs.yml", &playbook(rows, sb.path(), &theirs_work));
    let before = snapshot(&ours_work);
    let ours = sb
        .play_with_core(&ours_pb, &ours_work, &["-C"])
        .limit(TABLE_LIMIT)
        .run();
    ours.assert_no_panic().assert_code(0);
    assert_eq!(
        snapshot(&ours_work),
        before,
        "sandball's dry run changed its work directory:\n{ours}"
    );
    for (name, _) in rows {
        assert_ne!(outcome(&ours, name), "none", "{name}:\n{ours}");
    }
    if let Some(theirs) = sb.ansible_play(&theirs_pb, &theirs_work, &["-C"]) {
        let theirs = theirs.limit(TABLE_LIMIT).run();
        let differ = differences(rows, &ours, &theirs);
        assert!(
            differ.is_empty(),
            "check mode outcomes differ from ansible-core's: {differ:#?}\n\
             === sandball ===\n{ours}\n=== ansible-playbook ===\n{theirs}"
        );
        ours.assert_same_recap_as(&theirs);
    }
    ours
}

/// Makes the upstream repository (`upstream` beside the work directories, two commits, the
/// first tagged `first`) and a clone of it.
fn git_fixtures(sb: &Sandbox) {
    let up = sb.dir("upstream");
    let git = |dir: &Path, args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args([
                "-c",
                "commit.gpgsign=false",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(dir)
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    };
    git(&up, &["init", "-q", "."]);
    std::fs::write(up.join("f"), "1\n").expect("upstream file");
    git(&up, &["add", "f"]);
    git(&up, &["commit", "-qm", "one"]);
    git(&up, &["tag", "first"]);
    std::fs::write(up.join("f"), "2\n").expect("upstream file");
    git(&up, &["commit", "-qam", "two"]);
    git(sb.path(), &["clone", "-q", "upstream", "clone"]);
}

/// Every native module on files, programs, the network and facts, in its main
/// states, predicts under `-C` what ansible-core's module predicts.
#[test]
fn native_modules_predict_changes_in_check_mode_as_ansible_core() {
    let bin = ansible_bin("ANSIBLE_BIN_DIR", "venv");
    let sb = Sandbox::new();
    let server = Server::start(&bin.join("python"), &sb.dir("server"));
    sb.write("files/a.txt", "from the controller\n");
    sb.write("files/tree/one.txt", "one\n");
    sb.write("files/tree/sub/two.txt", "two\n");
    sb.write("templates/t.j2", "{{ 40 + 2 }}\n");
    git_fixtures(&sb);
    let rows: Vec<(&str, String)> = file_rows()
        .into_iter()
        .map(|(name, task)| (name, server.fill(&task)))
        .collect();
    let clone = sb.path().join("clone");
    let before = snapshot(&clone);
    compare(&sb, &rows, fixtures);
    assert_eq!(snapshot(&clone), before, "a dry run changed the clone");
}

/// The modules of the machine's own state (packages, accounts, crontab, host name,
/// services) predict under `-C` what ansible-core's predict, and change nothing.
#[test]
fn machine_modules_predict_changes_in_check_mode_as_ansible_core() {
    let sb = Sandbox::new();
    let hostname = std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    let rows: Vec<(&str, String)> = MACHINE_ROWS
        .iter()
        .map(|(name, task)| (*name, task.replace("HOSTNAME", &hostname)))
        .collect();
    let crontab = || {
        std::process::Command::new("crontab")
            .arg("-l")
            .output()
            .map(|o| o.stdout)
            .unwrap_or_default()
    };
    let (accounts, cron_before) = (std::fs::read("/etc/passwd").ok(), crontab());
    let ours = compare(&sb, &rows, |_| {});
    assert_eq!(std::fs::read("/etc/passwd").ok(), accounts, "{ours}");
    assert_eq!(crontab(), cron_before, "{ours}");
}
