//! The ssh connection against a real OpenSSH server on loopback (see
//! `sandball_e2e::sshd`): the shim and modules deployed once per host and reused by the
//! next run, unreachable hosts (closed port, refused key) and refused host keys
//! (changed, unknown) that leave the other hosts running, a silent host that times out,
//! raw, a killed shim, a shim that dies at start, a node of an architecture there is no
//! shim for, and become (with a shim of the become user's own).

use sandball_e2e::sshd::{Sshd, deployable_shim};
use sandball_e2e::users::{BECOME_USER, become_uid, become_user_ready};
use sandball_e2e::{HostRecap, Output, Sandbox};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Runs `playbook` over the sandbox's inventory with the deployable shim and debug logs
/// (they say what was uploaded).
fn run(sb: &Sandbox, playbook: &str) -> Output {
    run_with(sb, playbook, &[])
}

/// [`run`] with more command-line arguments.
fn run_with(sb: &Sandbox, playbook: &str, extra: &[&str]) -> Output {
    let pb = sb.write("play.yml", playbook);
    let out = sb
        .play(&pb, &sb.dir("work"), extra)
        .env("SANDBALL_SHIM", deployable_shim())
        .env("SANDBALL_LOG", "sandball=debug")
        .env("SSH_AUTH_SOCK", "")
        .limit(Duration::from_secs(300))
        .run();
    out.assert_no_panic();
    out
}

fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

const TASKS: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: reach
      ping:
    - name: touch
      file:
        path: "{{ work }}/{{ inventory_hostname }}"
        state: touch
    - name: look
      stat:
        path: "{{ work }}/{{ inventory_hostname }}"
      register: st
    - name: again
      ping:
"#;

#[test]
fn the_shim_and_modules_go_to_each_host_once_and_stay() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let hosts = ["n1", "n2", "n3"];
    let mut inv = String::from("[nodes]\n");
    for h in hosts {
        inv.push_str(&sshd.host_line_cold(h, &sb.path().join(format!("node-{h}")), ""));
    }
    sb.write("inventory.ini", &inv);

    let first = run(&sb, TASKS);
    first.assert_code(0);
    for h in hosts {
        assert_eq!(
            first.host(h),
            HostRecap {
                ok: 4,
                changed: 1,
                ..Default::default()
            },
            "{first}"
        );
        assert!(sb.path().join("work").join(h).is_file(), "{first}");
    }
    // One shim upload per host, one upload of the three modules (one request) per host.
    assert_eq!(
        first.stderr.matches("uploading the shim").count(),
        3,
        "{first}"
    );
    assert_eq!(
        first.stderr.matches("uploading modules modules=3 ").count(),
        3,
        "{first}"
    );

    let shim_sha = sha256(&deployable_shim());
    let mut inodes = vec![];
    for h in hosts {
        let cache = sb.path().join(format!("node-{h}"));
        let shim = cache.join("shim").join(&shim_sha).join("sandball-shim");
        assert_eq!(
            sha256(&shim),
            shim_sha,
            "the node's shim is the controller's"
        );
        let modules: Vec<_> = std::fs::read_dir(cache.join("modules")).unwrap().collect();
        assert_eq!(modules.len(), 3, "ping, file and stat on {h}");
        inodes.push(std::fs::metadata(&shim).unwrap().ino());
    }

    let second = run(&sb, TASKS);
    second.assert_code(0);
    assert!(!second.stderr.contains("uploading"), "{second}");
    for (h, ino) in hosts.iter().zip(inodes) {
        assert_eq!(second.host(h).ok, 4, "{second}");
        let shim = sb
            .path()
            .join(format!("node-{h}/shim/{shim_sha}/sandball-shim"));
        assert_eq!(
            std::fs::metadata(shim).unwrap().ino(),
            ino,
            "the shim was replaced"
        );
    }
}

