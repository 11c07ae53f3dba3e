//! Paths, programs and `/proc`: attacks on what a grant opens once the node resolves
//! it. Text that climbs out with `..`, symlinks planted through the host interface or
//! found on the way, a file grant whose directory is missing (which used to open an
//! ancestor), grants that overlap sandball's own cache and shim, `/proc` files that
//! lead to the shim's environment, and programs that would inherit a loader variable,
//! the session descriptor or a working directory outside the grant, or leave a
//! process running. Each attempt must fail with a message naming the cause, and
//! nothing outside the grant may change or leak.

use super::{SECRET, failure};
use sandball_e2e::tree::snapshot;
use sandball_e2e::{Binaries, Output, Sandbox};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One attack as a task: its name, the adversary's arguments and the task's
/// `capabilities:` (YAML, with `WORK`, `CACHE` and `SHIMDIR` to fill in), and what
/// its failure message must say.
struct Attack {
    task: &'static str,
    args: &'static str,
    grant: &'static str,
    expect: &'static [&'static str],
}

/// The places an attack is written against.
struct Places {
    work: PathBuf,
    cache: PathBuf,
    shim_dir: PathBuf,
}

impl Places {
    fn fill(&self, text: &str) -> String {
        text.replace("WORK", &self.work.to_string_lossy())
            .replace("CACHE", &self.cache.to_string_lossy())
            .replace("SHIMDIR", &self.shim_dir.to_string_lossy())
    }
}

/// What the adversary may be granted (`allow`), and what is denied whatever the task
/// asks.
const POLICY: &str = r#"
[[policy.rule]]
modules = ["adversary"]
allow = [
  {kind = "fs", path = "WORK/allowed", access = "read-write", scope = "tree"},
  {kind = "fs", path = "WORK/*", access = "read", scope = "tree"},
  {kind = "fs", path = "/proc/loadavg", access = "read"},
  {kind = "fs", path = "CACHE", access = "read-write", scope = "tree"},
  {kind = "fs", path = "SHIMDIR", access = "read-write", scope = "tree"},
  {kind = "exec", program = "/bin/echo"},
  {kind = "exec", program = "/bin/bash"},
  {kind = "exec", program = "/bin/sh"},
]
deny = [{kind = "fs", path = "WORK/secret", access = "read", scope = "tree"}]
limits = {wall_time_ms = 10000}
"#;

/// `work/{allowed/{ok.txt, y -> ../secret}, secret/secret.txt, outside/{victim.txt,
/// plant.sh}}`: `y` stands for a link an earlier run planted.
fn places(sb: &Sandbox) -> Places {
    let work = std::fs::canonicalize(sb.dir("work")).unwrap();
    std::fs::create_dir_all(work.join("allowed")).unwrap();
    std::fs::write(work.join("allowed/ok.txt"), "mine\n").unwrap();
    std::fs::create_dir_all(work.join("secret")).unwrap();
    std::fs::write(work.join("secret/secret.txt"), format!("{SECRET}\n")).unwrap();
    std::fs::create_dir_all(work.join("outside")).unwrap();
    std::fs::write(work.join("outside/victim.txt"), "original\n").unwrap();
    std::fs::write(
        work.join("outside/plant.sh"),
        format!("touch {}\n", work.join("outside/planted-ran").display()),
    )
    .unwrap();
    std::os::unix::fs::symlink(work.join("secret"), work.join("allowed/y")).unwrap();
    let cache = sandball_e2e::binaries::workspace_root().join("target/e2e-shim-cache");
    std::fs::create_dir_all(&cache).unwrap();
    let shim_dir = Binaries::get()
        .shim
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    Places {
        cache: std::fs::canonicalize(&cache).unwrap(),
        shim_dir: std::fs::canonicalize(shim_dir).unwrap(),
        work,
    }
}

fn playbook(attacks: &[Attack], places: &Places, tail: &str) -> String {
    let mut yaml =
        String::from("- name: adversarial\n  hosts: all\n  gather_facts: false\n  tasks:\n");
    for a in attacks {
        yaml.push_str(&places.fill(&format!(
            "    - name: {}\n      adversary: {}\n      capabilities: {}\n      ignore_errors: true\n\n",
            a.task, a.args, a.grant
        )));
    }
    yaml.push_str(&places.fill(tail));
    yaml.push_str("    - name: the others go on\n      ping:\n");
    yaml
}

