//! Python's `%` in templates, compared with ansible-playbook: printf-style formatting
//! of strings (every conversion, flags, `*` widths, a tuple, a single value or a
//! mapping), the `format` filter, `with_sequence`'s format, `%` in conditions, in
//! template files (macros, `{% set %}`, other delimiters), the modulo of numbers, and
//! the errors Python raises (checked by an `assert` that must hold under both tools).

use sandball_e2e::Sandbox;
use sandball_e2e::compare::{failing_tasks, same_as_ansible};

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    a: 7
    b: 3
    name: web
    d: {x: 1, y: "two", z: [1, 'a'], n: null, t: true}
    lst: [1, 'a', null]
    fl: 3.14159
    label: "{{ '%s-%03d' % ('node', a) }}"
  tasks:
    - name: strings formatted
      debug:
        msg:
          - "{{ '%s-%02d' % (name, a) }}"
          - "{{ '%(x)s/%(y)s/%(z)s/%(n)s/%(t)s' % d }}"
          - "{{ '%r %s %a' % ('é', 'é', 'é') }}"
          - "{{ ['%s' % lst, '%s' % (lst,), '%s' % (1,), '%r' % d, '%s' % none, '%s' % true] }}"
          - "{{ '%d %i %u' % (fl, -2, true) }}"
          - "{{ '%5.2f|%-8.3e|%E|%g|%G|%g|%g|%g' % (fl, 12345.678, 0.00001234, 1e20, 1e-10, 100000, 1000000, 0.0001) }}"
          - "{{ '%x %X %o %#x %#o %#X %+d % d %05d %-5d| %.3d' % (255, 255, 8, 255, 8, 255, 5, 5, -42, 42, 7) }}"
          - "{{ '%c%c %%' % (65, 'b') }} {{ '%c' % 233 }}"
          - "{{ '%*d|%-*s|%.*f' % (5, 42, 4, 'ab', 2, 2.71828) }}"
          - "{{ '%.2s|%10.3s|%10s|%-10s|' % ('abcdef', 'xyz123', 'hi', 'hi') }}"
          - "{{ 'x' ~ '%s' % a ~ 'y' }} {{ '%s' % a * 2 }} {{ '%s' % name | upper }}"
          - "{{ 'abc' % {} }} {{ 'abc' % [] }} {{ 'abc' % () }}"
          - "{{ '%.0f %.1f %.0f %.0f %.2f' % (0.5, 0.25, 1.5, 2.5, 2.675) }}"
          - "{{ '%s' % 1.0 }} {{ '%s' % 1e16 }} {{ '%r' % 0.1 }} {{ '%.3g' % 1234.5 }} {{ '%#g' % 1.0 }} {{ '%#.0f' % 3 }} {{ '%#.0e' % 3 }}"
          - "{{ '%-+8.2f|%+08.2f|% 08.2f|%08.2e' % (3.14159, -3.14159, 3.14159, 31415.9) }}"
          - "{{ '%x' % -255 }} {{ '%#o' % 0 }} {{ '%o' % -8 }} {{ '%e' % 0 }} {{ '%g' % 0.0 }} {{ '%g' % 123456789 }} {{ '%G' % 1.5e-7 }}"
          - "{{ '%.10g|%.1g|%.0g|%g|%.2e' % (1/3, 0.05, 123, 1.0e15, 9.995) }}"
          - "{{ '%#5x|%#05x|%-#6o|%.3x|%08.3d|%5c|%-3c|%05s|%+s' % (255, 255, 8, 10, -5, 'a', 66, 'a', 'b') }}"
          - "{{ '%s %(x)s' % d }} {{ '%f' % -0.0 }} {{ '%5.1f%%' % 99.5 }}"
    - name: numbers
      debug:
        msg: "{{ [a % b, -7 % 3, 7 % -3, 7.5 % 2, -7.5 % 2, true % 2, ('%d' % 5) | int + 1] }}"
    - name: elsewhere
      debug:
        msg:
          - "{{ lookup('template', 'fmt.j2') }}"
          - "{{ lookup('template', 'other.j2') }}"
          - "{{ label }}"
          - "{{ '%s and %s' | format('x', true) }} {{ '%(a)s/%(b)r' | format(a=1, b='q') }}"
          - "{{ query('sequence', 'start=8 end=10 format=h%02x') }}"
          - "{% set x = '%03d' % 5 %}{{ x }}"
    - name: in conditions
      debug: {msg: ok}
      when: "'%d' % a == '7' and a % 2 == 1"
