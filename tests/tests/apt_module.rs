//! The `apt` component against ansible-core's `apt` module on this Debian node: one
//! playbook installing and removing small packages (`hello`, `sl`) run under sandball
//! and then under ansible-playbook 2.19 (each run leaves the node as it found it), each
//! task's result fields compared and dpkg's state of both packages after each step:
//! the cache (fresh, and updated in check mode), check mode, install, install again,
//! version patterns and `>=`, name globs, install_recommends, unknown packages and
//! versions, removal in check mode, removal, purge, a local .deb, `package` (which
//! runs this component where apt is the manager), autoremove in check mode. Then the
//! options sandball refuses.
//!
//! Needs apt-get with package lists and a mirror, python3-apt for ansible-core's
//! module (`make apt-test`), and root. The two plays take turns (one dpkg).

use sandball_e2e::binaries::ansible_python;
use sandball_e2e::compare::{ansible_bin, both_run, result};
use sandball_e2e::{Output, Sandbox};
use std::sync::Mutex;
use std::time::Duration;

/// The play of `steps`, after making sure neither package is installed; after each
/// step marked so, dpkg's state of both packages.
fn play(steps: &[Step]) -> String {
    let mut tasks = String::from(
        r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: neither package
      command: apt-get -y -o DPkg::Lock::Timeout=600 purge hello sl
"#,
    );
    for (name, task, state_after) in steps {
        tasks.push_str(&format!("    - name: {name}\n{task}"));
        if *state_after {
            tasks.push_str(&format!(
                "    - name: dpkg after {name}\n      command: dpkg-query -W -f '${{db:Status-Abbrev}} ${{Version}};' hello sl\n      register: state\n      failed_when: false\n      changed_when: false\n"
            ));
        }
    }
    tasks
}

/// A step: its name, its task's body (indented under `- name:`), and whether dpkg's
/// state is compared after it.
type Step = (&'static str, &'static str, bool);

/// The cache, installing and removing `hello`.
const INSTALL_STEPS: &[Step] = &[
    (
        "a fresh cache",
        "      apt: {update_cache: true, cache_valid_time: 315360000}\n",
        false,
    ),
    (
        "update in check mode",
        "      apt: {update_cache: true}\n      check_mode: true\n",
        false,
    ),
    (
        "install in check mode",
        "      apt: {name: hello}\n      check_mode: true\n      diff: true\n",
        true,
    ),
    (
        "install",
        "      apt: {name: hello}\n      diff: true\n",
        true,
    ),
    (
        "install again",
        "      apt: {name: hello, state: present}\n",
        true,
    ),
    (
        "a version pattern",
        "      apt: {name: 'hello=2.10*'}\n",
        false,
    ),
    (
        "at least a version",
        "      apt: {name: 'hello>=2.9'}\n",
        false,
    ),
    ("latest", "      apt: {name: hello, state: latest}\n", false),
    ("a name pattern", "      apt: {name: 'hell?'}\n", false),
    (
        "an unknown package",
        "      apt: {name: sandball-no-such-package}\n      ignore_errors: true\n",
        false,
    ),
    (
        "an unknown version",
        "      apt: {name: 'hello=9.9'}\n      ignore_errors: true\n",
        false,
    ),
    (
        "an invalid spec",
        "      apt: {name: 'hello==1'}\n      ignore_errors: true\n",
        false,
    ),
    (
        "remove in check mode",
        "      apt: {name: hello, state: absent}\n      check_mode: true\n",
        true,
    ),
    (
        "remove",
        "      apt: {name: hello, state: absent}\n      diff: true\n",
        true,
    ),
    (
        "remove again",
        "      apt: {name: hello, state: absent}\n",
        true,
    ),
];

