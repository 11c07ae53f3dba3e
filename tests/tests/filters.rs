//! Everyday filters and tests compared with ansible-playbook: the same expressions, the
//! same values shown (chained undefined values under `default` among them; the path
//! filters on the controller's files), and the same failures, worded the same, where a
//! filter refuses its input.

use sandball_e2e::{Output, Sandbox};

const EXPRESSIONS: &[&str] = &[
    "[1,2,3] | random is number",
    "[1,2,3] | shuffle | length",
    "true | ternary('a','b')",
    "[1,2] | zip(['a','b']) | list",
    "[1,[2,[3]]] | flatten",
    "[1,1,2] | unique",
    "[1,2] | union([2,3])",
    "[1,2] | difference([2])",
    "[{'key':'a','value':1}] | items2dict",
    "{'a':1} | to_nice_json",
    "'%Y' | strftime(0, utc=true)",
    "('2020-01-02 03:04:05' | to_datetime).year",
    "'http://u:p@a.B:8080/c?d=1#f' | urlsplit('hostname')",
    "'http://a.b:8080/c?d=1#f' | urlsplit('query')",
    "'x\\ny' | comment",
    "'x' | comment('c')",
    "1048576 | human_readable",
    "1500 | human_readable",
    "'1K' | human_to_bytes",
    "'2 MB' | human_to_bytes",
    "'C:/x/y.txt' | win_basename",
    "'C:/x/y.txt' | win_dirname",
    "[1,2,3] | combinations(2) | list",
    "'abc' | permutations | list",
    "[1,2,3] | permutations(2) | map('join', '-') | list",
    "[{'n':'a','g':[1,2]}, {'n':'b','g':[]}] | subelements('g')",
    "{'x': {'d': {'g': [3]}}} | subelements('d.g')",
    "'/a//b/../c/.' | normpath",
    "'/a/b/c' | relpath('/a/d')",
    "['/a/b/c', '/a/b/d', '/a/bc'] | commonpath",
    "'$HOME/x ${SANDBALL_NOT_SET}' | expandvars",
    "(playbook_dir ~ '/*.yml') | fileglob | map('basename') | list",
    "(playbook_dir ~ '/work/../play.yml') | realpath == (playbook_dir | realpath) ~ '/play.yml'",
    "'http://x.org/p' is url",
    "'mailto:x@y.z' is url",
    "'urn:isbn:1' is urn",
    "'mailto:x@y.z' is uri(['mailto'])",
    "'Ansible - く\\n' | b64encode(encoding='utf-16-le')",
    "'QQBuAHMAaQBiAGwAZQAgAC0AIABPMAoA' | b64decode(encoding='utf-16-le')",
    "'https://www.python.org/example-1' | b64encode(urlsafe=True)",
    "'aHR0cHM6Ly93d3cucHl0aG9uLm9yZy9leGFtcGxlLTE=' | b64decode(urlsafe=True)",
    "None | combine",
    "[None, {'a': 1}, 'null'] | combine({'b': 2}, None)",
    "'a: yes\\nb: 017\\nc: 0o17\\nd: 1:20\\ne: 1_000' | from_yaml",
    "'--- 1\\n---\\n--- [2]' | from_yaml_all | list",
    "None | from_yaml_all",
    // Seeded draws are Python's.
    "59 | random(seed='web1')",
    "59 | random(seed=1337)",
    "20 | random(start=10, step=3, seed='s')",
    "['a', 'b', 'c'] | random(seed=7)",
    "[1, 2, 3, 4, 5] | shuffle(seed='a')",
    "22 | shuffle",
    "'hey' | password_hash('sha256', 'abcdefgh', rounds=5000)",
    // Parameters Python lets be named.
    "'x' | hash(hashtype='md5')",
    "'a.b' | regex_escape(re_type='posix_basic')",
    "none | ternary('y', 'n', none_val='z')",
    "8 | log(base=2)",
    "9 | root(base=2)",
    "[1, 2, 3] | permutations(r=2) | list",
    "'http://a.b/c' | urlsplit(query='path')",
    "'abc' | regex_replace(pattern='b', replacement='x')",
    "'%Y' | strftime(second=0, utc=true)",
    "('2020-01-02' | to_datetime(format='%Y-%m-%d')).year",
    "1 | mandatory(msg='m')",
    // An attribute of an undefined value is undefined where the template guards.
    "nope.attr | default('x')",
    "({'k':'v'}).missing.deeper | d('y')",
    "nope.attr is defined",
    "nope.a.b | default('z', true)",
    // Tests.
    "[1, 0] is any",
    "[1, 0] is all",
    "{'failed': false} is successful",
    "{'finished': 0} is finished",
    "{'timedout': {'period': 2}} is timedout",
];

/// Expressions whose filter refuses its input.
const REFUSED: &[&str] = &[
    "True | dict2items",
    "True | items2dict",
    "[True] | items2dict",
    "[{'key': 'a'}] | items2dict",
    "True | path_join",
    "'hey' | password_hash('msdcc')",
    "'hey' | password_hash(salt_size=[999])",
    "'hey' | password_hash(rounds=1)",
    "'a' | regex_escape(re_type='haha')",
    "'a' | regex_escape(re_type='posix_extended')",
    "'foo=bar=baz' | regex_replace('=', '', mandatory_count=1)",
    "None | random",
    "[1, 2] | random(start=1)",
    "{} | combine(foo='bar')",
    "'%Y' | strftime('foo')",
    "'x' | hash('unsupported_hash_type')",
    "1 | subelements('g')",
    "[{'n': 'a'}] | subelements('g')",
];

/// Shows each expression in a task of its own (failures ignored) under sandball, which
/// must exit 0, and under ansible-playbook: each task must print the same `lines`.
fn same_as_ansible(expressions: &[&str], lines: for<'a> fn(&'a Output, &str) -> Vec<&'a str>) {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let mut play = String::from("- hosts: all\n  gather_facts: false\n  tasks:\n");
    for (i, e) in expressions.iter().enumerate() {
        play.push_str(&format!(
            "    - name: f{i}\n      debug: {{msg: \"{{{{ {e} }}}}\"}}\n      ignore_errors: true\n"
        ));
    }
    let pb = sb.write("play.yml", &play);
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        for (i, expression) in expressions.iter().enumerate() {
            let task = format!("f{i}");
            assert_eq!(lines(&ours, &task), lines(&theirs, &task), "{expression}");
        }
    }
}

#[test]
fn filters_give_what_ansible_gives() {
    same_as_ansible(EXPRESSIONS, Output::task_lines);
}

#[test]
fn filters_refuse_as_ansible_does() {
    // The results: ansible-core's error block adds the chain of causes.
    same_as_ansible(REFUSED, Output::result_lines);
}
