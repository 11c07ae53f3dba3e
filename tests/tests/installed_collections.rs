//! Collections as users install them: a collection built and installed by
//! `ansible-galaxy` into `$ANSIBLE_HOME/collections` whose role is named by its FQCN in
//! `roles:`, `import_role` and `include_role`; a playbook-adjacent collection
//! (`collections/ansible_collections/local/colors`) whose test and filter plugins are
//! used by their full names; the same from a collection `ansible-galaxy` installed
//! beside the playbook and from `collections_path` in `ansible.cfg` — compared with
//! ansible-playbook.

use sandball_e2e::Sandbox;
use std::path::Path;

const ROLE_TASKS: &str = r#"
- name: site
  debug:
    msg: "{{ role_name }} {{ ansible_role_name }} {{ ansible_collection_name }}"
"#;

const TEST_PLUGIN: &str = r#"
def blue(value):
    return value == "blue"


class TestModule(object):
    def tests(self):
        return {"blue": blue}
"#;

const FILTER_PLUGIN: &str = r#"
class FilterModule(object):
    def filters(self):
        return {"paint": lambda value, colour="blue": colour + " " + str(value)}
"#;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  roles:
    - acme.web.site
  tasks:
    - import_role: {name: acme.web.site}
    - include_role: {name: acme.web.site}
    - name: a collection's test and filter
      debug:
        msg: "{{ 'blue' is local.colors.blue }} {{ 'red' is local.colors.blue }} {{ ['blue', 'red'] | select('local.colors.blue') | list }} {{ 'x' | local.colors.paint }}"
    - name: in a condition
      debug: {msg: blue}
      when: colour is local.colors.blue
      vars: {colour: blue}
    - name: in an assertion
      assert:
        that: "'red' is not local.colors.blue"
"#;

/// Installs the collection `acme.web` (a role `site`) into the collections path
/// `installed` (`ANSIBLE_HOME`'s `collections`, a playbook's `collections/`…) as
/// `ansible-galaxy` does: built, then installed from its tarball (when ansible-core is
/// not there, its files are written in place).
fn install_acme_web(sb: &Sandbox, installed: &Path) {
    let source = "src/acme/web";
    sb.write(
        &format!("{source}/galaxy.yml"),
        "namespace: acme\nname: web\nversion: 1.0.0\nreadme: README.md\nauthors: [sandball]\n",
    );
    sb.write(&format!("{source}/README.md"), "acme.web\n");
    sb.write(&format!("{source}/roles/site/tasks/main.yml"), ROLE_TASKS);
    let Some(build) = sb.ansible_tool(
        "ansible-galaxy",
        [
            "collection",
            "build",
            source,
            "--output-path",
            sb.path().to_str().unwrap_or_default(),
        ],
    ) else {
        let role = installed.join("ansible_collections/acme/web/roles/site/tasks/main.yml");
        let relative = role.strip_prefix(sb.path()).unwrap_or(&role);
        sb.write(&relative.display().to_string(), ROLE_TASKS);
        return;
    };
    let built = build.run();
    assert_eq!(built.code, 0, "{built}");
    let tarball = sb.path().join("acme-web-1.0.0.tar.gz");
    let install = sb
        .ansible_tool(
            "ansible-galaxy",
            [
                "collection".as_ref(),
                "install".as_ref(),
                tarball.as_os_str(),
                "-p".as_ref(),
                installed.as_os_str(),
            ],
        )
        .map(|i| i.run());
    if let Some(install) = install {
        assert_eq!(install.code, 0, "{install}");
    }
    assert!(
        installed
            .join("ansible_collections/acme/web/roles/site/tasks/main.yml")
            .is_file()
    );
}

#[test]
fn installed_collections_roles_and_plugins_run_as_under_ansible_playbook() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    let home = sb.dir("ansible-home");
    install_acme_web(&sb, &home.join("collections"));
    let colors = "collections/ansible_collections/local/colors";
    sb.write(&format!("{colors}/plugins/test/blue.py"), TEST_PLUGIN);
    sb.write(&format!("{colors}/plugins/filter/paint.py"), FILTER_PLUGIN);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let ours = sb
        .play_with_core(&pb, &work, &[])
        .env("ANSIBLE_HOME", &home)
        .run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"msg\": \"True False ['blue'] blue x\"");
    // The role by `roles:`, `import_role` and `include_role`.
    let site = "\"msg\": \"site acme.web.site acme.web\"";
    assert_eq!(ours.stdout.matches(site).count(), 3, "{ours}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        ours.assert_same_recap_as(&theirs).assert_same_results_as(
            &theirs,
            &[
                "acme.web.site : site",
                "a collection's test and filter",
                "in a condition",
                "in an assertion",
            ],
        );
    }
}

/// Plugin files named otherwise than the plugins they hold.
const PLUGIN_FILES: &[(&str, &str)] = &[
    ("test/hues.py", TEST_PLUGIN),
    ("filter/misc.py", FILTER_PLUGIN),
];

/// A collection installed by `ansible-galaxy collection install -p collections` beside
/// the playbook, in a subdirectory of the working directory, its role named by its
/// FQCN; a collection found through `collections_path` of the `ansible.cfg` in
/// `ANSIBLE_CONFIG`, relative to that file, whose plugin files are named otherwise
/// than their plugins — compared with ansible-playbook.
#[test]
fn playbook_adjacent_and_configured_collections_run_as_under_ansible_playbook() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    install_acme_web(&sb, &sb.path().join("site/collections"));
    for (file, text) in PLUGIN_FILES {
        sb.write(
            &format!("config/mine/ansible_collections/local/colors/plugins/{file}"),
            text,
        );
    }
    let config = sb.write(
        "config/ansible.cfg",
        "[defaults]\ncollections_path = ./mine\n",
    );
    let pb = sb.write("site/play.yml", PLAY);
    let work = sb.dir("work");
    let ours = sb
        .play_with_core(&pb, &work, &[])
        .env("ANSIBLE_CONFIG", &config)
        .run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"msg\": \"True False ['blue'] blue x\"");
    let site = "\"msg\": \"site acme.web.site acme.web\"";
    assert_eq!(ours.stdout.matches(site).count(), 3, "{ours}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.env("ANSIBLE_CONFIG", &config).run();
        assert_eq!(theirs.code, 0, "{theirs}");
        ours.assert_same_recap_as(&theirs).assert_same_results_as(
            &theirs,
            &[
                "acme.web.site : site",
                "a collection's test and filter",
                "in a condition",
                "in an assertion",
            ],
        );
    }
}