/// Runs the attacks (then `tail`'s tasks and a ping) on two hosts and checks that
/// each was refused with its message, that nothing escaped or changed in `work` or
/// the cache, and that the secret appears in no output. Returns the output and the
/// number of attacks contained.
fn run(sb: &Sandbox, places: &Places, attacks: &[Attack], tail: &str) -> (Output, usize) {
    let pb = sb.write("play.yml", &playbook(attacks, places, tail));
    let policy = sb.write("policy.toml", &places.fill(POLICY));
    let before = snapshot(&places.work);
    let cache_before = std::fs::read_dir(&places.cache).map(|d| d.count()).ok();
    let out = sb
        .play(&pb, &places.work, &["--policy", policy.to_str().unwrap()])
        .env("SANDBALL_MODULE_PATH", Binaries::fixtures())
        .env("SANDBALL_ADVERSARY_SECRET", SECRET)
        .run();
    out.assert_no_panic().assert_code(0);
    let mut contained = 0;
    for a in attacks {
        for host in ["alpha", "beta"] {
            let msg = failure(&out, a.task, host)
                .unwrap_or_else(|| panic!("{:?} was not refused on {host}:\n{out}", a.task));
            for word in a.expect {
                let word = places.fill(word);
                assert!(
                    msg.contains(&word),
                    "{:?} on {host}: the message lacks {word:?}: {msg}",
                    a.task
                );
            }
        }
        contained += 1;
    }
    assert!(!out.stdout.contains("\"escaped\""), "{out}");
    assert!(!out.stdout.contains(SECRET), "the secret leaked:\n{out}");
    assert!(!out.stderr.contains(SECRET), "the secret leaked:\n{out}");
    assert_eq!(
        snapshot(&places.work),
        before,
        "the work tree changed:\n{out}"
    );
    assert_eq!(
        std::fs::read_dir(&places.cache).map(|d| d.count()).ok(),
        cache_before,
        "the cache changed:\n{out}"
    );
    for host in ["alpha", "beta"] {
        assert!(
            out.task_lines("the others go on")
                .iter()
                .any(|l| l.starts_with(&format!("ok: [{host}]"))),
            "{host} did not go on:\n{out}"
        );
        assert_eq!(out.host(host).failed, 0, "{out}");
    }
    (out, contained)
}

#[test]
fn paths_are_matched_and_opened_only_once_resolved() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let places = places(&sb);
    let attacks = [
        Attack {
            task: "climb past the deny rule with dot-dot",
            args: "{attack: read, path: 'WORK/secret/secret.txt'}",
            grant: "[{kind: fs, path: 'WORK/allowed/../secret', access: read, scope: tree}]",
            expect: &["cannot read WORK/secret/secret.txt"],
        },
        Attack {
            task: "plant an absolute symlink through the host interface",
            args: "{attack: plant, path: 'WORK/allowed/x', target: 'WORK/secret'}",
            grant: "[{kind: fs, path: 'WORK/allowed', access: read-write, scope: tree}]",
            expect: &["cannot plant", "a link may only point inside"],
        },
        Attack {
            task: "plant a climbing symlink through the host interface",
            args: "{attack: plant, path: 'WORK/allowed/x', target: '../outside/victim.txt'}",
            grant: "[{kind: fs, path: 'WORK/allowed', access: read-write, scope: tree}]",
            expect: &["cannot plant", "WORK/outside/victim.txt"],
        },
        Attack {
            task: "read through a planted symlink under only",
            args: "{attack: read, path: 'WORK/allowed/y/secret.txt'}",
            grant: "{add: [{kind: fs, path: 'WORK/allowed/y', access: read, scope: tree}], only: [{kind: fs, path: 'WORK/allowed/y', access: read, scope: tree}]}",
            expect: &["resolves to WORK/secret through a symlink"],
        },
        Attack {
            task: "write through a planted symlink",
            args: "{attack: write, path: 'WORK/allowed/y/new.txt'}",
            grant: "[{kind: fs, path: 'WORK/allowed/y/new.txt', access: read-write}]",
            expect: &["resolves to WORK/secret through a symlink"],
        },
    ];
    let (_, contained) = run(&sb, &places, &attacks, "");
    assert!(!places.work.join("allowed/x").exists());
    assert_eq!(contained, attacks.len());
    eprintln!(
        "adversarial: {} attempts tried, {contained} contained",
        attacks.len()
    );
}

