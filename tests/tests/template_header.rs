//! A template's `#jinja2:` first line, compared with ansible-playbook: other delimiters
//! (a macro called with `<< m() >>`), `trim_blocks`, `keep_trailing_newline`, the line
//! left out of what the `template` action writes and the `template` lookup gives; and
//! the trailing newlines of a result (as many as the template's, after a macro's or an
//! include's output, with a header or without), in files and in task strings.

use sandball_e2e::Sandbox;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    nl: "a\n"
    s1: "{{ nl }}\n"
    s2: "{{ nl }}{{ nl }}\n"
    s3: "x\n\n"
  tasks:
    - name: written
      template: {src: macro.j2, dest: "{{ work }}/macro.out"}
    - name: what was written
      debug: {msg: "{{ lookup('file', work ~ '/macro.out', rstrip=false) }}"}
    - name: looked up
      debug:
        msg: "{{ [lookup('template', 'macro.j2'), lookup('template', 'blocks.j2'),
                 lookup('template', 'kept.j2'), lookup('template', 'plain.j2'),
                 lookup('template', 'm.j2'), lookup('template', 'multi.j2'),
                 lookup('template', 'h.j2'), lookup('template', 'inc.j2'),
                 lookup('template', 'e.j2'), lookup('template', 'none.j2'), s1, s2, s3] }}"
    - name: newlines written
      template: {src: "{{ item }}", dest: "{{ work }}/{{ item }}"}
      loop: [m.j2, multi.j2, h.j2, inc.j2, e.j2, none.j2]
    - name: what those say
      debug:
        msg: "{{ query('file', work ~ '/m.j2', work ~ '/multi.j2', work ~ '/h.j2',
                       work ~ '/inc.j2', work ~ '/e.j2', work ~ '/none.j2', rstrip=false) }}"
"#;

/// The templates the play renders, by name.
const TEMPLATES: &[(&str, &str)] = &[
    (
        "macro.j2",
        "#jinja2: variable_start_string:'<<', variable_end_string:'>>'\n{% macro m() %}\n\"{{ x }}\" <{{ 1 }}>\n{% endmacro %}\n<< m() >>\n",
    ),
    (
        "blocks.j2",
        "#jinja2: trim_blocks: False\na\n{% if true %}\nb\n{% endif %}\n",
    ),
    (
        "kept.j2",
        "#jinja2: keep_trailing_newline: True ,lstrip_blocks:True\n  {% if true %}\nc\n  {% endif %}\n",
    ),
    ("plain.j2", "d\n"),
    ("m.j2", "{% macro m() %}\na\n{% endmacro %}\n{{ m() }}\n"),
    ("multi.j2", "x\n\n\n"),
    ("h.j2", "#jinja2: trim_blocks: False\n[x] y\n"),
    ("inc.j2", "inc{% include 'i.j2' %}!\n"),
    ("i.j2", "world\n"),
    ("e.j2", "{{ 'a\\n' }}\n\n"),
    ("none.j2", "{# nothing #}\n"),
];

#[test]
fn the_jinja2_header_line_sets_the_file_options() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    for (name, text) in TEMPLATES {
        sb.write(&format!("templates/{name}"), text);
    }
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
        ours.assert_same_recap_as(&theirs).assert_same_results_as(
            &theirs,
            &["written", "what was written", "looked up", "what those say"],
        );
    }
}

#[test]
fn a_malformed_header_line_fails_the_template_in_ansible_cores_words() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    for (name, text) in [
        ("separator.j2", "#jinja2: lstrip_blocks=True\nx\n"),
        ("empty.j2", "#jinja2: lstrip_blocks: True,\nx\n"),
        ("key.j2", "#jinja2: bogus: True\nx\n"),
        ("newline.j2", "#jinja2: lstrip_blocks: True"),
    ] {
        sb.write(&format!("templates/{name}"), text);
    }
    let pb = sb.write(
        "play.yml",
        r#"- hosts: all
  gather_facts: false
  tasks:
    - name: rendered
      template: {src: "{{ item }}", dest: "{{ work }}/out"}
      loop: [separator.j2, empty.j2, key.j2, newline.j2]
      register: r
      ignore_errors: true
    - name: why
      debug: {msg: "{{ r.results | map(attribute='msg') }}"}
"#,
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    // The reasons; the message around them is sandball's own (ansible-core's: "Task
    // failed: Syntax error in template: …").
    let reasons = [
        "Missing key-value separator `:` in '#jinja2:' override pair ' lstrip_blocks=True'.",
        "Empty '#jinja2:' override pair not allowed.",
        "Invalid '#jinja2:' override key 'bogus'.",
        "Missing newline after '#jinja2:' override.",
    ];
    let said = |o: &sandball_e2e::Output| o.task_lines("why").join("\n");
    for why in reasons {
        assert!(said(&ours).contains(why), "{why}: {ours}");
    }
    if let Some(theirs) = sb.ansible_play(&pb, &sb.dir("theirs"), &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        ours.assert_same_recap_as(&theirs);
        for why in reasons {
            assert!(said(&theirs).contains(why), "{why}: {theirs}");
        }
    }
}

#[test]
fn a_line_statement_prefix_is_read_from_the_header_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    sb.write(
        "templates/lines.j2",
        "#jinja2: line_statement_prefix:\":\"\n: for i in [1, 2]\nitem {{ i }}\n: endfor\n: if true\nyes\n: endif\n",
    );
    let pb = sb.write(
        "play.yml",
        r#"- hosts: all
  gather_facts: false
  tasks:
    - name: written
      template: {src: lines.j2, dest: "{{ work }}/lines.out"}
    - name: what was written
      debug: {msg: "{{ lookup('file', work ~ '/lines.out', rstrip=false) }}"}
    - name: looked up
      debug: {msg: "{{ lookup('template', 'lines.j2') }}"}
"#,
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    assert!(
        ours.task_lines("what was written")
            .join("\n")
            .contains(r#""msg": "item 1\nitem 2\nyes\n""#),
        "{ours}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &sb.dir("theirs"), &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        ours.assert_same_recap_as(&theirs)
            .assert_same_results_as(&theirs, &["what was written", "looked up"]);
    }
}
