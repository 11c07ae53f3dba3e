//! Python filter, test and lookup plugins — a playbook's `filter_plugins/`,
//! `test_plugins/` and `lookup_plugins/`, a role's, a collection's in the playbook's
//! `collections/`, and ansible-core's own — run as ansible-playbook runs them, compared
//! with it line for line.

use sandball_e2e::Sandbox;

const FILTERS: &str = r#"
def shout(value, times=1, suffix="!"):
    return (str(value).upper() + suffix) * times


def pairs(value):
    return sorted(value.items())


def boom(value):
    raise ValueError("boom on %r" % (value,))


class FilterModule(object):
    def filters(self):
        return {"shout": shout, "pairs": pairs, "boom": boom}
"#;

const TESTS: &str = r#"
def multiple(value, base=2):
    return value % base == 0


class TestModule(object):
    def tests(self):
        return {"multiple_of": multiple}
"#;

const LOOKUP: &str = r#"
from ansible.plugins.lookup import LookupBase


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        return ["%s%s%s" % (kwargs.get("prefix", ""), t, variables["mark"]) for t in terms]
"#;

const ROLE_FILTERS: &str = r#"
class FilterModule(object):
    def filters(self):
        return {"role_twice": lambda v: [v, v]}
"#;

const COLLECTION_FILTERS: &str = r#"
class FilterModule(object):
    def filters(self):
        return {"wrap": lambda v, left="<", right=">": left + str(v) + right}
"#;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    mark: "?"
  roles:
    - doubler
  tasks:
    - name: playbook filters and tests
      debug:
        msg: "{{ 'hi' | shout }} {{ 'x' | shout(2, suffix='.') }} {{ {'b': 2, 'a': 1} | pairs }} {{ 4 is multiple_of }} {{ 9 is multiple_of 3 }} {{ 5 is not multiple_of(5) }}"
    - name: a lookup plugin, in a template and as a loop
      debug:
        msg: "{{ lookup('tag', 'a', 'b') }} {{ query('tag', 'c', prefix='>') }} {{ item }}"
      with_tag: [p]
    - name: a collection's filter by its full name, and ansible-core's own
      debug:
        msg: "{{ 3 | demo.tools.wrap }} {{ 3 | demo.tools.wrap(left='[', right=']') }} {{ [[1], [2, [3]]] | ansible.builtin.flatten }}"
    - name: a collection's filter named in map
      debug:
        msg: "{{ [1, 2] | map('demo.tools.wrap') | list }}"
    - name: a failing filter
      debug:
        msg: "{{ 'x' | boom }}"
      ignore_errors: true
    - name: a filter nobody has
      debug:
        msg: "{{ 'x' | nosuch }}"
      ignore_errors: true
"#;

/// A playbook directory with plugins beside it, in a role and in a collection.
fn write_playbook(sb: &Sandbox) -> std::path::PathBuf {
    sb.write("filter_plugins/mine.py", FILTERS);
    sb.write("test_plugins/mine.py", TESTS);
    sb.write("lookup_plugins/tag.py", LOOKUP);
    sb.write(
        "roles/doubler/tasks/main.yml",
        "- debug: {msg: \"{{ 'r' | role_twice }}\"}\n",
    );
    sb.write("roles/doubler/filter_plugins/twice.py", ROLE_FILTERS);
    sb.write(
        "collections/ansible_collections/demo/tools/plugins/filter/wrap.py",
        COLLECTION_FILTERS,
    );
    sb.write(
        "collections/ansible_collections/demo/tools/galaxy.yml",
        "namespace: demo\nname: tools\nversion: 1.0.0\n",
    );
    sb.write("play.yml", PLAY)
}

#[test]
fn python_plugins_run_as_under_ansible_playbook() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    let pb = write_playbook(&sb);
    let work = sb.dir("work");
    let out = sb.play_with_core(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"msg\": \"HI! X.X. [['a', 1], ['b', 2]] True True False\"")
        .assert_stdout_has("\"msg\": \"a?,b? ['>c?'] p?\"")
        .assert_stdout_has("\"msg\": \"<3> [3] [1, 2, 3]\"")
        .assert_stdout_has("The filter plugin 'boom' failed: boom on 'x'")
        .assert_stdout_has("No filter named 'nosuch'");
    assert_eq!(out.host("alpha").ignored, 2, "{out}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs);
        for task in [
            "playbook filters and tests",
            "a lookup plugin, in a template and as a loop",
            "a collection's filter by its full name, and ansible-core's own",
            "a collection's filter named in map",
        ] {
            out.assert_same_results_as(&theirs, &[task]);
        }
    }
}

#[test]
fn a_loop_of_no_lookup_is_refused_as_ansible_refuses_it() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: {msg: \"{{ item }}\"}\n      with_nosuch: [1]\n",
    );
    let work = sb.dir("work");
    let out = sb.play_with_core(&pb, &work, &[]).run();
    out.assert_no_panic()
        .assert_code(4)
        .assert_stderr_has("'with_nosuch' is not a valid attribute for a Task");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        theirs.assert_code(4);
        assert!(
            theirs
                .stderr
                .contains("'with_nosuch' is not a valid attribute for a Task"),
            "{theirs}"
        );
    }
}
