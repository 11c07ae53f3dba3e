//! Conditionals that are empty, compared with ansible-playbook 2.19: `when:` with no
//! value is no condition, while blank text, a null `assert` `that` (or a null item of
//! it) are refused ("Empty conditional expressions are not allowed."); an empty list
//! holds; an `assert` without `that` fails for its missing argument.

use sandball_e2e::Sandbox;

#[test]
fn empty_conditionals_are_refused_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let tasks = [
        ("when with no value", "debug: {msg: a}\n      when:"),
        ("blank when", "debug: {msg: b}\n      when: ' '"),
        ("blank that", "assert: {that: ''}"),
        ("empty list", "assert: {that: []}"),
        ("null item", "assert: {that: ['1 == 1', null]}"),
        ("null that", "assert: {that: null}"),
        ("no that", "assert: {}"),
        (
            "blank failed_when",
            "debug: {msg: c}\n      failed_when: ''",
        ),
    ];
    let mut play = String::from("- hosts: all\n  gather_facts: false\n  tasks:\n");
    for (name, task) in tasks {
        play.push_str(&format!(
            "    - name: {name}\n      {task}\n      ignore_errors: true\n"
        ));
    }
    let pb = sb.write("play.yml", &play);
    let names: Vec<&str> = tasks.iter().map(|(name, _)| *name).collect();
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    assert_eq!(
        ours.stdout
            .matches("\"Task failed: Empty conditional expressions are not allowed.\"")
            .count(),
        4,
        "{ours}"
    );
    ours.assert_stdout_has("\"msg\": \"missing required arguments: that\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        ours.assert_same_recap_as(&theirs)
            .assert_same_results_as(&theirs, &names);
    }
}