#[test]
fn aliases_of_one_node_share_one_shim_upload() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let hosts = ["a1", "a2", "a3", "a4"];
    // Every alias reaches the same sshd as the same user, with the same cache.
    let cache = sb.path().join("node");
    let mut inv = String::from("[nodes]\n");
    for h in hosts {
        inv.push_str(&sshd.host_line(h, &cache, ""));
    }
    sb.write("inventory.ini", &inv);

    let first = run(&sb, TASKS);
    first.assert_code(0);
    for h in hosts {
        assert_eq!(first.host(h).ok, 4, "{first}");
    }
    assert_eq!(
        first.stderr.matches("uploading the shim").count(),
        1,
        "{first}"
    );
    let shim_sha = sha256(&deployable_shim());
    let shim = cache.join("shim").join(&shim_sha).join("sandball-shim");
    assert_eq!(
        sha256(&shim),
        shim_sha,
        "the node's shim is the controller's"
    );
}

/// Asserts that each of `hosts` was unreachable at the task `first` and at nothing
/// else; gives each one's `UNREACHABLE!` line of that task.
fn unreachable_at_first<'a>(out: &'a Output, hosts: &[&str]) -> impl Fn(&str) -> String + 'a {
    for h in hosts {
        assert_eq!(
            out.host(h),
            HostRecap {
                unreachable: 1,
                ..Default::default()
            },
            "{h}: {out}"
        );
    }
    let first = out.task_lines("first");
    move |h: &str| {
        first
            .iter()
            .find(|l| l.starts_with(&format!("fatal: [{h}]: UNREACHABLE!")))
            .unwrap_or_else(|| panic!("{h} is not UNREACHABLE:\n{out}"))
            .to_string()
    }
}

const PINGS: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: first
      ping:
    - name: second
      ping:
"#;

#[test]
fn unreachable_hosts_do_not_stop_the_others() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);
    // A port that accepts connections and never answers: the host must time out
    // without holding the others up.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    let node = sb.path().join("node");
    let inv = format!(
        "[nodes]\n{}{}{}{}",
        sshd.host_line("good", &node, ""),
        sshd.host_line("silent", &node, "ansible_ssh_timeout=2")
            .replace(
                &format!("ansible_port={}", sshd.port),
                &format!("ansible_port={silent_port}")
            ),
        sshd.host_line("closed", &node, "").replace(
            &format!("ansible_port={}", sshd.port),
            &format!("ansible_port={closed_port}")
        ),
        sshd.host_line_with(
            "badkey",
            &node,
            &sshd.known_hosts(),
            &sshd.stranger_key(),
            ""
        ),
    );
    sb.write("inventory.ini", &inv);
    let out = run(&sb, PINGS);
    out.assert_code(4);
    assert_eq!(
        out.host("good"),
        HostRecap {
            ok: 2,
            ..Default::default()
        },
        "{out}"
    );
    let line = unreachable_at_first(&out, &["closed", "badkey", "silent"]);
    assert!(line("closed").contains("Connection refused"), "{out}");
    assert!(line("badkey").contains("Permission denied"), "{out}");
    assert!(line("silent").contains("timed out"), "{out}");
    assert!(out.elapsed < Duration::from_secs(60), "{out}");
    // `-T` is the timeout of hosts whose variables give none.
    sb.write("inventory.ini", &inv.replace("ansible_ssh_timeout=2", ""));
    let out = run_with(&sb, PINGS, &["-T", "1", "-l", "silent"]);
    assert!(out.stdout.contains("timed out after 1s"), "{out}");
}

#[test]
fn changed_and_unknown_host_keys_are_refused() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let stranger =
        std::fs::read_to_string(format!("{}.pub", sshd.stranger_key().display())).unwrap();
    let key = stranger
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    let changed = sb.write(
        "changed_hosts",
        &format!("[127.0.0.1]:{} {key}\n", sshd.port),
    );
    let unknown = sb.write("unknown_hosts", "");
    let node = sb.path().join("node");
    let inv = format!(
        "[nodes]\n{}{}{}",
        sshd.host_line_with("changed", &node, &changed, &sshd.client_key(), ""),
        sshd.host_line_with("unknown", &node, &unknown, &sshd.client_key(), ""),
        sshd.host_line_with(
            "optout",
            &node,
            &changed,
            &sshd.client_key(),
            "ansible_host_key_checking=false"
        ),
    );
    sb.write("inventory.ini", &inv);
    let out = run(&sb, PINGS);
    out.assert_code(4);
    assert_eq!(out.host("optout").ok, 2, "{out}");
    assert_eq!(out.host("changed").unreachable, 1, "{out}");
    assert_eq!(out.host("unknown").unreachable, 1, "{out}");
    let first = out.task_lines("first").join("\n");
    assert!(
        first.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
            && first.contains(&format!("{}:1", changed.display())),
        "{out}"
    );
    assert!(first.contains("is not known"), "{out}");
}