/// `sl` without recommends then purged, `hello` from a .deb file, autoremove.
const OTHER_STEPS: &[Step] = &[
    (
        "without recommends",
        "      apt: {name: [sl], install_recommends: false, cache_valid_time: 315360000}\n",
        true,
    ),
    (
        "purge",
        "      apt: {name: sl, state: absent, purge: true}\n",
        true,
    ),
    (
        "a deb file",
        "      apt: {deb: \"{{ deb.stdout_lines[-1] }}\"}\n",
        true,
    ),
    (
        "a deb file again",
        "      apt: {deb: \"{{ deb.stdout_lines[-1] }}\"}\n",
        true,
    ),
    (
        "remove the deb's package through package",
        "      package: {name: hello, state: absent, use: apt}\n",
        true,
    ),
    (
        "a deb of another architecture",
        "      apt: {deb: \"{{ work }}/fake-s390x.deb\"}\n      ignore_errors: true\n",
        false,
    ),
    (
        "a deb of our own",
        "      apt: {deb: \"{{ work }}/fake-1.0.deb\"}\n",
        false,
    ),
    (
        "an older deb",
        "      apt: {deb: \"{{ work }}/fake-0.9.deb\"}\n      ignore_errors: true\n",
        false,
    ),
    (
        "purge our own",
        "      apt: {name: sandball-e2e-fake, state: absent, purge: true}\n",
        false,
    ),
    (
        "autoremove in check mode",
        "      apt: {autoremove: true}\n      check_mode: true\n",
        false,
    ),
];

/// The fields ansible-core's results have that do not vary between two runs
/// (apt-get's own output of a real install or removal does: download progress).
const CORE: &[&str] = &[
    "changed",
    "msg",
    "cache_updated",
    "cache_update_time",
    "diff",
    "rc",
];

/// Simulations print the same each time: their output is compared too.
const SIMULATED_TOO: &[&str] = &["stdout", "stderr"];

fn fields(steps: &[Step]) -> Vec<(String, Vec<&'static str>)> {
    let mut out = Vec::new();
    for (name, task, state_after) in steps {
        let mut compared = CORE.to_vec();
        if task.contains("check_mode: true") {
            compared.extend(SIMULATED_TOO);
        }
        out.push((name.to_string(), compared));
        if *state_after {
            out.push((format!("dpkg after {name}"), vec!["stdout", "rc"]));
        }
    }
    out
}

/// One package manager, one test at a time.
static APT: Mutex<()> = Mutex::new(());

/// Whether this is a Debian node run as root, where packages can be installed.
fn can_install() -> bool {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    if !std::path::Path::new("/usr/bin/apt-get").exists() || !root {
        eprintln!("not a Debian node run as root: nothing to compare");
        return false;
    }
    true
}

/// Runs `play` under both tools, comparing the steps' fields; sandball's run and its
/// work directory (as results name it).
fn compare(play: &str, steps: &[Step]) -> (Output, std::path::PathBuf) {
    // Each play runs apt-get and dpkg a dozen times, each reading the machine's whole
    // package lists and dpkg database: minutes on a loaded 2-core machine.
    let sb = Sandbox::new().with_limit(Duration::from_secs(900));
    let owned = fields(steps);
    let fields: Vec<(&str, &[&str])> = owned
        .iter()
        .map(|(n, f)| (n.as_str(), f.as_slice()))
        .collect();
    let (ours, _, work, _) = both_run(&sb, &ansible_bin("ANSIBLE_BIN_DIR", "venv"), play, &fields);
    assert!(!ours.stdout.contains("legacy"), "{ours}");
    (ours, work)
}

#[test]
fn installing_and_removing_match_ansible_core() {
    let _one = APT.lock().unwrap_or_else(|e| e.into_inner());
    if !can_install() {
        return;
    }
    let (ours, work) = compare(&play(INSTALL_STEPS), INSTALL_STEPS);
    // What the steps did (the same in both, compared above).
    let state = |step: &str| result(&ours, &format!("dpkg after {step}"), &work)["stdout"].clone();
    assert_eq!(state("install in check mode"), "");
    assert!(
        state("install").as_str().unwrap().starts_with("ii  2.10"),
        "{ours}"
    );
    assert_eq!(result(&ours, "install", &work)["changed"], true);
    assert_eq!(result(&ours, "install again", &work)["changed"], false);
    assert!(
        state("remove in check mode")
            .as_str()
            .unwrap()
            .starts_with("ii ")
    );
    assert_eq!(state("remove"), "");
    assert_eq!(
        result(&ours, "an unknown package", &work)["msg"],
        "No package matching 'sandball-no-such-package' is available"
    );
}

