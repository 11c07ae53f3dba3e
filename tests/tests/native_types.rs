//! What type a template gives, compared with ansible-playbook 2.19: a template whose
//! whole output is one value that is no string gives that value (a loop over one number,
//! a list printed inside `{% if %}`, a number after `{% set %}`, `none`), any other
//! output (several values, text around one) is text.

use sandball_e2e::Sandbox;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    one_int: "{% for x in [1] %}{{ x }}{% endfor %}"
    two_ints: "{% for x in [1, 2] %}{{ x }}{% endfor %}"
    joined: "{{ 1 }}{{ 2 }}"
    one_str: "{% for x in ['a'] %}{{ x }}{% endfor %}"
    list_in_if: "{% if true %}{{ [1, 2] }}{% endif %}"
    spaced: " {{ 1 }}"
    trailing: "{% for x in [1] %}{{ x }} {% endfor %}"
    quoted: "{{ '1' }}"
    after_set: "{% set y = 5 %}{{ y }}"
    none_in_if: "{% if true %}{{ none }}{% endif %}"
    dict_in_for: "{% for d in [{'a': 1}] %}{{ d }}{% endfor %}"
  tasks:
    - name: types
      debug:
        msg: "{{ [one_int, two_ints, joined, one_str, list_in_if, spaced, trailing, quoted,
                 after_set, none_in_if, dict_in_for] | map('type_debug') }}"
    - name: values
      debug:
        msg: "{{ [one_int + 1, list_in_if | sum, after_set * 2, dict_in_for.a] }}"
"#;

#[test]
fn a_template_of_one_value_gives_that_value() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"dict\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        ours.assert_same_recap_as(&theirs)
            .assert_same_results_as(&theirs, &["types", "values"]);
    }
}