const KILL: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: raw
      raw: echo raw on {{ inventory_hostname }}
      register: r
    - assert:
        that: r.stdout == "raw on " ~ inventory_hostname ~ "\n" and r.rc == 0
    - name: open the session
      ping:
    - name: kill the shim
      raw: pkill -KILL -f "[s]andball-shim serve --cache-dir {{ sandball_cache_dir }}"
    - name: after the kill
      ping:
      ignore_errors: true
    - name: a fresh session
      ping:
"#;

#[test]
fn raw_needs_no_shim_and_a_killed_shim_fails_one_task() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let inv = format!(
        "[nodes]\n{}",
        sshd.host_line("k1", &sb.path().join("node-k1"), "")
    );
    sb.write("inventory.ini", &inv);
    let out = run(&sb, KILL);
    out.assert_code(0);
    assert_eq!(
        out.host("k1"),
        HostRecap {
            ok: 6,
            changed: 2,
            ignored: 1,
            ..Default::default()
        },
        "{out}"
    );
    let failure = out.task_lines("after the kill").join("\n");
    assert!(failure.contains("MODULE FAILURE"), "{out}");
    // How the shim ended comes from the node (the channel's exit signal).
    assert!(failure.contains("the shim ended with signal KILL"), "{out}");
    assert_eq!(out.task_lines("a fresh session"), vec!["ok: [k1]"], "{out}");
}

/// Runs `tasks` on the one host `alias` of `sshd`, deploying `shim`.
fn run_one_with_shim(sshd: &Sshd, sb: &Sandbox, alias: &str, shim: &Path, tasks: &str) -> Output {
    let inv = format!(
        "[nodes]\n{}",
        sshd.host_line(alias, &sb.path().join(format!("node-{alias}")), "")
    );
    sb.write("inventory.ini", &inv);
    let pb = sb.write(
        "play.yml",
        &format!("- hosts: all\n  gather_facts: false\n  tasks:\n{tasks}"),
    );
    let out = sb
        .play(&pb, &sb.dir("work"), &[])
        .env("SANDBALL_SHIM", shim)
        .env("SSH_AUTH_SOCK", "")
        .limit(Duration::from_secs(120))
        .run();
    out.assert_no_panic();
    out
}

