//! The shims the controller deploys to nodes: static executables (musl) for each node
//! architecture, built by `make build` — checked on their ELF headers and with `file` —
//! and chosen per node by its `uname -sm`: a component run locally and over SSH by a
//! controller that finds them in the build tree alone (no `SANDBALL_SHIM`). What a cold
//! node receives over a network, counted by a proxy in bytes: the shim xz-compressed
//! (gzip-compressed for a node without `xz`) and the play's modules in one xz stream;
//! a node with neither gets the shim as it is.

use sandball_e2e::binaries::{STATIC_SHIMS, file_says, sha256, static_shim};
use sandball_e2e::proxy::Proxy;
use sandball_e2e::sshd::deployable_shim;
use sandball_e2e::{Binaries, HostRecap, Output, Sandbox, Sshd};
use std::path::Path;
use std::time::Duration;

/// `e_machine` of an ELF executable for `arch`.
fn machine(arch: &str) -> u16 {
    match arch {
        "x86_64" => 0x3E,
        "aarch64" => 0xB7,
        other => panic!("no ELF machine known for {other}"),
    }
}

/// `PT_INTERP`: the program header naming a dynamic loader.
const PT_INTERP: u32 = 3;

/// The program header types of the little-endian ELF64 file that starts with `head`.
fn program_header_types(head: &[u8]) -> Vec<u32> {
    let u16_at = |at: usize| u16::from_le_bytes([head[at], head[at + 1]]) as usize;
    let mut phoff = [0u8; 8];
    phoff.copy_from_slice(&head[0x20..0x28]);
    let phoff = usize::try_from(u64::from_le_bytes(phoff)).unwrap();
    let (size, count) = (u16_at(0x36), u16_at(0x38));
    assert!(
        phoff + size * count <= head.len(),
        "the program headers lie beyond the first {} bytes",
        head.len()
    );
    (0..count)
        .map(|i| {
            let at = phoff + i * size;
            u32::from_le_bytes([head[at], head[at + 1], head[at + 2], head[at + 3]])
        })
        .collect()
}

/// The first bytes of `path`.
fn head(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut head = vec![];
    std::fs::File::open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .take(4096)
        .read_to_end(&mut head)
        .unwrap();
    head
}

/// This machine's static shim, which the controller deploys to nodes like it.
fn own_shim() -> std::path::PathBuf {
    let (_, triple) = STATIC_SHIMS
        .iter()
        .find(|(arch, _)| *arch == std::env::consts::ARCH)
        .expect("a static shim for this machine's architecture");
    static_shim(triple)
}

#[test]
fn the_shims_are_static_executables_of_their_architecture() {
    for (arch, triple) in STATIC_SHIMS {
        let path = static_shim(triple);
        assert!(
            path.is_file(),
            "{} is missing: run `make build`",
            path.display()
        );
        let head = head(&path);
        assert_eq!(
            &head[..6],
            b"\x7fELF\x02\x01",
            "{}: not a little-endian ELF64",
            path.display()
        );
        assert_eq!(
            u16::from_le_bytes([head[18], head[19]]),
            machine(arch),
            "{} is not for {arch}",
            path.display()
        );
        let types = program_header_types(&head);
        assert!(!types.is_empty(), "{}: no program headers", path.display());
        assert!(
            !types.contains(&PT_INTERP),
            "{} names a dynamic loader (PT_INTERP)",
            path.display()
        );
        let said = file_says(&path);
        assert!(
            said.contains("statically linked") || said.contains("static-pie linked"),
            "{}: {said}",
            path.display()
        );
    }
}

/// Runs `playbook` over the sandbox's inventory with no `SANDBALL_SHIM`: the controller
/// finds its shims in the build tree.
fn run_from_build_tree(sb: &Sandbox, playbook: &str, extra: &[&str]) -> Output {
    let pb = sb.write("play.yml", playbook);
    let out = sb
        .play(&pb, &sb.dir("work"), extra)
        .env_remove("SANDBALL_SHIM")
        .env("SANDBALL_LOG", "sandball=debug")
        .env("SSH_AUTH_SOCK", "")
        .limit(Duration::from_secs(300))
        .run();
    out.assert_no_panic();
    out
}

const COMPONENTS: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: reach
      ping:
    - name: touch
      file:
        path: "{{ work }}/{{ inventory_hostname }}"
        state: touch
    - name: look
      stat:
        path: "{{ work }}/{{ inventory_hostname }}"
      register: st
    - name: a regular file
      assert:
        that: st.stat.isreg
