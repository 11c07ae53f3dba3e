//! `!vault` values no password of the run opens, compared with ansible-playbook 2.19:
//! reading them is no error, using one fails the task that uses it ("Attempt to use
//! undecryptable variable: …"), while the `vault_encrypted` test and the `unvault`
//! filter take one; the `vault` and `unvault` filters with a given salt make the same
//! vault text as ansible-core's.

use sandball_e2e::Sandbox;

#[test]
fn undecryptable_vault_values_fail_only_where_they_are_used_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let pw = sb.write("pw.txt", "the password\n");
    let pw_flag = pw.display().to_string();
    let made = sb
        .sandball([
            "vault",
            "encrypt_string",
            "--vault-password-file",
            pw_flag.as_str(),
            "hidden text",
            "--name",
            "hidden",
        ])
        .run();
    made.assert_code(0);
    sb.write(
        "secrets.yml",
        &format!("{}\nplain: shown\n", made.stdout.trim_end()),
    );
    let inline: String = made
        .stdout
        .lines()
        .skip(1)
        .map(|l| format!("      {l}\n"))
        .collect();
    let pb = sb.write(
        "play.yml",
        &format!(
            r#"- hosts: all
  gather_facts: false
  vars_files: [secrets.yml]
  vars:
    holder: {{fine: ok, bad: "{{{{ hidden }}}}"}}
  tasks:
    - name: unused vaulted values do not matter
      debug: {{msg: "{{{{ plain }}}}"}}
    - name: using one fails
      debug: {{msg: "{{{{ hidden }}}}"}}
      ignore_errors: true
    - name: showing a mapping that holds one fails
      debug: {{var: holder}}
      ignore_errors: true
    - name: serializing it fails
      set_fact: {{x: "{{{{ holder | to_json }}}}"}}
      ignore_errors: true
    - name: text made of it fails
      debug: {{msg: "{{{{ hidden | string }}}}"}}
      ignore_errors: true
    - name: an argument written vaulted fails
      debug:
        msg: !vault |
{inline}      ignore_errors: true
    - name: the test and the filter take it
      debug:
        msg: "{{{{ hidden is vault_encrypted }}}} {{{{ plain is vault_encrypted }}}} {{{{ hidden | unvault('the password') }}}}"
    - name: the vault filter with a salt
      debug:
        msg: "{{{{ 'abc' | vault('k', salt='s1') }}}}"
    - name: with a vault id
      debug:
        msg: "{{{{ 'abc' | vault('k', salt=7, vault_id='lab') }}}}"
    - name: round trip
      debug:
        msg: "{{{{ 'abc' | vault('k') | unvault('k') }}}} {{{{ 'text' | unvault('k') }}}}"
"#
        ),
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    assert_eq!(
        ours.stdout
            .matches("Attempt to use undecryptable variable: Attempting to decrypt but no vault secrets found.")
            .count(),
        // The error and the result of each failing task.
        10,
        "{ours}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        ours.assert_same_recap_as(&theirs).assert_same_results_as(
            &theirs,
            &[
                "unused vaulted values do not matter",
                "the test and the filter take it",
                "the vault filter with a salt",
                "with a vault id",
                "round trip",
            ],
        );
    }
}
