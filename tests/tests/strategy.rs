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
