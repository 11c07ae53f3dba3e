//! Faults in the middle of a run, each made by the test and compared with
//! ansible-playbook where the behaviour is meant to match: an SSH connection cut while
//! a task runs (through a loopback proxy, see `sandball_e2e::proxy`); a full disk under
//! `copy` and `template` (a small tmpfs), whose old files must survive whole; an sshd
//! refusing a burst of logins (`MaxStartups`), which retries must get through; the
//! node's shim killed while a module runs; a node that never answers, ended by the
//! connection timeout (`-T`); a module that sleeps forever and a node that stops
//! answering mid-run, each ended by the task `timeout`.

use sandball_e2e::processes::ended_within;
use sandball_e2e::proxy::{Proxy, Shape};
use sandball_e2e::sshd::{Sshd, deployable_shim};
use sandball_e2e::{Invocation, Output, Sandbox};
use std::path::Path;
use std::time::{Duration, Instant};

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: a task the cut falls into
      command: sh -c 'touch {{ work }}/started-{{ inventory_hostname }} && sleep 4'
    - name: the others go on
      command: touch {{ work }}/after-{{ inventory_hostname }}
"#;

/// Three hosts on one sshd, each through a proxy of its own; the inventory.
fn fleet(sshd: &Sshd, sb: &Sandbox, proxies: &[Proxy], python: bool) -> Vec<String> {
    let hosts: Vec<String> = (1..=proxies.len()).map(|i| format!("n{i}")).collect();
    let mut inv = String::from("[nodes]\n");
    for (h, p) in hosts.iter().zip(proxies) {
        sshd.known_also_at(p.port());
        let extra = if python {
            format!(
                "ansible_python_interpreter={}",
                sandball_e2e::binaries::ansible_python().display()
            )
        } else {
            String::new()
        };
        inv.push_str(
            &sshd
                .host_line_warm(h, &sb.path().join(format!("node-{h}")), &extra)
                .replace(
                    &format!("ansible_port={}", sshd.port),
                    &format!("ansible_port={}", p.port()),
                ),
        );
    }
    sb.write("inventory.ini", &inv);
    hosts
}

/// Runs `run`, cutting `proxy`'s connections once every host has started the first
/// task.
fn cut_mid_task(run: Invocation, proxy: &Proxy, work: &Path, hosts: &[String]) -> Output {
    let started = || {
        hosts
            .iter()
            .all(|h| work.join(format!("started-{h}")).exists())
    };
    let cutter = std::thread::scope(|s| {
        let handle = s.spawn(|| {
            let deadline = Instant::now() + Duration::from_secs(100);
            while !started() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            proxy.cut()
        });
        let out = run.limit(Duration::from_secs(150)).run();
        (out, handle.join().unwrap_or(0))
    });
    let (out, cut) = cutter;
    assert!(cut > 0, "nothing was cut:\n{out}");
    out
}

#[test]
fn a_connection_cut_mid_task_makes_its_host_unreachable_and_the_others_go_on() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let proxies: Vec<Proxy> = (0..3).map(|_| Proxy::start(sshd.port)).collect();
    let hosts = fleet(&sshd, &sb, &proxies, false);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", PLAY);
    let run = sb
        .play(&pb, &work, &[])
        .env("SANDBALL_SHIM", deployable_shim())
        .env("SSH_AUTH_SOCK", "");
    let out = cut_mid_task(run, &proxies[1], &work, &hosts);
    out.assert_no_panic().assert_code(4);
    let cut = out.host("n2");
    assert_eq!((cut.unreachable, cut.ok, cut.failed), (1, 0, 0), "{out}");
    for h in ["n1", "n3"] {
        let r = out.host(h);
        assert_eq!((r.ok, r.unreachable, r.failed), (2, 0, 0), "{h}:\n{out}");
        assert!(work.join(format!("after-{h}")).exists(), "{h}:\n{out}");
    }
    assert!(!work.join("after-n2").exists(), "{out}");
    let line = out
        .task_lines("a task the cut falls into")
        .into_iter()
        .find(|l| l.starts_with("fatal: [n2]: UNREACHABLE!"))
        .unwrap_or_else(|| panic!("n2 was not unreachable:\n{out}"));
    assert!(line.contains("\"unreachable\": true"), "{line}");

    // The next run works.
    let again = sb
        .play(&pb, &work, &[])
        .env("SANDBALL_SHIM", deployable_shim())
        .env("SSH_AUTH_SOCK", "")
        .run();
    again.assert_no_panic().assert_code(0);

    // ansible-playbook reports the same.
    let reference = Sandbox::new();
    let proxies: Vec<Proxy> = (0..3).map(|_| Proxy::start(sshd.port)).collect();
    let hosts = fleet(&sshd, &reference, &proxies, true);
    let work = reference.dir("work");
    let pb = reference.write("play.yml", PLAY);
    if let Some(run) = reference.ansible_play(&pb, &work, &[]) {
        let theirs = cut_mid_task(run.env("SSH_AUTH_SOCK", ""), &proxies[1], &work, &hosts);
        out.assert_same_recap_as(&theirs);
        theirs.assert_code(4);
    }
}

