//! Behaviour of the whole module, run natively on a temporary tree through the SDK's
//! `execute`: types, names, hidden entries, depth, age, size, contents, modes,
//! checksums, limits, missing paths and the argument errors, as ansible-core's find
//! behaves.

use super::{MANIFEST, find};
use sandball_guest_sdk::host;
use sandball_guest_sdk::{Map, Value, json};
use std::fs;
use std::path::Path;

sandball_guest_sdk::module_test_helpers!(MANIFEST, find);

/// A tree: `a.txt` (6 bytes, 0644), `b.log` (2 KiB, 0600, a day old), `.hidden`,
/// `sub/c.txt`, `sub/deeper/d.txt`, `link -> a.txt`, `sublink -> sub`.
fn tree() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    fs::write(r.join("a.txt"), b"hello\n").unwrap();
    fs::write(r.join("b.log"), vec![b'x'; 2048]).unwrap();
    fs::write(r.join(".hidden"), b"secret\n").unwrap();
    fs::create_dir_all(r.join("sub/deeper")).unwrap();
    fs::write(r.join("sub/c.txt"), b"first\nkey=value\n").unwrap();
    fs::write(r.join("sub/deeper/d.txt"), b"d\n").unwrap();
    std::os::unix::fs::symlink("a.txt", r.join("link")).unwrap();
    std::os::unix::fs::symlink("sub", r.join("sublink")).unwrap();
    let p = |n: &str| r.join(n).to_str().unwrap().to_string();
    host::chmod(&p("a.txt"), 0o644).unwrap();
    host::chmod(&p("b.log"), 0o600).unwrap();
    let day_ago = sandball_guest_sdk::civil::since_epoch().as_secs_f64() - 86400.0 - 60.0;
    host::set_times(&p("b.log"), Some(day_ago), Some(day_ago), false).unwrap();
    tmp
}

/// The found paths, relative to `root`, sorted.
fn found(r: &Map<String, Value>, root: &Path) -> Vec<String> {
    let prefix = format!("{}/", root.display());
    let mut out: Vec<String> = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            f["path"]
                .as_str()
                .unwrap()
                .trim_start_matches(&prefix)
                .to_string()
        })
        .collect();
    out.sort();
    out
}

fn search(root: &Path, extra: Value) -> Map<String, Value> {
    let mut args = json!({"paths": [root.to_str().unwrap()]});
    args.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    ok(args)
}

#[test]
fn files_in_the_top_directory_by_default() {
    let t = tree();
    let r = search(t.path(), json!({}));
    assert_eq!(found(&r, t.path()), ["a.txt", "b.log"]);
    assert_eq!(
        (
            r["matched"].clone(),
            r["examined"].clone(),
            r["msg"].clone()
        ),
        (json!(2), json!(6), json!("All paths examined"))
    );
    assert_eq!(
        (r["changed"].clone(), r["skipped_paths"].clone()),
        (json!(false), json!({}))
    );
    let a = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("a.txt"))
        .unwrap();
    assert_eq!(
        (
            a["mode"].clone(),
            a["isreg"].clone(),
            a["size"].clone(),
            a["roth"].clone(),
            a["woth"].clone()
        ),
        (
            json!("0644"),
            json!(true),
            json!(6),
            json!(true),
            json!(false)
        )
    );
    assert!(a["pw_name"].is_string() && a["gr_name"].is_string() && a["mtime"].is_f64());
    assert!(a.get("checksum").is_none() && a.get("exists").is_none());
    // In ansible-core's order: the owner's names between the times and the mode bits.
    let keys: Vec<&str> = a.as_object().unwrap().keys().map(String::as_str).collect();
    let at = |k: &str| keys.iter().position(|x| *x == k).unwrap();
    assert_eq!(
        (at("gr_name"), at("pw_name")),
        (at("ctime") + 1, at("ctime") + 2)
    );
    assert_eq!(at("wusr"), at("ctime") + 3);
}