#[test]
fn a_node_without_a_shim_runs_legacy_modules_and_fails_component_tasks_naming_its_architecture() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    // The only shim the controller has is for aarch64 (an ELF header for it), and the
    // node is this machine: there is no shim for it.
    let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
    elf.resize(64, 0);
    elf[18] = if std::env::consts::ARCH == "aarch64" {
        0x3E
    } else {
        0xB7
    };
    let foreign = sb.path().join("foreign-shim");
    std::fs::write(&foreign, elf).unwrap();
    let theirs = if std::env::consts::ARCH == "aarch64" {
        "x86_64"
    } else {
        "aarch64"
    };
    let inv = format!(
        "[nodes]\n{}",
        sshd.host_line(
            "a1",
            &sb.path().join("node-a1"),
            "sandball_legacy_modules=command"
        )
    );
    sb.write("inventory.ini", &inv);
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n\
         \x20   - raw: uname -m\n\
         \x20   - name: legacy\n      command: echo classic\n\
         \x20   - name: component\n      ping:\n      ignore_errors: true\n\
         \x20   - name: legacy again\n      command: echo still\n",
    );
    let out = sb
        .play_with_core(&pb, &sb.dir("work"), &[])
        .env("SANDBALL_SHIM", &foreign)
        .env("SSH_AUTH_SOCK", "")
        .limit(Duration::from_secs(120))
        .run();
    out.assert_no_panic();
    out.assert_code(0);
    let recap = out.host("a1");
    assert_eq!(
        (
            recap.failed,
            recap.ignored,
            recap.unreachable,
            recap.changed
        ),
        (0, 1, 0, 3),
        "{out}"
    );
    // The component task fails, naming the node's architecture and the shims there are.
    let failure = out.task_lines("component").join("\n");
    let node = format!("is Linux {}", std::env::consts::ARCH);
    let has = format!("it has: Linux {theirs} ({})", foreign.display());
    assert!(
        failure.contains(&node) && failure.contains(&has) && failure.contains("SANDBALL_SHIM"),
        "{out}"
    );
    // Legacy modules run without a shim, warned about once for the host.
    assert_eq!(out.task_lines("legacy"), vec!["changed: [a1]"], "{out}");
    assert_eq!(
        out.task_lines("legacy again"),
        vec!["changed: [a1]"],
        "{out}"
    );
    let all = format!("{}{}", out.stdout, out.stderr);
    let warnings: Vec<&str> = all
        .lines()
        .filter(|l| l.contains("[WARNING]") && l.contains("no sandball-shim"))
        .collect();
    assert_eq!(warnings.len(), 1, "{out}");
    assert!(
        warnings[0].contains("a1: ") && warnings[0].contains("legacy modules run the classic way"),
        "{out}"
    );
}

#[test]
fn a_shim_that_dies_at_start_is_quoted() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    // A "shim" that passes the deployment check but dies as soon as it should serve.
    let shim = sb.write(
        "dying-shim",
        "#!/bin/sh\nif [ \"$1\" = version ]; then echo 'sandball-shim 0'; exit 0; fi\n\
         echo 'starting up' >&2\n\
         echo 'sandball-shim: cannot open the cache: the test says no' >&2\nexit 2\n",
    );
    std::fs::set_permissions(&shim, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = run_one_with_shim(&sshd, &sb, "d1", &shim, "    - name: first\n      ping:\n");
    out.assert_code(4);
    assert_eq!(out.host("d1").unreachable, 1, "{out}");
    let line = out.task_lines("first").join("\n");
    assert!(
        line.contains("the shim ended with exit status 2")
            && line
                .contains("starting up | sandball-shim: cannot open the cache: the test says no"),
        "{out}"
    );
}

#[test]
fn a_shim_that_cannot_run_on_the_node_is_named() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    // Uploaded and checked, but it does not run there (as on a noexec filesystem).
    let shim = sb.write("broken-shim", "#!/bin/sh\nexit 1\n");
    std::fs::set_permissions(&shim, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = run_one_with_shim(&sshd, &sb, "n1", &shim, "    - name: first\n      ping:\n");
    out.assert_code(4);
    assert_eq!(out.host("n1").unreachable, 1, "{out}");
    let line = out.task_lines("first").join("\n");
    assert!(
        line.contains("was uploaded to") && line.contains("but cannot run there"),
        "{out}"
    );
}

const BECOME: &str = r#"
- hosts: all
  gather_facts: false
  become_user: sandball-become
  tasks:
    - name: raw as the become user
      raw: id -un
      become: true
      register: who
    - name: raw through su
      raw: id -un
      become: true
      become_method: su
      register: su_who
    - assert:
        that:
          - who.stdout == "sandball-become\n"
          - su_who.stdout == "sandball-become\n"
    - name: a module as the become user
      become: true
      file:
        path: "{{ work }}/made-by-become"
        state: touch
    - name: a module as the connection user
      file:
        path: "{{ work }}/made-by-root"
        state: touch
    - stat:
        path: "{{ work }}/made-by-become"
      register: st
    - assert:
        that: st.stat.pw_name == "sandball-become"
"#;