BAD
    - name: the errors are Python's
      assert:
        that:
          - bad | map(attribute='failed') | unique == [true]
          - "'not enough arguments for format string' in bad[0].msg"
          - "'%d format: a real number is required, not str' in bad[1].msg"
          - "'not enough arguments for format string' in bad[2].msg"
          - "'not all arguments converted during string formatting' in bad[3].msg"
          - "'format requires a mapping' in bad[4].msg"
          - "bad[5].msg is search(\"'q'$\")"
          - "\"unsupported format character 'z' (0x7a) at index 1\" in bad[6].msg"
          - "'incomplete format' in bad[7].msg"
          - "'%x format: an integer is required, not float' in bad[8].msg"
          - "'must be real number, not str' in bad[9].msg"
          - "'%c requires int or char' in bad[10].msg"
          - "'not all arguments converted during string formatting' in bad[11].msg"
          - "\"'undefined_var' is undefined\" in bad[12].msg"
          - "'%d format: a real number is required, not NoneType' in bad[13].msg"
          - "'integer modulo by zero' in bad[14].msg"
          - "'float modulo' in bad[15].msg"
          - "'not enough arguments for format string' in bad[16].msg"
          - "'* wants int' in bad[17].msg"
          - "'not enough arguments for format string' in bad[18].msg"
          - "'not enough arguments for format string' in bad[19].msg"
          - "\"unsupported operand type(s) for %: 'list' and 'int'\" in bad[20].msg"
          - "\"can't handle positional and keyword arguments at the same time\" in bad[21].msg"
          - "'%c arg not in range(0x110000)' in bad[22].msg"
          - "\"unsupported format character '%' (0x25) at index 2\" in bad[23].msg"
"#;

/// Expressions Python refuses, each set by a task of its own whose result lands in `bad`.
const BAD: &[&str] = &[
    "'%s%s' % (a, b) | upper",
    "'%d' % 'a'",
    "'%s %s' % (1,)",
    "'%s' % (1, 2)",
    "'%(x)s' % (1,)",
    "'%(q)s' % d",
    "'%z' % 1",
    "'abc %' % 1",
    "'%x' % 1.5",
    "'%f' % 'a'",
    "'%c' % 'ab'",
    "'abc' % 5",
    "'%s' % undefined_var",
    "'%d' % none",
    "5 % 0",
    "5.0 % 0",
    "'%s %s' % [1, 2]",
    "'%*d' % ('a', 1)",
    "'%s' % ()",
    "'%(x)s %s' % d",
    "[1] % 2",
    "'%s' | format(1, a=2)",
    "'%c' % -1",
    "'%5%|' % (1,)",
];

#[test]
fn percent_formats_as_python_does() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    sb.write(
        "templates/fmt.j2",
        "{% set width = 6 %}\n{% macro row(k, v) %}{{ '%-*s=%s' % (width, k, v) }}{% endmacro %}\n\
         {% for k in ['a', 'bb'] %}\n{{ row(k, loop.index % 2) }}\n{% endfor %}\n{{ '%(x)05.1f%%' % {'x': 12.345} }}\n",
    );
    sb.write(
        "templates/other.j2",
        "#jinja2: variable_start_string:'[%', variable_end_string:'%]'\n[% '%s|%s' % ('<', '>') %] [% 10 % 4 %]",
    );
    let bad = failing_tasks("bad", BAD);
    let pb = sb.write("play.yml", &PLAY.replace("BAD\n", &bad));
    same_as_ansible(
        &sb,
        &pb,
        &[
            "strings formatted",
            "numbers",
            "elsewhere",
            "in conditions",
            "the errors are Python's",
        ],
    );
}
