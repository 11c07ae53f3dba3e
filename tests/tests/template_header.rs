//! A template's `#jinja2:` first line, compared with ansible-playbook: other delimiters
//! (a macro called with `<< m() >>`), `trim_blocks`, `keep_trailing_newline`, the line
//! left out of what the `template` action writes and the `template` lookup gives.

use sandball_e2e::Sandbox;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: written
      template: {src: macro.j2, dest: "{{ work }}/macro.out"}
    - name: what was written
      debug: {msg: "{{ lookup('file', work ~ '/macro.out', rstrip=false) }}"}
    - name: looked up
      debug:
        msg: "{{ [lookup('template', 'macro.j2'), lookup('template', 'blocks.j2'),
                 lookup('template', 'kept.j2'), lookup('template', 'plain.j2')] }}"
"#;

#[test]
fn the_jinja2_header_line_sets_the_file_options() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    sb.write(
        "templates/macro.j2",
        "#jinja2: variable_start_string:'<<', variable_end_string:'>>'\n{% macro m() %}\n\"{{ x }}\" <{{ 1 }}>\n{% endmacro %}\n<< m() >>\n",
    );
    sb.write(
        "templates/blocks.j2",
        "#jinja2: trim_blocks: False\na\n{% if true %}\nb\n{% endif %}\n",
    );
    sb.write(
        "templates/kept.j2",
        "#jinja2: keep_trailing_newline: True ,lstrip_blocks:True\n  {% if true %}\nc\n  {% endif %}\n",
    );
    sb.write("templates/plain.j2", "d\n");
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    assert!(
        ours.stdout.contains(r#""msg": "\"{{ x }}\" <{{ 1 }}>\n""#),
        "{ours}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &sb.dir("theirs"), &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        ours.assert_same_recap_as(&theirs)
            .assert_same_results_as(&theirs, &["written", "what was written", "looked up"]);
    }
}
