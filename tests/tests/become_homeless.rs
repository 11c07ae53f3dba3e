//! Become to a user whose home does not exist (`nobody`'s `/nonexistent`): components
//! still run as that user, the shim keeping its cache under the system's temporary
//! directory (`.sandball-<uid>`, mode 0700, owned by the user), as ansible-playbook
//! falls back to a system temporary directory for its own files. Its programs get
//! the user's `HOME`, `USER`, `LOGNAME` and `SHELL` as `sudo -H` set them (as under
//! ansible-playbook), though the home is missing.

use sandball_e2e::Sandbox;
use sandball_e2e::compare::result;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::process::Command;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  become: true
  become_user: nobody
  tasks:
    - name: who
      command: id -un
    - name: identity
      command: printenv HOME USER LOGNAME SHELL
    - name: write
      copy: {dest: "{{ work }}/by-nobody", content: "hello\n"}
"#;

#[test]
fn become_to_a_user_without_a_home_runs_components() {
    if !sandball_e2e::users::become_user_ready() {
        return;
    }
    let home = Command::new("getent")
        .args(["passwd", "nobody"])
        .output()
        .unwrap();
    let entry = String::from_utf8_lossy(&home.stdout).to_string();
    let Some(home) = entry
        .split(':')
        .nth(5)
        .filter(|h| !std::path::Path::new(h).exists())
    else {
        panic!("this test needs a nobody user whose home does not exist: {entry}");
    };
    let sb = Sandbox::new();
    std::fs::set_permissions(sb.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    sb.inventory(&["localhost"]);
    let work = sb.dir("work");
    std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o777)).unwrap();
    let pb = sb.write("play.yml", PLAY);
    let out = sb.play(&pb, &work, &["-v"]).run();
    out.assert_no_panic().assert_code(0);
    assert_eq!(result(&out, "who", &work)["stdout"], "nobody", "{out}");
    let fields: Vec<&str> = entry.trim().split(':').collect();
    assert_eq!(
        result(&out, "identity", &work)["stdout"],
        format!("{home}\nnobody\nnobody\n{}", fields[6]),
        "{out}"
    );
    let uid = std::fs::metadata(work.join("by-nobody")).unwrap().uid();
    let cache = std::env::temp_dir().join(format!(".sandball-{uid}"));
    let meta = std::fs::metadata(&cache).unwrap_or_else(|e| panic!("{}: {e}", cache.display()));
    assert_eq!(meta.uid(), uid);
    assert_eq!(meta.mode() & 0o777, 0o700);
    assert!(!std::path::Path::new(home).exists(), "{home} was created");
}