"#;

#[test]
fn a_component_runs_locally_through_the_static_shim() {
    let sb = Sandbox::new();
    sb.inventory(&["here"]);
    let out = run_from_build_tree(&sb, COMPONENTS, &["-vvv"]);
    out.assert_code(0);
    assert_eq!(out.host("here").failed, 0, "{out}");
    assert!(sb.path().join("work/here").is_file(), "{out}");
    let started: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("EXEC exec "))
        .collect();
    let shim = own_shim().display().to_string();
    assert!(
        !started.is_empty() && started.iter().all(|l| l.contains(&shim)),
        "the session runs {shim}:\n{out}"
    );
}

#[test]
fn over_ssh_a_node_gets_the_static_shim_of_its_architecture_once() {
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let cache = sb.path().join("node-s1");
    sb.write(
        "inventory.ini",
        &format!("[nodes]\n{}", sshd.host_line("s1", &cache, "")),
    );
    let first = run_from_build_tree(&sb, COMPONENTS, &[]);
    first.assert_code(0);
    assert_eq!(
        first.host("s1"),
        HostRecap {
            ok: 4,
            changed: 1,
            ..Default::default()
        },
        "{first}"
    );
    assert_eq!(
        first.stderr.matches("uploading the shim").count(),
        1,
        "{first}"
    );
    // The node holds this architecture's static shim, and no other.
    let sha = sha256(&own_shim());
    let deployed: Vec<String> = std::fs::read_dir(cache.join("shim"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(deployed, vec![sha.clone()], "{first}");
    let on_node = cache.join("shim").join(&sha).join("sandball-shim");
    let said = file_says(&on_node);
    assert!(
        said.contains("statically linked") || said.contains("static-pie linked"),
        "{said}"
    );
    // A warm node: the start command finds it by the node's uname, nothing is sent.
    let second = run_from_build_tree(&sb, COMPONENTS, &[]);
    second.assert_code(0);
    assert_eq!(second.host("s1").ok, 4, "{second}");
    assert!(!second.stderr.contains("uploading the shim"), "{second}");
}

/// The ten modules of the network benchmark (`examples/bench/network.sh`), one task each.
const TEN_MODULES: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    d: "{{ work }}/{{ inventory_hostname }}"
  tasks:
    - ping:
    - file: {path: "{{ d }}", state: directory}
    - copy: {content: "one\n", dest: "{{ d }}/a.txt"}
    - lineinfile: {path: "{{ d }}/a.txt", line: two}
    - replace: {path: "{{ d }}/a.txt", regexp: "^one$", replace: three}
    - blockinfile: {path: "{{ d }}/b.txt", create: true, block: x}
    - stat: {path: "{{ d }}/a.txt"}
    - slurp: {src: "{{ d }}/a.txt"}
    - find: {paths: "{{ d }}"}
    - command: /bin/true
"#;

/// The modules [`TEN_MODULES`] runs.
const MODULES_OF_TEN: [&str; 10] = [
    "ping",
    "file",
    "copy",
    "lineinfile",
    "replace",
    "blockinfile",
    "stat",
    "slurp",
    "find",
    "command",
];

/// Runs `playbook` with the stripped shim the SSH tests deploy, logging at debug.
fn run_deploying(sb: &Sandbox, playbook: &Path) -> Output {
    let out = sb
        .play(playbook, &sb.dir("work"), &[])
        .env("SANDBALL_SHIM", deployable_shim())
        .env("SANDBALL_LOG", "sandball=debug")
        .env("SSH_AUTH_SOCK", "")
        .limit(Duration::from_secs(300))
        .run();
    out.assert_no_panic();
    out
}

#[test]
fn a_cold_node_over_a_network_receives_the_shim_and_its_modules_compressed() {
    let sshd = Sshd::start();
    let proxy = Proxy::start(sshd.port);
    sshd.known_also_at(proxy.port());
    let sb = Sandbox::new();
    let line = sshd
        .host_line_cold("n1", &sb.path().join("node-n1"), "")
        .replace(
            &format!("ansible_port={}", sshd.port),
            &format!("ansible_port={}", proxy.port()),
        );
    sb.write("inventory.ini", &format!("[nodes]\n{line}"));
    let pb = sb.write("play.yml", TEN_MODULES);
    let cold = run_deploying(&sb, &pb);
    cold.assert_code(0);
    assert_eq!(cold.host("n1").ok, 10, "{cold}");
    assert_eq!(
        cold.stderr.matches("uploading the shim").count(),
        1,
        "{cold}"
    );
    // This machine has xz: the shim goes as an xz stream.
    assert!(cold.stderr.contains("decoder=\"xz -dc\""), "{cold}");
    // The ten modules in one request, one xz stream.
    assert_eq!(
        cold.stderr.matches("uploading modules modules=10 ").count(),
        1,
        "{cold}"
    );
    assert!(!cold.stderr.contains("uploading a module"), "{cold}");
    let field = |name: &str| -> u64 {
        let line = cold
            .stderr
            .lines()
            .find(|l| l.contains("uploading modules"))
            .unwrap();
        let at = line.find(&format!("{name}=")).unwrap() + name.len() + 1;
        line[at..].split(' ').next().unwrap().parse().unwrap()
    };
    // One stream sees what the modules share: under a third of their bytes (gzip, one
    // by one, took them to a third; xz at the debug build's preset 1 to about a fifth).
    assert!(field("sent_bytes") * 3 < field("module_bytes"), "{cold}");
    // What the node would receive uncompressed: the shim and the ten components.
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    let modules = &Binaries::get().modules;
    let uncompressed = size(&deployable_shim())
        + MODULES_OF_TEN
            .iter()
            .map(|m| size(&modules.join(format!("{m}.wasm"))))
            .sum::<u64>();
    // The bound: everything the controller sent the cold node (SSH included) is less
    // than half of that (gzip takes code and components to about a third).
    let (sent, _) = proxy.bytes();
    assert!(
        sent < uncompressed / 2,
        "a cold node received {sent} bytes; uncompressed, the shim and modules are {uncompressed}\n{cold}"
    );
    // Warm, the node is asked once which modules it lacks, and nothing is sent again.
    let warm = run_deploying(&sb, &pb);
    warm.assert_code(0);
    let warm_sent = proxy.bytes().0 - sent;
    assert!(
        warm_sent < 1_000_000,
        "a warm node received {warm_sent} bytes\n{warm}"
    );
    assert!(!warm.stderr.contains("uploading a module"), "{warm}");
    assert!(!warm.stderr.contains("uploading modules"), "{warm}");
}

/// A directory of links to every program in `/usr/bin` but `left_out`: a node's `PATH`
/// without them.
fn bin_without(at: &Path, left_out: &[&str]) -> std::path::PathBuf {
    std::fs::create_dir_all(at).unwrap();
    for entry in std::fs::read_dir("/usr/bin").unwrap() {
        let entry = entry.unwrap();
        if !left_out.iter().any(|p| entry.file_name() == *p) {
            std::os::unix::fs::symlink(entry.path(), at.join(entry.file_name())).unwrap();
        }
    }
    at.to_path_buf()
}

/// Runs the component play on a cold node whose `PATH` lacks `left_out`, and checks
/// the shim it ended up with; returns the run.
fn cold_node_without(left_out: &[&str]) -> Output {
    let sb = Sandbox::new();
    let bin = bin_without(&sb.path().join("bin"), left_out);
    let sshd = Sshd::start_with_config(&format!("SetEnv PATH={}", bin.display()));
    let cache = sb.path().join("node-n1");
    sb.write(
        "inventory.ini",
        &format!("[nodes]\n{}", sshd.host_line("n1", &cache, "")),
    );
    let pb = sb.write("play.yml", COMPONENTS);
    let out = run_deploying(&sb, &pb);
    out.assert_code(0);
    assert_eq!(out.host("n1").ok, 4, "{out}");
    let sha = sha256(&deployable_shim());
    let on_node = cache.join("shim").join(&sha).join("sandball-shim");
    assert_eq!(sha256(&on_node), sha, "{out}");
    out
}

#[test]
fn a_node_without_xz_or_gzip_gets_the_shim_uncompressed() {
    let out = cold_node_without(&["gzip", "xz"]);
    assert!(
        out.stderr
            .contains("the node has neither xz nor gzip: the shim is sent uncompressed"),
        "{out}"
    );
    assert!(out.stderr.contains("decoder=\"cat\""), "{out}");
}

#[test]
fn a_node_without_xz_gets_the_shim_gzip_compressed() {
    let out = cold_node_without(&["xz"]);
    assert!(out.stderr.contains("decoder=\"gzip -dc\""), "{out}");
}