#[test]
fn become_runs_raw_and_the_shim_session_as_another_user() {
    if !become_user_ready() {
        return;
    }
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let mode = |p: &Path, m: u32| {
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap()
    };
    // The work directory is open to the become user; the connection user's shim cache
    // is not (as in root's 0700 home): the become user gets a shim of its own, in its
    // own cache, deployed through become.
    mode(sb.path(), 0o755);
    let work = sb.dir("work");
    mode(&work, 0o777);
    let private = sb.dir("private");
    mode(&private, 0o700);
    let home = Command::new("sh")
        .args(["-c", &format!("echo ~{BECOME_USER}")])
        .output()
        .unwrap();
    let home = std::path::PathBuf::from(String::from_utf8_lossy(&home.stdout).trim());
    let become_cache = home.join(".sandball");
    let _ = std::fs::remove_dir_all(&become_cache);
    let inv = format!(
        "[nodes]\n{}",
        sshd.host_line(
            "b1",
            &private.join("node-b1"),
            "ansible_become_password=hunter2-not-shown"
        )
    );
    sb.write("inventory.ini", &inv);
    let become_uid = become_uid();
    for round in ["first", "second"] {
        let out = run_with(&sb, BECOME, &["-vvv"]);
        out.assert_code(0);
        assert_eq!(out.host("b1").failed, 0, "{round} run: {out}");
        let owner = |name: &str| std::fs::metadata(work.join(name)).unwrap().uid();
        assert_eq!(owner("made-by-become"), become_uid);
        assert_eq!(owner("made-by-root"), 0);
        assert!(
            !out.stdout.contains("hunter2") && !out.stderr.contains("hunter2"),
            "the become password was shown:\n{out}"
        );
        // `-vvv` shows the command that starts each shim session, the become user's
        // through sudo.
        assert!(out.stdout.contains("<b1> EXEC sudo -H -S "), "{out}");
        // Uploaded for each user once: the connection user's and the become user's.
        let uploads = out.stderr.matches("uploading the shim").count();
        assert_eq!(uploads, if round == "first" { 2 } else { 0 }, "{out}");
    }
    let shim_sha = sha256(&deployable_shim());
    let theirs = become_cache.join(format!("shim/{shim_sha}/sandball-shim"));
    assert_eq!(sha256(&theirs), shim_sha, "the become user's shim");
    assert_eq!(std::fs::metadata(&theirs).unwrap().uid(), become_uid);
    // Nothing of the connection user's cache was opened up for the become user.
    assert_eq!(
        std::fs::metadata(&private).unwrap().mode() & 0o777,
        0o700,
        "the private directory's mode changed"
    );
}

const COPY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: copy from the controller
      copy:
        src: data.bin
        dest: "{{ work }}/{{ inventory_hostname }}.bin"
"#;

#[test]
fn copy_sends_a_controller_file_once_per_host_in_chunks() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    // Three and a bit chunks of binary data.
    let data: Vec<u8> = (0..(3 << 20) + 12345u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::create_dir_all(sb.path().join("files")).unwrap();
    std::fs::write(sb.path().join("files/data.bin"), &data).unwrap();
    let mut inv = String::from("[nodes]\n");
    for h in ["c1", "c2"] {
        inv.push_str(&sshd.host_line(h, &sb.path().join(format!("node-{h}")), ""));
    }
    sb.write("inventory.ini", &inv);

    let first = run(&sb, COPY);
    first.assert_code(0);
    assert_eq!(first.stderr.matches("sending a file").count(), 2, "{first}");
    for h in ["c1", "c2"] {
        assert_eq!(first.host(h).changed, 1, "{first}");
        let copied = std::fs::read(sb.path().join(format!("work/{h}.bin"))).unwrap();
        assert!(copied == data, "the copy on {h} differs");
    }

    // Staged files last as long as their session: nothing of the data stays on the
    // nodes, and the next run sends it again.
    let staged_left = |h: &str| {
        let files = sb.path().join(format!("node-{h}/files"));
        std::fs::read_dir(&files).map_or(0, |d| d.count())
    };
    for h in ["c1", "c2"] {
        assert_eq!(staged_left(h), 0, "files staged on {h} were left");
    }
    let second = run(&sb, COPY);
    second.assert_code(0);
    assert_eq!(
        second.stderr.matches("sending a file").count(),
        2,
        "{second}"
    );
    for h in ["c1", "c2"] {
        assert_eq!(staged_left(h), 0, "files staged on {h} were left");
        assert_eq!(
            second.host(h),
            HostRecap {
                ok: 1,
                ..Default::default()
            },
            "{second}"
        );
    }
}

