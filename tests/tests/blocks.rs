//! `block` / `rescue` / `always` as Ansible's linear strategy runs them, with hosts
//! taking different paths: a host that fails in a block runs `rescue` (the others
//! wait), its failure counts as rescued, `ansible_failed_task` and
//! `ansible_failed_result` say what failed; `always` runs for every host that entered;
//! a failure nobody rescued ends the host's play after `always`. Compared with
//! ansible-playbook: recap, exit code and the hosts each task ran on.

use sandball_e2e::{HostRecap, Output, Sandbox};

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: outer
      block:
        - name: b1
          fail: {msg: "b1 failed on {{ inventory_hostname }}"}
          when: inventory_hostname in ['alpha', 'gamma']
        - name: b2
          debug: {msg: b2}
        - name: inner
          block:
            - name: i1
              fail: {msg: inner}
              when: inventory_hostname == 'beta'
          always:
            - name: ia1
              debug: {msg: inner always}
      rescue:
        - name: r1
          debug: {msg: "rescued {{ ansible_failed_task.name }}: {{ ansible_failed_result.msg }}"}
        - name: r2
          fail: {msg: r2}
          when: inventory_hostname == 'gamma'
      always:
        - name: a1
          debug: {msg: always}
    - name: unprotected always
      block:
        - name: u1
          fail: {msg: u1}
          when: inventory_hostname == 'alpha'
      always:
        - name: ua1
          debug: {msg: still}
    - name: after
      debug: {msg: after}
"#;

/// For each task banner, the hosts it reported on, in order of the output.
fn hosts_per_task(out: &Output) -> Vec<(String, Vec<String>)> {
    let mut tasks: Vec<(String, Vec<String>)> = Vec::new();
    for line in out.stdout.lines() {
        if let Some(rest) = line.strip_prefix("TASK [") {
            let name = rest.split(']').next().unwrap_or_default().to_string();
            tasks.push((name, Vec::new()));
        } else if let Some((_, rest)) = line.split_once(": [")
            && let Some((host, _)) = rest.split_once(']')
            && let Some(last) = tasks.last_mut()
            && !line.starts_with(' ')
        {
            let mut hosts = last.1.clone();
            hosts.push(host.to_string());
            hosts.sort();
            last.1 = hosts;
        }
    }
    tasks
}

#[test]
fn block_rescue_and_always_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta", "gamma", "delta"]);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", PLAY);
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(2);
    out.assert_stdout_has("\"msg\": \"rescued b1: b1 failed on alpha\"");
    out.assert_stdout_has("\"msg\": \"rescued i1: inner\"");
    assert_eq!(
        out.host("alpha"),
        HostRecap {
            ok: 3,
            failed: 1,
            skipped: 1,
            rescued: 1,
            ..HostRecap::default()
        },
        "{out}"
    );
    assert_eq!(
        out.host("gamma"),
        HostRecap {
            ok: 2,
            failed: 1,
            rescued: 1,
            ..HostRecap::default()
        },
        "{out}"
    );
    let ran = hosts_per_task(&out);
    let on = |task: &str| {
        ran.iter()
            .find(|(t, _)| t == task)
            .map(|(_, h)| h.clone())
            .unwrap_or_default()
    };
    assert_eq!(on("r1"), vec!["alpha", "beta", "gamma"], "{out}");
    assert_eq!(on("a1"), vec!["alpha", "beta", "delta", "gamma"], "{out}");
    assert_eq!(on("ua1"), vec!["alpha", "beta", "delta"], "{out}");
    assert_eq!(on("after"), vec!["beta", "delta"], "{out}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, out.code, "{theirs}");
        out.assert_same_recap_as(&theirs);
        assert_eq!(hosts_per_task(&theirs), ran, "{theirs}\n{out}");
    }
}
