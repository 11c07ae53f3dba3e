//! `copy` of a directory on the controller: by its name (`src: tree`) or its contents
//! (`src: tree/`), with `directory_mode`, links followed or kept (`local_follow`), a
//! directory of one file, a second run and a dry run. The trees written, the task
//! lines and the recap are compared with ansible-playbook's.

use sandball_e2e::Sandbox;
use sandball_e2e::tree::snapshot;

fn tree(sb: &Sandbox) {
    sb.write("play.yml", include_str!("copy_tree/play.yml"));
    sb.write("files/tree/a.txt", "a\n");
    sb.write("files/tree/sub/b.txt", "b\n");
    sb.write("files/tree/sub/deeper/c.txt", "c\n");
    sb.write("files/one/only.txt", "one\n");
    std::fs::create_dir_all(sb.path().join("files/tree/empty")).unwrap();
    std::os::unix::fs::symlink("a.txt", sb.path().join("files/tree/link.txt")).unwrap();
}

#[test]
fn controller_directories_are_copied_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    tree(&sb);
    let pb = sb.path().join("play.yml");
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    let written = snapshot(&work);
    assert!(
        matches!(written.get("named/tree/sub/deeper/c.txt"), Some(sandball_e2e::tree::Entry::File(0o644, c)) if c == b"c\n"),
        "{written:#?}\n{out}"
    );
    assert_eq!(
        written.get("links/link.txt"),
        Some(&sandball_e2e::tree::Entry::Link("a.txt".into()))
    );
    assert!(!work.join("dry").exists(), "the dry run wrote:\n{out}");
    if let Some(theirs) = sb.ansible_play(&pb, &sb.dir("theirs"), &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        out.assert_same_recap_as(&theirs);
        assert_eq!(snapshot(&sb.path().join("theirs")), written);
        for task in [
            "a directory, by its name",
            "what it said",
            "its contents, with a directory mode",
            "again, nothing to do",
            "what it said again",
            "links kept as links",
            "a directory of one file",
            "what one file said",
            "a dry run into a new place",
        ] {
            assert_eq!(
                theirs.task_lines(task),
                out.task_lines(task),
                "{task}:\n{theirs}\n{out}"
            );
        }
    }
}