#[test]
fn a_password_logs_in_when_no_key_is_accepted() {
    if !become_user_ready() {
        return;
    }
    sandball_e2e::users::set_password(BECOME_USER, "pw-not-shown-42");
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let mode = |p: &Path, m: u32| {
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap()
    };
    mode(sb.path(), 0o755);
    // The node's cache belongs to the login user (a cache others can write is refused).
    let node = sb.dir("node-p1");
    std::os::unix::fs::chown(&node, Some(become_uid()), None).unwrap();
    mode(&node, 0o700);
    let inv = format!(
        "[nodes]\n{}",
        sshd.host_line_with(
            "p1",
            &node,
            &sshd.known_hosts(),
            &sshd.stranger_key(),
            &format!("ansible_user={BECOME_USER} ansible_password=pw-not-shown-42"),
        )
    );
    sb.write("inventory.ini", &inv);
    let out = run_with(&sb, PINGS, &["-vvv"]);
    out.assert_code(0);
    assert_eq!(out.host("p1").ok, 2, "{out}");
    assert!(
        !out.stdout.contains("pw-not-shown") && !out.stderr.contains("pw-not-shown"),
        "the password was shown:\n{out}"
    );
}

#[test]
fn a_failed_upload_names_the_cause_instead_of_hanging() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    // The cache cannot be created under a regular file: the upload fails on the node
    // while the controller still has megabytes of shim to send.
    let blocker = sb.write("not-a-dir", "");
    let inv = format!(
        "[nodes]\n{}",
        sshd.host_line("u1", &blocker.join("cache"), "")
    );
    sb.write("inventory.ini", &inv);
    let out = run(&sb, PINGS);
    out.assert_code(4);
    let line = out.task_lines("first").join("\n");
    assert!(
        line.contains("cannot upload sandball-shim") && line.contains("Not a directory"),
        "{out}"
    );
    assert!(out.elapsed < Duration::from_secs(60), "{out}");
}

/// The `connection`, `port` and `remote_user` keywords, beneath the host's variables as
/// Ansible ranks them: a keyword is used where the host sets no such variable.
const CONNECTION_KEYWORDS: &str = r#"
- name: by keyword
  hosts: all
  gather_facts: false
  port: PORT
  tasks:
    - name: port from the keyword
      ping:
      when: inventory_hostname == 'portless'
    - name: the variable wins over the keyword
      ping:
      port: 1
      when: inventory_hostname == 'pinned'
    - name: a user nobody knows
      ping:
      remote_user: sandball-nobody
      when: inventory_hostname == 'portless'
    - name: the user variable wins
      ping:
      remote_user: sandball-nobody
      when: inventory_hostname == 'pinned'
- name: local
  hosts: faraway
  gather_facts: false
  connection: local
  tasks:
    - name: runs on the controller
      ping:
"#;

#[test]
fn connection_keywords_yield_to_host_variables_as_in_ansible() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let node = sb.path().join("node");
    let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
    let inv = format!(
        "[nodes]\n{}{}[far]\nfaraway ansible_host=203.0.113.9\n",
        sshd.host_line("portless", &node, "")
            .replace(&format!("ansible_port={} ", sshd.port), ""),
        sshd.host_line("pinned", &node, &format!("ansible_user={user}")),
    );
    sb.write("inventory.ini", &inv);
    let out = run(
        &sb,
        &CONNECTION_KEYWORDS.replace("PORT", &sshd.port.to_string()),
    );
    assert!(
        out.task_lines("port from the keyword")
            .contains(&"ok: [portless]"),
        "{out}"
    );
    assert!(
        out.task_lines("the variable wins over the keyword")
            .contains(&"ok: [pinned]"),
        "{out}"
    );
    assert!(
        out.task_lines("a user nobody knows")
            .iter()
            .any(|l| l.starts_with("fatal: [portless]: UNREACHABLE!")),
        "{out}"
    );
    assert!(
        out.task_lines("the user variable wins")
            .contains(&"ok: [pinned]"),
        "{out}"
    );
    assert!(
        out.task_lines("runs on the controller")
            .contains(&"ok: [faraway]"),
        "{out}"
    );
}

