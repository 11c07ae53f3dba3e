//! The `ini`, `csvfile` and `varnames` lookups, the `urlencode`/`urldecode` filters and
//! the old names of Ansible's tests (`is_dir`, `issubset`, `isnan`…), compared with
//! ansible-playbook: values, defaults, inline options, regular expressions, and the
//! results of the lookups' errors.

use sandball_e2e::Sandbox;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    qz_1: a
    qz_2: b
  tasks:
    - name: ini
      debug:
        msg:
          - "{{ lookup('ini', 'value1', section='s1', file='my.ini') }}"
          - "{{ lookup('ini', 'Value2 section=s1 file=my.ini') }}"
          - "{{ lookup('ini', 'long', section='s1', file='my.ini') }}"
          - "{{ lookup('ini', 'path', section='s1', file='my.ini') }}"
          - "{{ lookup('ini', 'path', section='s1', file='my.ini', interpolation=false) }}"
          - "{{ lookup('ini', 'nope', section='s1', file='my.ini', default='dflt') }}"
          - "{{ lookup('ini', 'v[12]', section='s1', file='my.ini', re=true) }}"
          - "{{ lookup('ini', 'flag', section='s2', file='novalue.ini', allow_no_value=true) }}"
          - "{{ lookup('ini', 'a.b', type='properties', file='my.properties') }}"
          - "{{ lookup('ini', 'base', section='s2', file='novalue.ini', allow_none=true) }}"
          - "{{ lookup('ini', 'base', section='s1', file='my.ini') }}"
    - name: ini errors
      debug: {msg: "{{ lookup('ini', 'x', section='missing', file='my.ini') }}"}
      ignore_errors: true
      register: missing_section
    - name: csvfile
      debug:
        msg:
          - "{{ lookup('csvfile', 'Smith', file='people.csv', delimiter=',', col=1) }}"
          - "{{ lookup('csvfile', 'Jane', file='people.csv', delimiter=',', col=0, keycol=1) }}"
          - "{{ lookup('csvfile', 'von Last file=people.csv delimiter=, col=2') }}"
          - "{{ lookup('csvfile', 'fruit', file='tabs.csv', col=1) }}"
          - "{{ lookup('csvfile', 'nope', file='people.csv', delimiter=',', default='none') }}"
          - "{{ query('csvfile', 'nope', file='people.csv', delimiter=',') }}"
    - name: csvfile without a key
      debug: {msg: "{{ lookup('csvfile', file='people.csv') }}"}
      ignore_errors: true
      register: no_key
    - name: varnames
      debug:
        msg:
          - "{{ query('varnames', '^qz_') | sort }}"
          - "{{ lookup('varnames', '^qz_2$') }}"
    - name: bad varnames
      debug: {msg: "{{ lookup('varnames', '*') }}"}
      ignore_errors: true
      register: bad_regex
    - name: url filters
      debug:
        msg:
          - "{{ 'a b/c=é' | urlencode }}"
          - "{{ {'k 1': 'v/2', 'n': 3} | urlencode }}"
          - "{{ [['a', 'b'], ['c', 'd']] | urlencode }}"
          - "{{ [] | urlencode }}"
          - "{{ 'a%20b+c%C3%A9' | urldecode }}"
    - name: old test names
      debug:
        msg:
          - "{{ '/' is is_dir }} {{ '/' is is_file }} {{ '/' is is_abs }} {{ 'x' is is_abs }}"
          - "{{ [1] is issubset([1, 2]) }} {{ [1] is issuperset([1, 2]) }}"
          - "{{ ('nan' | float) is isnan }} {{ 1.0 is nan }} {{ 'x' is nan }}"
    - name: errors
      assert:
        that:
          - "'No section' in missing_section.msg"
          - "'Search key is required but was not found' in no_key.msg"
          - "'nothing to repeat at position 0' in bad_regex.msg"
"#;

#[test]
fn table_lookups_and_url_filters_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write(
        "files/my.ini",
        "[DEFAULT]\nbase = /srv\n\n[s1]\n# comment\nvalue1 = one\nvalue2: two\nlong = first\n  second\npath = %(base)s/app %%\nv1 = x\nv2 = y\n",
    );
    sb.write("files/novalue.ini", "[s2]\nbase = /b\nflag\n");
    sb.write("files/my.properties", "# c\na.b = dotted value\n");
    sb.write(
        "files/people.csv",
        "Smith,Jane,\"x, y\"\nvon Last,Bob,\"say \"\"hi\"\"\"\r\n",
    );
    sb.write("files/tabs.csv", "fruit\tbananas\nveg\tleeks\n");
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    let Some(theirs) = sb.ansible_play(&pb, &work, &[]) else {
        return;
    };
    let theirs = theirs.run();
    ours.assert_same_results_as(
        &theirs,
        &[
            "ini",
            "csvfile",
            "varnames",
            "url filters",
            "old test names",
            "errors",
        ],
    );
    ours.assert_same_recap_as(&theirs);
}

/// `inventory_hostnames` over an inventory with groups: groups, globs, regexes, unions,
/// intersections and exclusions, in inventory order.
#[test]
fn inventory_hostnames_selects_as_in_ansible() {
    let sb = Sandbox::new();
    let inventory = sb.write(
        "hosts.ini",
        "lone ansible_connection=local\n[g1]\nb1 ansible_connection=local\na2 ansible_connection=local\nc3 ansible_connection=local\n[g2]\nc3\nd4 ansible_connection=local\n",
    );
    let pb = sb.write(
        "hosts.yml",
        r#"
- hosts: lone
  gather_facts: false
  tasks:
    - name: patterns
      debug:
        msg:
          - "{{ query('inventory_hostnames', 'g1') }}"
          - "{{ query('inventory_hostnames', 'g1:!a2') }}"
          - "{{ query('inventory_hostnames', 'g1:&g2') }}"
          - "{{ query('inventory_hostnames', 'lone,d*') }}"
          - "{{ query('inventory_hostnames', '~[ab].:!g2') }}"
          - "{{ query('inventory_hostnames', '!g1') }}"
          - "{{ query('inventory_hostnames', 'nothing') }}"
          - "{{ lookup('inventory_hostnames', 'g2') }}"
"#,
    );
    let args = ["-i", inventory.to_str().unwrap(), pb.to_str().unwrap()];
    let ours = sb.sandball(std::iter::once("playbook").chain(args)).run();
    ours.assert_no_panic().assert_code(0);
    let Some(theirs) = sb.ansible_playbook(args) else {
        return;
    };
    let theirs = theirs.run();
    assert_eq!(
        ours.result_lines("patterns"),
        theirs.result_lines("patterns"),
        "{theirs}\n{ours}"
    );
}