/// A small tmpfs mounted for one test, unmounted when dropped.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(at).expect("mount point");
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok,
            "cannot mount a tmpfs at {} (the tests run as root)",
            at.display()
        );
        Tmpfs(at.to_path_buf())
    }

    /// Fills it to the last byte.
    fn fill(&self) {
        let mut f = std::fs::File::create(self.0.join("filler")).expect("filler");
        let block = vec![0u8; 4096];
        while std::io::Write::write_all(&mut f, &block).is_ok() {}
        let _ = std::io::Write::write_all(&mut f, &[0u8]);
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

const FULL_DISK: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    big: "{{ 'x' * 300000 }}"
  tasks:
    - name: copy onto a full disk
      copy: {content: "{{ big }}", dest: "{{ full }}/copied.txt"}
      ignore_errors: true
    - name: template onto a full disk
      template: {src: big.j2, dest: "{{ full }}/templated.txt"}
      ignore_errors: true
    - name: the run goes on
      ping:
"#;

#[test]
fn a_full_disk_fails_copy_and_template_cleanly_and_keeps_the_old_files() {
    let run = |sb: &Sandbox, reference: bool| -> Option<Output> {
        sb.inventory_with_python(&["alpha"]);
        let work = sb.dir("work");
        let full = Tmpfs::mount(&sb.path().join("full"), "512k");
        for name in ["copied.txt", "templated.txt"] {
            std::fs::write(full.0.join(name), "the old content\n").expect("old file");
        }
        full.fill();
        sb.write("big.j2", "{{ big }}\n");
        let pb = sb.write("play.yml", FULL_DISK);
        let extra = ["-e", &format!("full={}", full.0.display())];
        let out = if reference {
            sb.ansible_play(&pb, &work, &extra)?.run()
        } else {
            sb.play(&pb, &work, &extra).run()
        };
        for name in ["copied.txt", "templated.txt"] {
            assert_eq!(
                std::fs::read_to_string(full.0.join(name)).unwrap_or_default(),
                "the old content\n",
                "{name} was truncated or half-written:\n{out}"
            );
        }
        let stray: Vec<_> = std::fs::read_dir(&full.0)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !["copied.txt", "templated.txt", "filler"].contains(&n.as_str()))
            .collect();
        assert!(
            stray.is_empty(),
            "temporary files left behind: {stray:?}\n{out}"
        );
        Some(out)
    };
    let sb = Sandbox::new();
    let ours = run(&sb, false).unwrap_or_else(|| unreachable!("sandball always runs"));
    ours.assert_no_panic().assert_code(0);
    let recap = ours.host("alpha");
    assert_eq!((recap.failed, recap.ignored, recap.ok), (0, 2, 3), "{ours}");
    for task in ["copy onto a full disk", "template onto a full disk"] {
        let lines = ours.task_lines(task).join("\n");
        assert!(lines.contains("No space left on device"), "{task}:\n{ours}");
    }
    if let Some(theirs) = run(&Sandbox::new(), true) {
        ours.assert_same_recap_as(&theirs);
    }
}

const BURST: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: every host logs in at once
      ping:
"#;