/// Builds `fake-1.0.deb`, `fake-0.9.deb` (architecture all) and `fake-s390x.deb` in the
/// work directory.
const FAKE_DEBS: &str = r#"|
        set -e
        for v in 1.0:all 0.9:all 1.0:s390x; do
          d={{ work }}/fake-${v#*:}-${v%:*}
          mkdir -p $d/DEBIAN
          printf 'Package: sandball-e2e-fake\nVersion: %s\nArchitecture: %s\nMaintainer: t <t@example.com>\nDescription: sandball test\n' ${v%:*} ${v#*:} > $d/DEBIAN/control
          dpkg-deb -b $d {{ work }}/fake-${v%:*}-${v#*:}.deb >/dev/null
        done
        mv {{ work }}/fake-1.0-all.deb {{ work }}/fake-1.0.deb
        mv {{ work }}/fake-0.9-all.deb {{ work }}/fake-0.9.deb
        mv {{ work }}/fake-1.0-s390x.deb {{ work }}/fake-s390x.deb"#;

#[test]
fn purge_a_deb_file_and_autoremove_match_ansible_core() {
    let _one = APT.lock().unwrap_or_else(|e| e.into_inner());
    if !can_install() {
        return;
    }
    // The .deb the play installs: downloaded into each run's work directory.
    let play = play(OTHER_STEPS).replace(
        "    - name: a deb file\n",
        "    - name: download\n      command: apt-get download hello\n      args: {chdir: \"{{ work }}\"}\n    - name: the deb\n      shell: ls {{ work }}/hello_*.deb\n      register: deb\n    - name: a deb file\n",
    );
    // Packages of our own: another architecture, and two versions.
    let play = play.replace(
        "    - name: a deb of another architecture\n",
        &format!("    - name: fake debs\n      shell: {FAKE_DEBS}\n    - name: a deb of another architecture\n"),
    );
    let (ours, work) = compare(&play, OTHER_STEPS);
    let state = |step: &str| result(&ours, &format!("dpkg after {step}"), &work)["stdout"].clone();
    assert!(
        state("without recommends")
            .as_str()
            .unwrap()
            .contains("ii  5.02"),
        "{ours}"
    );
    assert_eq!(state("purge"), "");
    assert_eq!(result(&ours, "a deb file", &work)["changed"], true);
    assert_eq!(result(&ours, "a deb file again", &work)["changed"], false);
    assert_eq!(
        result(&ours, "an older deb", &work)["msg"],
        "A later version is already installed"
    );
    assert!(
        result(&ours, "a deb of another architecture", &work)["msg"]
            .as_str()
            .unwrap()
            .starts_with("Wrong architecture 's390x'"),
        "{ours}"
    );
}

#[test]
fn what_apt_does_not_carry_out_is_refused_by_name() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - name: upgrade\n      apt: {upgrade: dist}\n      ignore_errors: true\n    - name: build-dep\n      apt: {name: hello, state: build-dep}\n      ignore_errors: true\n",
    );
    let work = sb.dir("work");
    // Where policy allows legacy modules, ansible-core's apt would carry them out
    // (module_routing.rs tests the hand-over); refused, the component's words stand.
    let policy = sb.policy_denying_legacy();
    let out = sb
        .play(&pb, &work, &["-v", "--policy", &policy])
        .env("SANDBALL_ANSIBLE_PYTHON", ansible_python())
        .run();
    out.assert_no_panic();
    assert!(
        result(&out, "upgrade", &work)["msg"]
            .as_str()
            .unwrap()
            .starts_with("The apt module does not support upgrade=dist in sandball: whole-system upgrades are not carried out yet. ansible-core's module would carry it out, but module apt is a legacy"),
        "{out}"
    );
    assert!(
        result(&out, "build-dep", &work)["msg"]
            .as_str()
            .unwrap()
            .contains("state=build-dep"),
        "{out}"
    );
}
