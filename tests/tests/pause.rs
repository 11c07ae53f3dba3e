//! `pause`: once for the play (the first host), a timed wait, a prompt that is not
//! waited for without a terminal, what it registers kept by the first host only; and
//! `wait_for_connection` on hosts that answer — compared with ansible-playbook.

use sandball_e2e::Sandbox;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: wait
      pause: {seconds: 1}
      register: w
    - name: ask
      pause: {prompt: "go on?"}
    - name: show
      debug: {msg: "{{ w.stdout | regex_replace('[0-9.]+ seconds', 'N seconds') if w is defined else 'not registered' }}"}
    - name: connected
      wait_for_connection: {timeout: 20}
"#;

#[test]
fn pause_runs_once_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("Pausing for 1 seconds");
    out.assert_stderr_has(
        "[WARNING]: Not waiting for response to prompt as stdin is not interactive",
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        out.assert_same_recap_as(&theirs);
        for task in ["wait", "ask", "show", "connected"] {
            // ansible-playbook writes warnings to stderr.
            let lines = |o: &sandball_e2e::Output| -> Vec<String> {
                o.task_lines(task)
                    .into_iter()
                    .filter(|l| !l.starts_with("[WARNING]"))
                    .map(str::to_string)
                    .collect()
            };
            let (mut a, mut b) = (lines(&theirs), lines(&out));
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "{theirs}\n{out}");
        }
    }
}
