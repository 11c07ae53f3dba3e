//! ansible.cfg, read as Ansible reads it: `ANSIBLE_CONFIG`, then `./ansible.cfg`; its
//! `inventory`, `roles_path` (relative to the file) and `forks` used where no flag
//! says otherwise, the environment winning over the file and flags over both —
//! compared with ansible-playbook.

use sandball_e2e::Sandbox;

const CFG: &str =
    "[defaults]\ninventory = inv/hosts.ini\nroles_path = myroles\nforks = 1\nnocows = 1\n";

#[test]
fn ansible_cfg_settings_are_used_as_in_ansible() {
    let sb = Sandbox::new();
    sb.write(
        "inv/hosts.ini",
        "[web]\nalpha ansible_connection=local\nbeta ansible_connection=local\n",
    );
    sb.write(
        "myroles/hello/tasks/main.yml",
        "- name: hello\n  debug: {msg: \"hello from {{ inventory_hostname }}\"}\n",
    );
    let cfg = sb.write("site.cfg", CFG);
    let pb = sb.write(
        "play.yml",
        "- hosts: web\n  gather_facts: false\n  roles: [hello]\n",
    );
    let pb = pb.display().to_string();
    let ours = sb
        .sandball(["playbook", pb.as_str(), "-v"])
        .env("ANSIBLE_CONFIG", &cfg)
        .run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"msg\": \"hello from beta\"");
    ours.assert_stderr_has("[defaults] nocows in the configuration file is not used by sandball");
    if let Some(theirs) = sb.ansible_playbook([pb.as_str()]) {
        let theirs = theirs.env("ANSIBLE_CONFIG", &cfg).run();
        ours.assert_same_recap_as(&theirs);
    }
    // The environment wins over the file, a flag over both.
    sb.write("inv/other.ini", "[web]\ngamma ansible_connection=local\n");
    let other = sb.path().join("inv/other.ini").display().to_string();
    let env = sb
        .sandball(["playbook", pb.as_str()])
        .env("ANSIBLE_CONFIG", &cfg)
        .env("ANSIBLE_INVENTORY", &other)
        .run();
    env.assert_no_panic().assert_code(0);
    env.assert_stdout_has("hello from gamma");
    let flag = sb
        .sandball([
            "playbook",
            pb.as_str(),
            "-i",
            "inv/hosts.ini",
            "-l",
            "alpha",
        ])
        .env("ANSIBLE_CONFIG", &cfg)
        .env("ANSIBLE_INVENTORY", &other)
        .run();
    flag.assert_no_panic().assert_code(0);
    flag.assert_stdout_has("hello from alpha");
    // ./ansible.cfg is read when nothing names another.
    sb.write("ansible.cfg", CFG);
    let here = sb.sandball(["playbook", pb.as_str()]).run();
    here.assert_no_panic().assert_code(0);
    here.assert_stdout_has("hello from alpha");
    // A broken file is an error naming its line.
    let bad = sb.write("bad.cfg", "[defaults\n");
    let broken = sb
        .sandball(["playbook", pb.as_str()])
        .env("ANSIBLE_CONFIG", &bad)
        .run();
    broken.assert_no_panic();
    assert_ne!(broken.code, 0, "{broken}");
    broken.assert_stderr_has("bad.cfg:1");
}

#[test]
fn config_dump_view_and_list_say_where_each_setting_comes_from() {
    let sb = Sandbox::new();
    let cfg = sb.write("my.cfg", "[defaults]\nforks = 7\ntimeout = 5\n");
    // The harness names the venv's Python and its ansible-core release for every run;
    // here, only the two settings.
    let dump = sb
        .sandball(["config", "dump", "--only-changed"])
        .env("ANSIBLE_CONFIG", &cfg)
        .env("ANSIBLE_TIMEOUT", "3")
        .env_remove("ANSIBLE_PYTHON_INTERPRETER")
        .env_remove("SANDBALL_ANSIBLE_CORE_VERSION")
        .run();
    dump.assert_no_panic().assert_code(0);
    assert_eq!(
        dump.stdout,
        format!(
            "ANSIBLE_FORKS({}) = 7\nANSIBLE_TIMEOUT(env: ANSIBLE_TIMEOUT) = 3\n",
            cfg.display()
        ),
        "{dump}"
    );
    let all = sb
        .sandball(["config", "dump"])
        .env("ANSIBLE_CONFIG", &cfg)
        .run();
    all.assert_stdout_has("ANSIBLE_BECOME_USER(default) = root\n")
        .assert_stdout_has("ANSIBLE_TIMEOUT(")
        .assert_stdout_has(") = 5\n");
    let view = sb
        .sandball(["config", "view"])
        .env("ANSIBLE_CONFIG", &cfg)
        .run();
    assert_eq!(
        view.stdout, "[defaults]\nforks = 7\ntimeout = 5\n",
        "{view}"
    );
    let list = sb.sandball(["config", "list"]).run();
    list.assert_code(0).assert_stdout_has(
        "ANSIBLE_FORKS:\n  ini: [defaults] forks\n  env: ANSIBLE_FORKS\n  default: 50\n",
    );
    // Without a file, view says so (unless the machine has one of its own).
    if !std::path::Path::new("/etc/ansible/ansible.cfg").exists() {
        let none = sb.sandball(["config", "view"]).env("HOME", sb.path()).run();
        assert_ne!(none.code, 0, "{none}");
        none.assert_stderr_has("no config file");
    }
}