#[test]
fn types_recursion_hidden_and_depth() {
    let t = tree();
    let any = search(
        t.path(),
        json!({"file_type": "any", "recurse": true, "hidden": true}),
    );
    assert_eq!(
        found(&any, t.path()),
        [
            ".hidden",
            "a.txt",
            "b.log",
            "link",
            "sub",
            "sub/c.txt",
            "sub/deeper",
            "sub/deeper/d.txt",
            "sublink"
        ]
    );
    // The links are not followed: sublink's files are not found through it.
    assert_eq!(any["examined"], json!(9));
    let dirs = search(t.path(), json!({"file_type": "directory", "recurse": true}));
    assert_eq!(found(&dirs, t.path()), ["sub", "sub/deeper"]);
    let links = search(t.path(), json!({"file_type": "link"}));
    assert_eq!(found(&links, t.path()), ["link", "sublink"]);
    let followed = search(
        t.path(),
        json!({"recurse": true, "follow": true, "patterns": "c.txt"}),
    );
    assert_eq!(found(&followed, t.path()), ["sub/c.txt", "sublink/c.txt"]);
    let shallow = search(t.path(), json!({"recurse": true, "depth": 2}));
    assert_eq!(found(&shallow, t.path()), ["a.txt", "b.log", "sub/c.txt"]);
    let flat = search(
        t.path(),
        json!({"recurse": false, "depth": 5, "file_type": "any"}),
    );
    assert!(!found(&flat, t.path()).contains(&"sub/c.txt".to_string()));
}

#[test]
fn names_globs_regexes_and_excludes() {
    let t = tree();
    let r = search(
        t.path(),
        json!({"patterns": "*.txt,*.log", "excludes": "b*", "recurse": true}),
    );
    assert_eq!(
        found(&r, t.path()),
        ["a.txt", "sub/c.txt", "sub/deeper/d.txt"]
    );
    let r = search(
        t.path(),
        json!({"patterns": ["[ab]\\..*"], "use_regex": true}),
    );
    assert_eq!(found(&r, t.path()), ["a.txt", "b.log"]);
    // A regex matches at the start of the name, not necessarily all of it.
    let r = search(t.path(), json!({"pattern": "a", "use_regex": true}));
    assert_eq!(found(&r, t.path()), ["a.txt"]);
    let r = search(t.path(), json!({"pattern": "(", "use_regex": true}));
    assert_eq!(r["matched"], json!(0));
    let root = t.path().to_str().unwrap();
    assert!(
        r["skipped_paths"][root].as_str().unwrap().contains("("),
        "{r:?}"
    );
    assert_eq!(
        r["msg"],
        json!("Not all paths examined, check warnings for details")
    );
}

#[test]
fn age_size_contents_and_mode() {
    let t = tree();
    let old = search(t.path(), json!({"age": "1d"}));
    assert_eq!(found(&old, t.path()), ["b.log"]);
    let young = search(t.path(), json!({"age": "-1h"}));
    assert_eq!(found(&young, t.path()), ["a.txt"]);
    let big = search(t.path(), json!({"size": "1k"}));
    assert_eq!(found(&big, t.path()), ["b.log"]);
    let small = search(t.path(), json!({"size": "-10"}));
    assert_eq!(found(&small, t.path()), ["a.txt"]);
    let keyed = search(t.path(), json!({"contains": "key=", "recurse": true}));
    assert_eq!(found(&keyed, t.path()), ["sub/c.txt"]);
    let inner = search(t.path(), json!({"contains": "=val", "recurse": true}));
    assert_eq!(inner["matched"], json!(0));
    let whole = search(
        t.path(),
        json!({"contains": "=val", "recurse": true, "read_whole_file": true}),
    );
    assert_eq!(found(&whole, t.path()), ["sub/c.txt"]);
    let private = search(t.path(), json!({"mode": "0600"}));
    assert_eq!(found(&private, t.path()), ["b.log"]);
    let readable = search(t.path(), json!({"mode": "o=r", "exact_mode": false}));
    assert_eq!(found(&readable, t.path()), ["a.txt"]);
}

