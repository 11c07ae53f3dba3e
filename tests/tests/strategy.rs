//! Strategies: under `free` (and `host_pinned`) a host runs ahead of a slow one instead
//! of waiting for it at every task, handlers run for each host when it is done, and the
//! recap is ansible-playbook's.

use sandball_e2e::Sandbox;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  strategy: STRATEGY
  tasks:
    - name: first
      raw: "{{ 'sleep 3' if inventory_hostname == 'slow' else 'true' }}"
    - name: second
      debug: {msg: "{{ inventory_hostname }} second"}
      changed_when: true
      notify: h
    - name: third
      fail: {msg: boom}
      when: inventory_hostname == 'fast2'
  handlers:
    - name: h
      debug: {msg: "handler {{ inventory_hostname }}"}
"#;

#[test]
fn free_strategy_lets_hosts_run_ahead_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["slow", "fast1", "fast2"]);
    let work = sb.dir("work");
    for strategy in ["free", "host_pinned", "linear"] {
        let pb = sb.write("play.yml", &PLAY.replace("STRATEGY", strategy));
        let out = sb.play(&pb, &work, &[]).run();
        out.assert_no_panic().assert_code(2);
        let at = |text: &str| {
            out.stdout
                .find(text)
                .unwrap_or_else(|| panic!("{text:?} not shown:\n{out}"))
        };
        let fast_done = at("\"msg\": \"handler fast1\"");
        let slow_first = at("changed: [slow]");
        if strategy == "linear" {
            assert!(
                slow_first < fast_done,
                "linear let a host run ahead:\n{out}"
            );
        } else {
            assert!(
                fast_done < slow_first,
                "{strategy} waited for the slow host:\n{out}"
            );
        }
        at("\"msg\": \"handler slow\"");
        if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
            let theirs = theirs.run();
            assert_eq!(theirs.code, 2, "{theirs}");
            out.assert_same_recap_as(&theirs);
        }
    }
}

#[test]
fn free_strategy_shows_an_includes_banner_as_ansible_does() {
    let sb = Sandbox::new();
    sb.inventory(&["solo"]);
    sb.write("inc.yml", "- debug: {msg: included}\n");
    let pb = sb.write(
        "play.yml",
        r#"- hosts: all
  gather_facts: false
  strategy: free
  tasks:
    - debug: {msg: before}
    - include_tasks: inc.yml
    - name: named include
      include_tasks: inc.yml
    - meta: noop
    - include_tasks: inc.yml
      when: false
    - block:
        - fail: {msg: boom}
      always:
        - include_tasks: inc.yml
"#,
    );
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(2);
    let shown = |o: &sandball_e2e::Output| -> Vec<String> {
        o.stdout
            .lines()
            .filter(|l| {
                ["TASK [", "included: ", "ok: [", "skipping: [", "fatal: ["]
                    .iter()
                    .any(|p| l.starts_with(p))
            })
            .map(|l| {
                l.split(" => ")
                    .next()
                    .unwrap_or(l)
                    .trim_end_matches(['*', ' '])
                    .to_string()
            })
            .collect()
    };
    let ours = shown(&out);
    assert_eq!(
        ours.iter()
            .filter(|l| l.starts_with("TASK [include_tasks]"))
            .count(),
        3,
        "{out}"
    );
    assert!(ours.contains(&"TASK [named include]".to_string()), "{out}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 2, "{theirs}");
        out.assert_same_recap_as(&theirs);
        assert_eq!(shown(&theirs), ours, "{theirs}\n{out}");
    }
}
