//! Backslashes in the string constants of templates, compared with ansible-playbook
//! 2.19: in a task's or a variable's `{{ }}` expressions (and a conditional written as
//! a template) a constant keeps its backslashes as YAML left them (`'\1'` is the
//! backreference `regex_replace` wants), while statements, bare conditionals and
//! template files read Jinja's escapes.

use sandball_e2e::Sandbox;

const PLAY: &str = r#"- hosts: all
  gather_facts: false
  vars:
    lazy: "{{ 'a\\tb' | length }}"
    path: 'C:\new\table'
  tasks:
    - name: task args
      debug:
        msg: "{{ 'Test 1\\3' }} {{ 'abc_name' | regex_replace('^(.*)_name$', '\\1') }} {{ lazy }} {% set s = 'a\\tb' %}{{ s | length }} {{ path }} {{ 'C:\\x' }}"
    - name: single expression
      debug:
        msg: "{{ 'goodbye' | regex_search('(good)(bye)', '\\2', '\\1') }}"
    - name: single-quoted yaml
      debug:
        msg: '{{ "a\nb" | length }} {{ ["\\", "\x", "it\"s"] }} {{ {"k\n": 1} }}'
    - name: bare conditional
      debug: {msg: cond}
      when: "'a\\tb' | length == 3"
    - name: conditional template
      debug: {msg: cond2}
      when: "{{ 'a\\tb' | length == 3 }}"
    - name: template file
      template: {src: t.j2, dest: "{{ work }}/out.txt"}
"#;

#[test]
fn string_constants_keep_backslashes_where_ansible_keeps_them() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write("templates/t.j2", "{{ 'a\\tb' | length }} {{ 'x\\ny' }}\n");
    let pb = sb.write("play.yml", PLAY);
    let tasks = [
        "task args",
        "single expression",
        "single-quoted yaml",
        "bare conditional",
        "conditional template",
    ];
    let ours_dir = sb.dir("ours");
    let ours = sb.play(&pb, &ours_dir, &[]).run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has(r#""msg": "Test 1\\3 abc 4 3 C:\\new\\table C:\\x""#);
    assert_eq!(
        std::fs::read_to_string(ours_dir.join("out.txt")).unwrap_or_default(),
        "3 x\ny\n"
    );
    let theirs_dir = sb.dir("theirs");
    if let Some(theirs) = sb.ansible_play(&pb, &theirs_dir, &[]) {
        let theirs = theirs.run();
        ours.assert_same_recap_as(&theirs)
            .assert_same_results_as(&theirs, &tasks);
        assert_eq!(
            std::fs::read_to_string(theirs_dir.join("out.txt")).unwrap_or_default(),
            "3 x\ny\n"
        );
    }
}