#[test]
fn checksums_and_limits() {
    let t = tree();
    let r = search(t.path(), json!({"get_checksum": true, "patterns": "a.txt"}));
    assert_eq!(
        r["files"][0]["checksum"],
        json!("f572d396fae9206628714fb2ce00f72e94f2258f")
    );
    let r = search(
        t.path(),
        json!({"get_checksum": true, "checksum_algorithm": "sha256", "patterns": "a.txt"}),
    );
    assert_eq!(
        r["files"][0]["checksum"],
        json!("5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03")
    );
    let r = search(
        t.path(),
        json!({"limit": 1, "recurse": true, "file_type": "any"}),
    );
    assert_eq!(
        (r["matched"].clone(), r["msg"].clone()),
        (json!(1), json!("Limit of matches reached"))
    );
}

#[test]
fn missing_paths_are_skipped_with_a_warning() {
    let t = tree();
    let file = t.path().join("a.txt");
    let (r, failed) = run(
        json!({"paths": ["/nonexistent/sandball", file.to_str().unwrap(), t.path().to_str().unwrap()]}),
    );
    assert!(!failed);
    assert_eq!(r["matched"], json!(2));
    assert_eq!(
        r["skipped_paths"]["/nonexistent/sandball"],
        json!("'/nonexistent/sandball' is not a directory")
    );
    assert_eq!(r["skipped_paths"].as_object().unwrap().len(), 2);
    assert_eq!(
        r["warnings"][0],
        json!(
            "Skipped '/nonexistent/sandball' path due to this access issue: '/nonexistent/sandball' is not a directory\n"
        )
    );
    assert_eq!(
        r["msg"],
        json!("Not all paths examined, check warnings for details")
    );
}

#[test]
fn a_loop_of_links_followed_ends_as_the_kernel_ends_it() {
    let t = tempfile::tempdir().unwrap();
    fs::create_dir_all(t.path().join("sub/deeper")).unwrap();
    fs::write(t.path().join("sub/deeper/d.txt"), b"").unwrap();
    std::os::unix::fs::symlink("..", t.path().join("sub/up")).unwrap();
    let r = search(
        t.path(),
        json!({"recurse": true, "follow": true, "patterns": "d.txt"}),
    );
    // Through 0 to 40 `up` links, as Python's walk finds it on Linux.
    assert_eq!(r["matched"], json!(41));
    assert_eq!(
        (r["msg"].clone(), r["skipped_paths"].clone()),
        (json!("All paths examined"), json!({}))
    );
}

#[test]
fn bad_arguments_are_refused() {
    let (r, failed) = run(json!({"paths": ["/"], "age": "old"}));
    assert!(failed);
    assert_eq!(
        (r["msg"].clone(), r["age"].clone()),
        (json!("failed to process age"), json!("old"))
    );
    assert_eq!(
        fails(json!({"paths": ["/"], "size": "1z"})),
        "failed to process size"
    );
    assert_eq!(
        fails(json!({"paths": ["/"], "limit": 0})),
        "limit cannot be 0 (use None for unlimited)"
    );
    assert_eq!(
        fails(json!({"paths": ["/"], "mode": 420})),
        "argument 'mode' is not a string and conversion is not allowed, value is of type int"
    );
    assert_eq!(fails(json!({})), "missing required arguments: paths");
    assert_eq!(
        fails(json!({"paths": ["/"], "file_type": "socket"})),
        "value of file_type must be one of: any, directory, file, link, got: socket"
    );
    assert!(
        fails(json!({"paths": ["/"], "contains": "x", "encoding": "cp1252"}))
            .contains("encoding cp1252 is not supported")
    );
}
