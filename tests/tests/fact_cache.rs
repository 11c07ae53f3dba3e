//! The fact cache (`fact_caching = jsonfile`), compared with ansible-playbook run for
//! run, each tool with a cache directory of its own: gathered facts and `set_fact`
//! with `cacheable: true` are there in the next run (other `set_fact` values are not),
//! `--flush-cache` empties it, `gathering = smart` does not gather a host whose facts
//! are cached, a host `add_host` adds has the facts cached for it, and a cache plugin
//! sandball does not have is refused, naming it.

use sandball_e2e::Sandbox;

const WRITE: &str = r#"
- hosts: all
  gather_facts: true
  gather_subset: [min]
  tasks:
    - set_fact: {ansible_foobar: cached_value, cacheable: true}
    - set_fact: {not_cached: x}
"#;

const READ: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: what the cache kept
      debug:
        msg: "{{ ansible_foobar | default('none') }} {{ not_cached | default('none') }} {{ ansible_facts.system | default('none') }} {{ ansible_system | default('none') }}"
"#;

const SMART: &str = r#"
- hosts: all
  tasks:
    - name: a fact
      debug: {msg: "{{ ansible_system }}"}
"#;

/// Caches a fact of a host that `add_host` adds, then reads it in a later run.
const ADDED: &str = r#"
- hosts: localhost
  gather_facts: false
  tasks:
    - add_host: {name: added, ansible_connection: local}
- hosts: added
  gather_facts: false
  tasks:
    - name: what the cache kept for an added host
      debug: {msg: "{{ added_fact | default('none') }}"}
    - set_fact: {added_fact: added_value, cacheable: true}
"#;

#[test]
fn facts_outlive_the_run_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let write = sb.write("write.yml", WRITE);
    let read = sb.write("read.yml", READ);
    let smart = sb.write("smart.yml", SMART);
    let added = sb.write("added.yml", ADDED);
    let work = sb.dir("work");
    let mut outputs: Vec<Vec<String>> = vec![];
    for tool in ["sandball", "ansible"] {
        let cache = sb.dir(&format!("cache-{tool}"));
        let steps: [(&std::path::Path, &[&str], &str); 7] = [
            (&write, &[], "implicit"),
            (&read, &[], "implicit"),
            (&smart, &[], "smart"),
            (&read, &["--flush-cache"], "implicit"),
            (&smart, &[], "smart"),
            (&added, &[], "implicit"),
            (&added, &[], "implicit"),
        ];
        let mut outs = vec![];
        for (pb, args, gathering) in steps {
            let env = [
                ("ANSIBLE_CACHE_PLUGIN", "jsonfile"),
                ("ANSIBLE_CACHE_PLUGIN_CONNECTION", cache.to_str().unwrap()),
                ("ANSIBLE_CACHE_PLUGIN_PREFIX", "facts_"),
                ("ANSIBLE_GATHERING", gathering),
            ];
            let run = if tool == "sandball" {
                Some(sb.play(pb, &work, args))
            } else {
                sb.ansible_play(pb, &work, args)
            };
            let Some(mut run) = run else { return };
            for (k, v) in env {
                run = run.env(k, v);
            }
            let out = run.run();
            out.assert_no_panic().assert_code(0);
            outs.push(out.stdout.clone());
        }
        if tool == "sandball" {
            assert!(
                outs[1].contains("\"msg\": \"cached_value none Linux Linux\""),
                "{}",
                outs[1]
            );
            assert!(!outs[2].contains("Gathering Facts"), "{}", outs[2]);
            assert!(
                outs[3].contains("\"msg\": \"none none none none\""),
                "{}",
                outs[3]
            );
            assert!(outs[4].contains("Gathering Facts"), "{}", outs[4]);
            assert!(outs[5].contains("\"msg\": \"none\""), "{}", outs[5]);
            assert!(outs[6].contains("\"msg\": \"added_value\""), "{}", outs[6]);
            assert!(cache.join("facts_localhost").is_file());
        }
        outputs.push(outs);
    }
    for (i, (ours, theirs)) in outputs[0].iter().zip(&outputs[1]).enumerate() {
        assert_eq!(ours, theirs, "run {i}");
    }
}

#[test]
fn an_unknown_cache_plugin_is_refused() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("read.yml", READ);
    let out = sb
        .play(&pb, &sb.dir("work"), &[])
        .env("ANSIBLE_CACHE_PLUGIN", "redis")
        .run();
    out.assert_no_panic();
    assert_ne!(out.code, 0, "{out}");
    out.assert_stderr_has(
        "the fact cache plugin 'redis' is not supported by sandball (memory, jsonfile)",
    );
}