/// `-c`, `-u` and `--private-key` come last, beneath the hosts' variables (and the
/// plays' keywords), as in Ansible.
#[test]
fn command_line_connection_options_come_last_as_in_ansible() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let node = sb.path().join("node");
    let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
    let key = sshd.client_key();
    let keyless = sshd.host_line("keyless", &node, "").replace(
        &format!("ansible_ssh_private_key_file={} ", key.display()),
        "",
    );
    assert!(!keyless.contains("private_key"), "{keyless}");
    let inv = format!(
        "[nodes]\n{keyless}{}{}[far]\nfaraway ansible_host=203.0.113.9\n",
        sshd.host_line("userless", &node, ""),
        sshd.host_line("pinned", &node, &format!("ansible_user={user}")),
    );
    sb.write("inventory.ini", &inv);
    let ping = |hosts: &str| {
        format!(
            "- hosts: {hosts}\n  gather_facts: false\n  tasks:\n    - name: reach\n      ping:\n"
        )
    };

    let key_arg = key.display().to_string();
    let out = run_with(&sb, &ping("keyless"), &["--private-key", &key_arg]);
    assert_eq!(out.task_lines("reach"), vec!["ok: [keyless]"], "{out}");

    let out = run_with(&sb, &ping("userless:pinned"), &["-u", "sandball-nobody"]);
    let lines = out.task_lines("reach");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("fatal: [userless]: UNREACHABLE!")),
        "{out}"
    );
    assert!(lines.contains(&"ok: [pinned]"), "{out}");

    let out = run_with(&sb, &ping("faraway"), &["-c", "local"]);
    assert_eq!(out.task_lines("reach"), vec!["ok: [faraway]"], "{out}");
}

/// `reboot` on a stand-in node: the "reboot" writes a new boot id a moment later (and
/// kills the shim, as a real reboot would); the action waits, over fresh connections,
/// until the id changes and the test command answers, and the next task opens a new
/// session. On the local connection it refuses, as Ansible does.
#[test]
fn reboot_waits_for_a_new_boot_and_refuses_the_controller() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let boot_id = sb.write("boot_id", "first\n");
    let inv = format!(
        "[nodes]\n{}\n[local]\ncontroller ansible_connection=local\n",
        sshd.host_line("r1", &sb.path().join("node-r1"), "")
    );
    sb.write("inventory.ini", &inv);
    let play = format!(
        r#"
- hosts: r1
  gather_facts: false
  tasks:
    - name: a module before
      ping:
    - name: reboot it
      reboot:
        boot_time_command: cat {id}
        reboot_command: (sleep 1; pkill -KILL -f {node}; echo second > {id}) >/dev/null 2>&1 &
        test_command: test -s {id}
        reboot_timeout: 60
      register: r
    - name: what reboot said
      debug:
        msg: "{{{{ r.rebooted }}}} {{{{ r.changed }}}} {{{{ r.elapsed is number }}}}"
    - name: a module after
      ping:
- hosts: controller
  gather_facts: false
  tasks:
    - name: not the controller
      reboot:
      ignore_errors: true
"#,
        id = boot_id.display(),
        // A pattern that matches the shim's command line, not the shell's running it.
        node = sb.path().join("node-r[1]/").display()
    );
    let out = run(&sb, &play);
    out.assert_code(0);
    assert_eq!(
        std::fs::read_to_string(&boot_id).unwrap(),
        "second\n",
        "{out}"
    );
    assert_eq!(out.task_lines("reboot it"), vec!["changed: [r1]"], "{out}");
    out.assert_stdout_has("\"msg\": \"True True True\"");
    assert_eq!(out.task_lines("a module after"), vec!["ok: [r1]"], "{out}");
    out.assert_stdout_has("Running reboot with local connection would reboot the control node.");
}