#[test]
fn a_file_grant_opens_its_own_directory_only() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let places = places(&sb);
    let attacks = [
        Attack {
            task: "write beside the nearest existing ancestor",
            args: "{attack: write, path: 'WORK/allowed/sibling.txt'}",
            grant: "[{kind: fs, path: 'WORK/allowed/missing/deeper/file', access: read-write}]",
            expect: &["cannot write WORK/allowed/sibling.txt"],
        },
        Attack {
            task: "write the granted file whose directory is missing",
            args: "{attack: write, path: 'WORK/allowed/missing/deeper/file'}",
            grant: "[{kind: fs, path: 'WORK/allowed/missing/deeper/file', access: read-write}]",
            expect: &["cannot write WORK/allowed/missing/deeper/file"],
        },
    ];
    let (_, contained) = run(&sb, &places, &attacks, "");
    assert!(!places.work.join("allowed/sibling.txt").exists());
    assert!(!places.work.join("allowed/missing").exists());
    assert_eq!(contained, attacks.len());

    // The audit says what the shim opens: the file's own directory, or an empty
    // read-only stand-in.
    let pb = sb.path().join("play.yml");
    let policy = sb.path().join("policy.toml");
    let out = sb
        .sandball([
            "audit",
            "playbook",
            pb.to_str().unwrap(),
            "-i",
            sb.path().join("inventory.ini").to_str().unwrap(),
            "--policy",
            policy.to_str().unwrap(),
            "-e",
            &format!("work={}", places.work.display()),
        ])
        .env("SANDBALL_MODULE_PATH", Binaries::fixtures())
        .run();
    out.assert_no_panic().assert_code(0);
    let opens = places.fill(
        "opens its directory WORK/allowed/missing/deeper, or an empty read-only stand-in where it does not exist",
    );
    assert!(out.stdout.contains(&opens), "{out}");
    assert!(!out.stdout.contains("(its directory)"), "{out}");
    eprintln!(
        "adversarial: {} attempts tried, {contained} contained",
        attacks.len()
    );
}

#[test]
fn sandballs_own_files_are_never_granted_for_writing() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let places = places(&sb);
    let attacks = [
        Attack {
            task: "write into the node cache",
            args: "{attack: write, path: 'CACHE/planted.cwasm'}",
            grant: "[{kind: fs, path: 'CACHE', access: read-write, scope: tree}]",
            expect: &["overlaps sandball's own CACHE"],
        },
        Attack {
            task: "replace the shim beside it",
            args: "{attack: write, path: 'SHIMDIR/planted'}",
            grant: "[{kind: fs, path: 'SHIMDIR/sandball-shim', access: read-write}]",
            expect: &["overlaps sandball's own", "sandball-shim"],
        },
    ];
    let (_, contained) = run(&sb, &places, &attacks, "");
    assert!(!places.cache.join("planted.cwasm").exists());
    assert!(!places.shim_dir.join("planted").exists());
    eprintln!(
        "adversarial: {} attempts tried, {contained} contained",
        attacks.len()
    );
}

#[test]
fn proc_grants_never_expose_the_shims_environment() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let places = places(&sb);
    let loadavg = "[{kind: fs, path: /proc/loadavg, access: read}]";
    let attacks = [
        Attack {
            task: "read /proc/self/environ beside /proc/loadavg",
            args: "{attack: read, path: /proc/self/environ}",
            grant: loadavg,
            expect: &["cannot read /proc/self/environ"],
        },
        Attack {
            task: "read /proc/thread-self/environ beside /proc/loadavg",
            args: "{attack: read, path: /proc/thread-self/environ}",
            grant: loadavg,
            expect: &["cannot read /proc/thread-self/environ"],
        },
        Attack {
            task: "read init's environment beside /proc/loadavg",
            args: "{attack: read, path: /proc/1/environ}",
            grant: loadavg,
            expect: &["cannot read /proc/1/environ"],
        },
    ];
    // The granted file itself still reads.
    let tail = "    - name: read the granted file
      adversary: {attack: read, path: /proc/loadavg}
      capabilities: [{kind: fs, path: /proc/loadavg, access: read}]
      register: load

    - name: show it
      debug:
        msg: \"load={{ load.content | trim }}\"

