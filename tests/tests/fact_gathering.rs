//! Fact gathering as the play sees it: `gathering = smart` gathers again a host whose
//! facts a `setup` task returned (only `gather_facts` marks them gathered, in
//! `ansible_facts` alone), and neither shows its facts with -v — the output from the
//! first play on compared with ansible-playbook's.

use sandball_e2e::{Output, Sandbox};

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: explicit setup
      setup: {gather_subset: ['!all']}
    - name: marked
      debug: {msg: "{{ '_ansible_facts_gathered' in ansible_facts }}"}
- hosts: all
  gather_subset: ['!all']
  tasks:
    - name: gathered
      debug: {msg: "{{ ansible_facts._ansible_facts_gathered }} {{ ansible_facts.system }}"}
- hosts: all
  gather_subset: ['!all']
  tasks:
    - name: again
      gather_facts: {gather_subset: ['!all']}
      register: g
    - name: registered
      debug: {msg: "{{ g.ansible_facts._ansible_facts_gathered | default('not kept') }}"}
"#;

/// Stdout from the first play's banner on (-v adds the configuration before it).
fn from_first_play(out: &Output) -> Vec<&str> {
    out.stdout
        .lines()
        .skip_while(|l| !l.starts_with("PLAY ["))
        .filter(|l| !l.starts_with("[WARNING]"))
        .collect()
}

#[test]
fn smart_gathering_and_gathered_facts_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let ours = sb
        .play(&pb, &work, &["-v"])
        .env("ANSIBLE_GATHERING", "smart")
        .run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"msg\": \"True Linux\"");
    // The second play gathers (a `setup` task does not count), the third does not.
    assert_eq!(
        ours.stdout.matches("TASK [Gathering Facts]").count(),
        1,
        "{ours}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &["-v"]) {
        let theirs = theirs.env("ANSIBLE_GATHERING", "smart").run();
        assert_eq!(theirs.code, 0, "{theirs}");
        assert_eq!(
            from_first_play(&ours),
            from_first_play(&theirs),
            "{theirs}\n{ours}"
        );
    }
}