/// 50 hosts on an sshd that refuses every login begun while another is under way
/// (`MaxStartups 1:100:1`), forks 50. Without retries, each host is either ok or
/// unreachable with sshd's refusal given as the reason: none hangs, none is skipped.
/// With `ansible_ssh_retries`, the pauses between attempts (growing, each drawn at
/// random) spread the hosts out and every one gets through.
#[test]
fn a_burst_refused_by_sshd_is_retried_until_every_host_gets_through() {
    let sshd = Sshd::start_refusing("1:100:1");
    let sb = Sandbox::new();
    let cache = sb.path().join("node");
    let hosts: Vec<String> = (1..=50).map(|i| format!("b{i:02}")).collect();
    let inventory = |retries: u32| {
        let mut inv = String::from("[nodes]\n");
        for h in &hosts {
            inv.push_str(&sshd.host_line(h, &cache, &format!("ansible_ssh_retries={retries}")));
        }
        inv
    };
    let pb = sb.write("play.yml", BURST);
    let work = sb.dir("work");
    let run = |retries: u32| {
        sb.write("inventory.ini", &inventory(retries));
        let start = Instant::now();
        let out = sb
            .play(&pb, &work, &["-f", "50"])
            .env("SANDBALL_SHIM", deployable_shim())
            .env("SSH_AUTH_SOCK", "")
            .limit(Duration::from_secs(240))
            .run();
        out.assert_no_panic();
        (out, start.elapsed())
    };

    let (out, _) = run(0);
    let recap = out.recap();
    assert_eq!(
        recap.len(),
        hosts.len(),
        "a host is missing from the recap:\n{out}"
    );
    let lines = out.task_lines("every host logs in at once");
    for h in &hosts {
        let r = recap[h];
        assert_eq!(r.ok + r.unreachable, 1, "{h}: {r:?}\n{out}");
        if r.unreachable == 1 {
            let line = lines
                .iter()
                .find(|l| l.starts_with(&format!("fatal: [{h}]: UNREACHABLE!")))
                .unwrap_or_else(|| panic!("{h} is unreachable with no reason:\n{out}"));
            assert!(
                line.contains("127.0.0.1"),
                "the reason names no address: {line}"
            );
        }
    }

    let (out, took) = run(12);
    out.assert_code(0);
    for h in &hosts {
        assert_eq!(out.host(h).ok, 1, "{h}:\n{out}");
    }
    assert!(
        took < Duration::from_secs(200),
        "the burst took {took:?}:\n{out}"
    );
}

const SHIM_KILLED: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: a component when the shim is killed
      command: sh -c 'echo $$ > {{ work }}/component.tmp && mv {{ work }}/component.tmp {{ work }}/component-started && exec sleep 60'
      ignore_errors: true
    - name: a fresh session
      command: touch {{ work }}/fresh-1
    - name: a legacy module when the shim is killed
      sleeper: {marker: "{{ work }}/legacy-started"}
      ignore_errors: true
    - name: and again a fresh session
      command: touch {{ work }}/fresh-2
"#;

