//! The `template` action: rendered on the controller, written on the node by the `copy`
//! component — compared with ansible-playbook on the files written, the recap of a
//! first run, a second (idempotent) run and a dry run, and the diff.

use sandball_e2e::Sandbox;
use std::path::Path;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    app_port: 8080
    users: [ann, bob]
  tasks:
    - name: render
      template:
        src: app.conf.j2
        dest: "{{ work }}/{{ inventory_hostname }}.conf"
        mode: "0640"
    - name: into a directory
      template:
        src: sub/plain.txt.j2
        dest: "{{ work }}/"
        lstrip_blocks: true
      when: inventory_hostname == 'alpha'
    - name: custom delimiters
      template:
        src: delims.j2
        dest: "{{ work }}/{{ inventory_hostname }}.delims"
        variable_start_string: "[%"
        variable_end_string: "%]"
"#;

const APP: &str = "# {{ ansible_managed }}
[server]
port = {{ app_port }}
host = {{ inventory_hostname }}
{% for u in users %}
user = {{ u }}
{% endfor %}
{% include 'footer.j2' %}
";

fn project(sb: &Sandbox) -> std::path::PathBuf {
    sb.write("templates/app.conf.j2", APP);
    sb.write(
        "templates/footer.j2",
        "# path {{ template_destpath | basename }}\n",
    );
    sb.write(
        "templates/sub/plain.txt.j2",
        "    {% if true %}\nplain {{ app_port + 1 }}\n    {% endif %}\n",
    );
    sb.write("templates/delims.j2", "[% app_port %] {{ untouched }}\n");
    sb.write("play.yml", PLAY)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn template_writes_what_ansible_writes_and_is_idempotent() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let pb = project(&sb);
    let ours = sb.dir("ours");
    let first = sb.play(&pb, &ours, &[]).run();
    first.assert_no_panic().assert_code(0);
    assert_eq!(first.host("alpha").changed, 3, "{first}");
    assert_eq!(first.host("beta").changed, 2, "{first}");
    let alpha = read(&ours.join("alpha.conf"));
    assert_eq!(
        alpha,
        "# Ansible managed\n[server]\nport = 8080\nhost = alpha\nuser = ann\nuser = bob\n# path alpha.conf\n"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(ours.join("alpha.conf"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o640);
    assert_eq!(read(&ours.join("plain.txt.j2")), "plain 8081\n");
    assert_eq!(read(&ours.join("beta.delims")), "8080 {{ untouched }}\n");

    let second = sb.play(&pb, &ours, &[]).run();
    second.assert_no_panic().assert_code(0);
    assert_eq!(second.host("alpha").changed, 0, "{second}");

    // A dry run with another port says what would change and changes nothing.
    let dry = sb
        .play(&pb, &ours, &["-C", "-D", "-e", r#"{"app_port": 9090}"#])
        .run();
    dry.assert_no_panic().assert_code(0);
    assert_eq!(
        read(&ours.join("alpha.conf")),
        alpha,
        "check mode wrote the file"
    );
    assert!(dry.stdout.contains("-port = 8080\n+port = 9090"), "{dry}");

    if let Some(theirs) = sb.ansible_play(&pb, &sb.dir("theirs"), &[]) {
        let theirs_first = theirs.run();
        assert_eq!(theirs_first.code, 0, "{theirs_first}");
        first.assert_same_recap_as(&theirs_first);
        let dir = sb.path().join("theirs");
        for file in ["alpha.conf", "beta.conf", "plain.txt.j2", "alpha.delims"] {
            assert_eq!(
                read(&ours.join(file)),
                read(&dir.join(file)),
                "{file} differs from ansible's"
            );
        }
        let theirs_second = sb.ansible_play(&pb, &dir, &[]).unwrap().run();
        second.assert_same_recap_as(&theirs_second);
        let theirs_dry = sb
            .ansible_play(&pb, &dir, &["-C", "-D", "-e", r#"{"app_port": 9090}"#])
            .unwrap()
            .run();
        dry.assert_same_recap_as(&theirs_dry);
    }
}

#[test]
fn template_errors_name_the_template() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write("templates/bad.j2", "fine\n{{ not_defined_anywhere }}\n");
    let pb = sb.write(
        "bad.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - template: {src: bad.j2, dest: \"{{ work }}/x\"}\n      ignore_errors: true\n    - template: {src: nope.j2, dest: \"{{ work }}/y\"}\n",
    );
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(2);
    assert!(
        out.stdout.contains("'not_defined_anywhere' is undefined"),
        "{out}"
    );
    assert!(out.stdout.contains("templates/bad.j2"), "{out}");
    assert!(
        out.stdout.contains("Could not find or access 'nope.j2'"),
        "{out}"
    );
    assert!(!work.join("x").exists(), "a failed template wrote its file");
}

/// `output_encoding`: the bytes each character set gives, a character the set cannot
/// hold failing the task in Python's words, and a second run changing nothing.
#[test]
fn output_encoding_writes_the_bytes_ansible_writes() {
    const ENCODINGS: &[&str] = &[
        "",
        "utf-16",
        "UTF-16-LE",
        "utf_32_be",
        "cp1252",
        "iso8859-15",
        "utf-8-sig",
    ];
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write("templates/t.j2", "café € {{ word }}\n");
    let pb = sb.write(
        "enc.yml",
        &format!(
            r#"- hosts: all
  gather_facts: false
  vars: {{word: ok}}
  tasks:
    - template: {{src: t.j2, dest: "{{{{ work }}}}/out-{{{{ item }}}}.txt", output_encoding: "{{{{ item }}}}"}}
      loop: {ENCODINGS:?}
    - template: {{src: t.j2, dest: "{{{{ work }}}}/bad.txt", output_encoding: latin-1}}
      ignore_errors: true
"#
        ),
    );
    let ours = sb.dir("ours");
    let first = sb.play(&pb, &ours, &[]).run();
    first.assert_no_panic().assert_code(0);
    assert!(
        first.stdout.contains(
            r"Task failed: 'latin-1' codec can't encode character '\\u20ac' in position 5: ordinal not in range(256)"
        ),
        "{first}"
    );
    assert!(
        !ours.join("bad.txt").exists(),
        "a failed template wrote its file"
    );
    let bytes = |dir: &Path, e: &str| {
        let file = dir.join(format!("out-{e}.txt"));
        std::fs::read(&file).unwrap_or_else(|err| panic!("{}: {err}", file.display()))
    };
    assert_eq!(bytes(&ours, "cp1252"), b"caf\xe9 \x80 ok\n");
    assert_eq!(&bytes(&ours, "utf-16")[..4], b"\xff\xfec\x00");
    let second = sb.play(&pb, &ours, &[]).run();
    second.assert_no_panic().assert_code(0);
    assert_eq!(second.host("alpha").changed, 0, "{second}");
    if let Some(theirs) = sb.ansible_play(&pb, &sb.dir("theirs"), &[]) {
        let theirs_first = theirs.run();
        first.assert_same_recap_as(&theirs_first);
        let dir = sb.path().join("theirs");
        for e in ENCODINGS {
            assert_eq!(
                bytes(&ours, e),
                bytes(&dir, e),
                "{e:?} differs from ansible's"
            );
        }
        let theirs_second = sb.ansible_play(&pb, &dir, &[]).unwrap().run();
        second.assert_same_recap_as(&theirs_second);
    }
}