";
    let (out, contained) = run(&sb, &places, &attacks, tail);
    let shown = out.task_lines("show it").join("\n");
    assert!(
        shown.contains("load=") && shown.split("load=").nth(1).is_some_and(|l| l.contains('/')),
        "/proc/loadavg did not read:\n{out}"
    );
    eprintln!(
        "adversarial: {} attempts tried, {contained} contained",
        attacks.len()
    );
}

#[test]
fn programs_start_clean_alone_and_inside_the_grant() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let places = places(&sb);
    let read_work = "[{kind: fs, path: 'WORK/allowed', access: read, scope: tree}, {kind: exec, program: /bin/echo}, {kind: exec, program: /bin/bash}, {kind: exec, program: /bin/sh}]";
    let attacks = [
        Attack {
            task: "preload a library into a granted echo",
            args: "{attack: exec, argv: [/bin/echo, hi], env: {LD_PRELOAD: 'WORK/outside/evil.so'}}",
            grant: read_work,
            expect: &["setting LD_PRELOAD for /bin/echo refused"],
        },
        Attack {
            task: "make the loader write a file",
            args: "{attack: exec, argv: [/bin/echo, hi], env: {LD_DEBUG: all, LD_DEBUG_OUTPUT: 'WORK/outside/debug'}}",
            grant: read_work,
            expect: &["refused", "can never be set by a module"],
        },
        Attack {
            task: "run a script through BASH_ENV",
            args: "{attack: exec, argv: [/bin/bash, -c, 'true'], env: {BASH_ENV: 'WORK/outside/plant.sh'}}",
            grant: read_work,
            expect: &["setting BASH_ENV for /bin/bash refused"],
        },
        Attack {
            task: "run in a directory outside the grant",
            args: "{attack: exec, argv: [/bin/sh, -c, 'touch planted-ran'], cwd: 'WORK/outside'}",
            grant: read_work,
            expect: &["working directory must lie inside a read grant"],
        },
        Attack {
            task: "run in a directory reached through a symlink",
            args: "{attack: exec, argv: [/bin/sh, -c, 'touch planted-ran'], cwd: 'WORK/allowed/y'}",
            grant: read_work,
            expect: &["which resolves to WORK/secret", "working directory"],
        },
    ];
    // A granted shell writes to every descriptor above stderr it might have
    // inherited (the shim's session among them) and leaves a process behind.
    let tail = "    - name: write to inherited descriptors
      adversary:
        attack: exec
        argv: [/bin/sh, -c, 'for fd in 3 4 5 6 7 8 9; do if (echo \"{}\" >&$fd) 2>/dev/null; then echo \"open:$fd\"; fi; done; (sleep 2; touch WORK/outside/late) >/dev/null 2>&1 </dev/null & echo done']
      capabilities: [{kind: exec, program: /bin/sh}]
      register: fds

    - name: show them
      debug:
        msg: \"fds={{ fds.stdout | trim }}\"

";
    let (out, contained) = run(&sb, &places, &attacks, tail);
    let shown = out.task_lines("show them").join("\n");
    assert!(shown.contains("fds=done"), "{out}");
    assert!(
        !shown.contains("open:"),
        "a descriptor was inherited:\n{out}"
    );
    std::thread::sleep(Duration::from_millis(3000));
    assert!(
        !places.work.join("outside/late").exists(),
        "a background process outlived the run"
    );
    assert!(!places.work.join("outside/planted-ran").exists());
    assert!(!places.work.join("outside/debug").exists());
    let tried = attacks.len() + 2;
    eprintln!(
        "adversarial: {tried} attempts tried, {} contained",
        contained + 2
    );
}