/// The node's shim killed (SIGKILL) while a component runs and while a legacy module
/// runs: each task fails with the cause named as soon as the shim has died (not when
/// the program it ran would have ended, a minute later), the module is not run again,
/// and the next task has a fresh session. What the shim started (the component's
/// program, the legacy module its fork server forked) dies with it: the shim's guard
/// kills their process groups as soon as the shim is gone.
#[test]
fn a_shim_killed_while_a_module_runs_fails_that_task_and_the_next_gets_a_fresh_session() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let cache = sb.path().join("node");
    sb.write(
        "inventory.ini",
        &format!(
            "[nodes]\n{}",
            sshd.host_line(
                "k1",
                &cache,
                &format!(
                    "ansible_python_interpreter={}",
                    sandball_e2e::binaries::ansible_python().display()
                )
            )
        ),
    );
    let work = sb.dir("work");
    let pb = sb.write("play.yml", SHIM_KILLED);
    sb.write(
        "library/sleeper.py",
        "#!/usr/bin/python\nimport os, time\n\
         from ansible.module_utils.basic import AnsibleModule\n\
         m = AnsibleModule(argument_spec=dict(marker=dict(type='str', required=True)))\n\
         with open(m.params['marker'], 'a') as f:\n    f.write('%d\\n' % os.getpid())\n\
         time.sleep(60)\nm.exit_json(changed=False)\n",
    );
    // Kills the shim once `marker` holds the module's pid; when it did, the time it
    // did, and how long the module's process ran on after that.
    let kill_when = |marker: &str| {
        let marker = work.join(marker);
        let deadline = Instant::now() + Duration::from_secs(200);
        let pid = loop {
            let pid = std::fs::read_to_string(&marker)
                .ok()
                .and_then(|t| t.lines().next().and_then(|l| l.trim().parse::<u32>().ok()));
            if pid.is_some() || Instant::now() > deadline {
                break pid?;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let killed = std::process::Command::new("pkill")
            .args(["-KILL", "-f"])
            .arg(format!(
                "[s]andball-shim serve --cache-dir {}",
                cache.display()
            ))
            .status()
            .is_ok_and(|s| s.success());
        if !killed {
            return None;
        }
        let at = std::time::SystemTime::now();
        Some((at, ended_within(&[pid], Duration::from_secs(10))))
    };
    let (out, killed) = std::thread::scope(|s| {
        let killer = s.spawn(|| [kill_when("component-started"), kill_when("legacy-started")]);
        let out = sb
            .play_with_core(&pb, &work, &[])
            .env("SANDBALL_SHIM", deployable_shim())
            .env("SSH_AUTH_SOCK", "")
            .limit(Duration::from_secs(300))
            .run();
        (out, killer.join().unwrap_or_default())
    });
    out.assert_no_panic().assert_code(0);
    let r = out.host("k1");
    assert_eq!((r.ok, r.failed, r.ignored), (4, 0, 2), "{out}");
    for task in [
        "a component when the shim is killed",
        "a legacy module when the shim is killed",
    ] {
        let failure = out.task_lines(task).join("\n");
        assert!(failure.contains("fatal: [k1]: FAILED!"), "{task}:\n{out}");
        assert!(
            failure.contains("signal KILL"),
            "{task}: the cause is not named:\n{out}"
        );
    }
    for ((kill, fresh), what) in killed
        .iter()
        .zip(["fresh-1", "fresh-2"])
        .zip(["the component's program", "the legacy module"])
    {
        let (kill, ended) = kill
            .as_ref()
            .unwrap_or_else(|| panic!("no shim was found to kill before {fresh}:\n{out}"));
        // What the shim started ended with it.
        match ended {
            Ok(after) => eprintln!("{what} ended {after:?} after its shim was killed"),
            Err(left) => panic!("{what} ({left:?}) outlived its killed shim by 10 s:\n{out}"),
        }
        // The next task ran well before the killed one's program would have ended.
        let made = std::fs::metadata(work.join(fresh))
            .and_then(|m| m.modified())
            .unwrap_or_else(|e| panic!("{fresh}: {e}\n{out}"));
        let after = made.duration_since(*kill).unwrap_or_default();
        assert!(
            after < Duration::from_secs(40),
            "{fresh} came {after:?} after the kill:\n{out}"
        );
    }
    // The legacy module ran once: it was not sent again after the session ended.
    let runs = std::fs::read_to_string(work.join("legacy-started")).unwrap_or_default();
    assert_eq!(
        runs.lines().count(),
        1,
        "the legacy module ran {runs:?}:\n{out}"
    );
}

const NEVER_ANSWERS: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: log in
      ping:
    - name: the others go on
      command: touch {{ work }}/after-{{ inventory_hostname }}
"#;

/// Hosts on one sshd, each through a proxy of its own: n1 and n3 answer; n2's proxy
/// takes the connection and carries nothing (a node that accepts and never answers).
/// With `-T 3` (ansible-core's `timeout`), n2 is unreachable after about 3 s with the
/// timeout named, the others finish, and the recap and exit code are
/// ansible-playbook's. n4's proxy stalls after 100 bytes each way (the version lines
/// pass, the key exchange hangs): sandball's timeout covers the whole handshake, so it
/// is unreachable after 3 s too; ansible-playbook is not run with it, as OpenSSH's
/// `ConnectTimeout` ends at the version lines and it would wait on it for ever.
#[test]
fn a_node_that_never_answers_is_unreachable_after_the_connection_timeout() {
    let sshd = Sshd::start();
    let stalled = |after: usize| {
        Proxy::start_with(
            sshd.port,
            Shape {
                stall_after: Some(after),
                ..Shape::default()
            },
        )
    };
    let run = |reference: bool| -> Option<Output> {
        let sb = Sandbox::new();
        let mut proxies = vec![Proxy::start(sshd.port), stalled(0), Proxy::start(sshd.port)];
        if !reference {
            proxies.push(stalled(100));
        }
        let stalled_hosts: &[&str] = if reference { &["n2"] } else { &["n2", "n4"] };
        fleet(&sshd, &sb, &proxies, reference);
        let work = sb.dir("work");
        let pb = sb.write("play.yml", NEVER_ANSWERS);
        let args = ["-T", "3"];
        let run = match reference {
            true => sb.ansible_play(&pb, &work, &args)?,
            false => sb
                .play(&pb, &work, &args)
                .env("SANDBALL_SHIM", deployable_shim()),
        };
        let out = run
            .env("SSH_AUTH_SOCK", "")
            .limit(Duration::from_secs(120))
            .run();
        out.assert_no_panic().assert_code(4);
        for h in ["n1", "n3"] {
            let r = out.host(h);
            assert_eq!((r.ok, r.unreachable, r.failed), (2, 0, 0), "{h}:\n{out}");
        }
        for h in stalled_hosts {
            let r = out.host(h);
            assert_eq!((r.unreachable, r.ok), (1, 0), "{h}:\n{out}");
            assert!(!work.join(format!("after-{h}")).exists(), "{h}:\n{out}");
            let line = out
                .task_lines("log in")
                .into_iter()
                .find(|l| l.starts_with(&format!("fatal: [{h}]: UNREACHABLE!")))
                .unwrap_or_else(|| panic!("{h} was not unreachable:\n{out}"))
                .to_string();
            assert!(line.contains("timed out"), "{h}: no timeout named: {line}");
            if !reference {
                assert!(line.contains("after 3s"), "{h}: not -T's timeout: {line}");
            }
            eprintln!("{h}: {line}");
        }
        // Each stalled host waited out its timeout, and the run did not wait on it until
        // sshd gave up on the login (`LoginGraceTime`, 120 s).
        assert!(
            out.elapsed >= Duration::from_secs(3) && out.elapsed < Duration::from_secs(100),
            "the run took {:?}:\n{out}",
            out.elapsed
        );
        eprintln!("{} took {:?}", tool(reference), out.elapsed);
        Some(out)
    };
    let ours = run(false).unwrap_or_else(|| unreachable!("sandball always runs"));
    if let Some(theirs) = run(true) {
        for h in ["n1", "n2", "n3"] {
            assert_eq!(ours.host(h), theirs.host(h), "{h}:\n{ours}\n{theirs}");
        }
    }
}

/// The environment entry that marks the processes of a test run (unique per run).
fn marker() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!("SBT_FAULT_MARK={}-{nanos}", std::process::id())
}