#[test]
fn jump_hosts_and_proxy_commands_carry_the_connection_and_other_options_are_refused() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let node = sb.path().join("node");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);
    let marker = sb.path().join("proxy-command-ran");
    // Each host's own ssh arguments, after the known_hosts file the others use.
    let with_args = |alias: &str, args: &str| {
        sshd.host_line(alias, &node, "").replace(
            "ansible_ssh_common_args='-o UserKnownHostsFile=",
            &format!("ansible_ssh_common_args='{args} -o UserKnownHostsFile="),
        )
    };
    let inv = format!(
        "[nodes]\n{}{}{}{}{}",
        with_args(
            "jumped",
            &format!(
                "-o ProxyJump=root@127.0.0.1:{} -o ControlMaster=auto -C",
                sshd.port
            )
        ),
        with_args(
            "jumped_twice",
            &format!("-J root@127.0.0.1:{0},root@127.0.0.1:{0}", sshd.port)
        ),
        with_args("closed_jump", &format!("-J root@127.0.0.1:{closed_port}")),
        // OpenSSH's own client as the proxy, the usual way (`ssh -W`).
        with_args(
            "proxied",
            &format!(
                "-o \"ProxyCommand=sh -c \\\"touch {}; exec ssh -q -o BatchMode=yes -o UserKnownHostsFile={} -i {} -p %p -W %h:%p root@127.0.0.1\\\"\"",
                marker.display(),
                sshd.known_hosts().display(),
                sshd.client_key().display(),
            )
        ),
        with_args("forwarding", "-o ForwardAgent=yes"),
    );
    sb.write("inventory.ini", &inv);
    let out = run(&sb, PINGS);
    out.assert_code(4);
    for h in ["jumped", "jumped_twice", "proxied"] {
        assert_eq!(
            out.host(h),
            HostRecap {
                ok: 2,
                ..Default::default()
            },
            "{h}: {out}"
        );
    }
    assert!(marker.exists(), "the ProxyCommand did not run: {out}");
    let line = unreachable_at_first(&out, &["closed_jump", "forwarding"]);
    // Had the jump been passed over, the host would have been reached directly.
    assert!(
        line("closed_jump").contains(&format!(
            "through the jump host root@127.0.0.1:{closed_port}"
        )),
        "{out}"
    );
    assert!(
        line("forwarding").contains("the ssh option 'forwardagent' is not honoured"),
        "{out}"
    );
}

#[test]
fn the_users_ssh_config_names_the_address_port_and_key() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let node = sb.path().join("node");
    // The name, port and key come from ~/.ssh/config alone.
    let home = sb.dir("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(
        home.join(".ssh/config"),
        format!(
            "Host via-config\n  HostName 127.0.0.1\n  Port {}\n  IdentityFile {}\n",
            sshd.port,
            sshd.client_key().display()
        ),
    )
    .unwrap();
    let line = sshd
        .host_line("configured", &node, "")
        .replace(
            &format!("ansible_host=127.0.0.1 ansible_port={}", sshd.port),
            "ansible_host=via-config",
        )
        .replace(
            &format!(
                "ansible_ssh_private_key_file={} ",
                sshd.client_key().display()
            ),
            "",
        );
    assert!(
        !line.contains("ansible_port") && !line.contains("private_key"),
        "{line}"
    );
    sb.write("inventory.ini", &format!("[nodes]\n{line}"));
    let pb = sb.write("play.yml", PINGS);
    let out = sb
        .play(&pb, &sb.dir("work"), &[])
        .env("SANDBALL_SHIM", deployable_shim())
        .env("SSH_AUTH_SOCK", "")
        .env("HOME", &home)
        .limit(Duration::from_secs(300))
        .run();
    out.assert_no_panic().assert_code(0);
    assert_eq!(
        out.host("configured"),
        HostRecap {
            ok: 2,
            ..Default::default()
        },
        "{out}"
    );
}
