//! `set_stats`: custom stats per host and for the run, added up or replaced, shown
//! after the recap when `ANSIBLE_SHOW_CUSTOM_STATS` asks, options read leniently and
//! names checked — compared with ansible-playbook.

use sandball_e2e::{Output, Sandbox};

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - set_stats: {data: {count: 1, names: ["{{ inventory_hostname }}"]}}
    - set_stats: {data: {count: 2}}
    - set_stats: {data: {mine: "{{ inventory_hostname }}"}, per_host: true}
    - set_stats: {data: {last: "{{ inventory_hostname }}"}, aggregate: false}
    # Options read leniently (not true is false); a key that is no variable name fails.
    - set_stats: {data: {loose: "{{ inventory_hostname }}"}, aggregate: "x", per_host: "{{ 'maybe' }}"}
    - set_stats: {data: {".bad": 1}}
      ignore_errors: true
"#;

/// What follows the recap.
fn after_recap(out: &Output) -> String {
    out.stdout
        .split("PLAY RECAP")
        .nth(1)
        .and_then(|r| r.split_once("\n\n"))
        .map(|(_, rest)| rest.to_string())
        .unwrap_or_default()
}

#[test]
fn custom_stats_are_shown_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let quiet = sb.play(&pb, &work, &["-f", "1"]).run();
    quiet.assert_no_panic().assert_code(0);
    assert!(!quiet.stdout.contains("CUSTOM STATS"), "{quiet}");
    let ours = sb
        .play(&pb, &work, &["-f", "1"])
        .env("ANSIBLE_SHOW_CUSTOM_STATS", "1")
        .run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has(
        "\tRUN: { \"count\": 6, \"last\": \"beta\", \"loose\": \"beta\", \"names\": [  \"alpha\",  \"beta\" ]}",
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &["-f", "1"]) {
        let theirs = theirs.env("ANSIBLE_SHOW_CUSTOM_STATS", "1").run();
        assert_eq!(after_recap(&ours), after_recap(&theirs), "{theirs}\n{ours}");
        ours.assert_same_recap_as(&theirs);
    }
}