const SLEEPS_FOREVER: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: the session opened and the module compiled, so that the sleep starts in time
      command: "true"
    - name: a command that sleeps
      command: sleep 1000
      environment: {SBT_FAULT_MARK: "{{ mark }}"}
      timeout: 6
      ignore_errors: true
    - name: a pause on the controller, the node left alone
      pause: {seconds: 6}
    - name: a legacy module that sleeps
      sleeper:
      environment: {SBT_FAULT_MARK: "{{ mark }}"}
      timeout: 6
      ignore_errors: true
    - name: another pause
      pause: {seconds: 6}
    - name: the play goes on
      command: touch {{ work }}/after-{{ inventory_hostname }}
"#;

/// On an SSH node, a `command: sleep 1000` and a legacy Python module that sleeps, each
/// under the task keyword `timeout: 6` (room for the sleep to start on a loaded
/// machine): each task fails with ansible-core's message for a task timeout after
/// about 6 s, the play goes on, and nothing the tasks started is
/// left sleeping on the node — each process (found by an environment entry of the
/// test's own) ends as its task times out, not when the host's next task on the node
/// (after a pause on the controller) replaces the session. ansible-playbook gives the
/// same results but leaves the processes sleeping.
#[test]
fn a_module_that_sleeps_forever_is_ended_by_the_task_timeout() {
    let sshd = Sshd::start();
    let run = |reference: bool| -> Option<(Output, Vec<(String, Duration)>)> {
        let sb = Sandbox::new();
        let proxies = vec![Proxy::start(sshd.port)];
        fleet(&sshd, &sb, &proxies, true);
        sb.write(
            "library/sleeper.py",
            "#!/usr/bin/python\nimport time\n\
             from ansible.module_utils.basic import AnsibleModule\n\
             m = AnsibleModule(argument_spec={})\ntime.sleep(1000)\nm.exit_json(changed=False)\n",
        );
        let work = sb.dir("work");
        let pb = sb.write("play.yml", SLEEPS_FOREVER);
        let mark = marker();
        let value = mark.split_once('=').map(|(_, v)| v).unwrap_or_default();
        let args = ["-e", &format!("mark={value}")];
        let run = match reference {
            true => sb.ansible_play(&pb, &work, &args)?,
            false => sb
                .play_with_core(&pb, &work, &args)
                .env("SANDBALL_SHIM", deployable_shim()),
        };
        let run = run.env("SSH_AUTH_SOCK", "").limit(Duration::from_secs(120));
        // Each marked process (its command line) and how long it was seen running,
        // sampled as the run goes.
        let done = std::sync::atomic::AtomicBool::new(false);
        let (out, lives) = std::thread::scope(|s| {
            let watcher = s.spawn(|| {
                let mut seen: std::collections::BTreeMap<u32, (String, Instant, Instant)> =
                    Default::default();
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    let now = Instant::now();
                    for pid in sandball_e2e::processes::with_env(&mark) {
                        seen.entry(pid)
                            .or_insert_with(|| {
                                let cmdline =
                                    std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                                        .unwrap_or_default()
                                        .replace('\0', " ");
                                (cmdline, now, now)
                            })
                            .2 = now;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                seen
            });
            let out = run.run();
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            (out, watcher.join().unwrap_or_default())
        });
        let lives: Vec<(String, Duration)> = lives
            .into_values()
            .map(|(cmdline, first, last)| (cmdline, last - first))
            .collect();
        // Whatever is still running: none for sandball (killed here for either tool,
        // so that the test leaves nothing behind).
        let left = sandball_e2e::processes::with_env(&mark);
        match (reference, ended_within(&left, Duration::ZERO)) {
            (false, Err(left)) => panic!("sandball left {left:?} sleeping:\n{out}"),
            (true, Err(left)) => eprintln!("ansible-playbook left {left:?} sleeping"),
            _ => {}
        }
        out.assert_no_panic().assert_code(0);
        let r = out.host("n1");
        assert_eq!((r.ok, r.failed, r.ignored), (6, 0, 2), "{out}");
        assert!(work.join("after-n1").exists(), "{out}");
        for task in ["a command that sleeps", "a legacy module that sleeps"] {
            let lines = out.task_lines(task).join("\n");
            assert!(
                lines.contains("\"msg\": \"Task failed: Timed out after 6 second(s).\""),
                "{task}:\n{out}"
            );
        }
        assert!(
            out.elapsed >= Duration::from_secs(24) && out.elapsed < Duration::from_secs(100),
            "the run took {:?}:\n{out}",
            out.elapsed
        );
        Some((out, lives))
    };
    let (ours, lives) = run(false).unwrap_or_else(|| unreachable!("sandball always runs"));
    // Both sleeps were seen, and each ended within 5 s of its task's timeout (it started
    // after its task did, and its task ran out of time 6 s after starting), before the
    // pause after it was over.
    for what in ["sleep 1000", "python"] {
        assert!(
            lives.iter().any(|(cmdline, _)| cmdline.contains(what)),
            "no {what} was seen: {lives:?}\n{ours}"
        );
    }
    for (cmdline, life) in &lives {
        let cmdline = cmdline.lines().next().unwrap_or_default();
        eprintln!("{cmdline:.60}… ran {life:?}");
        assert!(
            *life < Duration::from_secs(11),
            "{cmdline:.60} ran {life:?} under a 6 s timeout:\n{ours}"
        );
    }
    if let Some((theirs, _)) = run(true) {
        ours.assert_same_recap_as(&theirs);
        ours.assert_same_results_as(
            &theirs,
            &["a command that sleeps", "a legacy module that sleeps"],
        );
    }
}

const STOPS_ANSWERING: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: before the node stops answering
      command: touch {{ work }}/before-{{ inventory_hostname }}
    - name: on the controller, while n2 stops answering
      shell: touch {{ work }}/pausing; while [ ! -e {{ work }}/stalled ]; do sleep 0.1; done
      delegate_to: localhost
      run_once: true
    - name: on the silent session
      command: touch {{ work }}/during-{{ inventory_hostname }}
      timeout: 5
      ignore_errors: true
    - name: and again
      command: touch {{ work }}/again-{{ inventory_hostname }}
      timeout: 5
      ignore_errors: true
    - name: the play goes on
      debug: {msg: done}
"#;

/// A node that stops answering once the run has reached it (its proxy stalls while
/// the controller runs a task of its own: the connection stays open, nothing comes
/// back, as from a hung machine or a silently dropped route): each of its later tasks under `timeout: 5` fails with
/// ansible-core's message after about 5 s instead of waiting for ever (the
/// connection timeout does not apply to a connection already made, in either tool),
/// the other hosts finish, and the recap is ansible-playbook's.
#[test]
fn a_node_that_stops_answering_mid_run_is_ended_by_the_task_timeout() {
    let sshd = Sshd::start();
    let run = |reference: bool| -> Option<Output> {
        let sb = Sandbox::new();
        let proxies: Vec<Proxy> = (0..3).map(|_| Proxy::start(sshd.port)).collect();
        fleet(&sshd, &sb, &proxies, reference);
        // One connection per task under both tools (sandball pipes by default), so
        // that a loaded machine is not what runs the others out of time.
        let inventory =
            std::fs::read_to_string(sb.path().join("inventory.ini")).unwrap_or_default();
        sb.write(
            "inventory.ini",
            &inventory.replace(
                " sandball_cache_dir=",
                " ansible_pipelining=true sandball_cache_dir=",
            ),
        );
        let work = sb.dir("work");
        let pb = sb.write("play.yml", STOPS_ANSWERING);
        let run = match reference {
            true => sb.ansible_play(&pb, &work, &[])?,
            false => sb
                .play(&pb, &work, &[])
                .env("SANDBALL_SHIM", deployable_shim()),
        };
        let run = run.env("SSH_AUTH_SOCK", "").limit(Duration::from_secs(120));
        let out = std::thread::scope(|s| {
            s.spawn(|| {
                // Once every host is done with its first task, while the controller
                // waits on its own.
                let deadline = Instant::now() + Duration::from_secs(100);
                while !work.join("pausing").exists() && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(20));
                }
                proxies[1].stall();
                let _ = std::fs::write(work.join("stalled"), "");
            });
            run.run()
        });
        out.assert_no_panic().assert_code(0);
        // The task on the controller counts for the first host alone.
        for (h, ok) in [("n1", 5), ("n3", 4)] {
            let r = out.host(h);
            assert_eq!((r.ok, r.failed, r.ignored), (ok, 0, 0), "{h}:\n{out}");
        }
        let r = out.host("n2");
        assert_eq!((r.ok, r.ignored, r.unreachable), (4, 2, 0), "{out}");
        for task in ["on the silent session", "and again"] {
            let line = out
                .task_lines(task)
                .into_iter()
                .find(|l| l.starts_with("fatal: [n2]: FAILED!"))
                .unwrap_or_else(|| panic!("{task}: n2 did not fail:\n{out}"))
                .to_string();
            assert!(
                line.contains("\"msg\": \"Task failed: Timed out after 5 second(s).\""),
                "{task}: {line}"
            );
        }
        assert!(!work.join("during-n2").exists(), "{out}");
        // Two timeouts, not a wait for ever.
        assert!(
            out.elapsed >= Duration::from_secs(10) && out.elapsed < Duration::from_secs(60),
            "the run took {:?}:\n{out}",
            out.elapsed
        );
        eprintln!("{} took {:?}", tool(reference), out.elapsed);
        Some(out)
    };
    let ours = run(false).unwrap_or_else(|| unreachable!("sandball always runs"));
    if let Some(theirs) = run(true) {
        ours.assert_same_recap_as(&theirs);
        for task in ["on the silent session", "and again"] {
            let n2 = |out: &Output| -> Vec<String> {
                out.result_lines(task)
                    .into_iter()
                    .filter(|l| l.starts_with("fatal: [n2]"))
                    .map(str::to_string)
                    .collect()
            };
            assert_eq!(n2(&ours), n2(&theirs), "{task}:\n{ours}\n{theirs}");
        }
    }
}

/// The tool a run of a fault test is: the reference or sandball.
fn tool(reference: bool) -> &'static str {
    if reference {
        "ansible-playbook"
    } else {
        "sandball"
    }
}
