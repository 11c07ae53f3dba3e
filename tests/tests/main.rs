//! The end-to-end tests, one binary: each module below is one area of sandball, run
//! through the real `sandball` and `sandball-shim` binaries (most beside
//! ansible-playbook, comparing what both do). One binary rather than one per file: the
//! tests share the harness (`sandball_e2e`) and link once. A test is named by its
//! module, `cargo nextest run -E 'test(/^apt_module::/)'` runs one module's tests.

/// The small HTTP server `get_url` and `uri` fetch from.
mod http;

mod add_host;
mod adhoc;
mod adversarial;
mod ansible_runner;
mod apt_module;
mod assemble;
mod async_tasks;
mod audit;
mod backslashes;
mod become_homeless;
mod become_su;
mod blocks;
mod callbacks;
mod capabilities;
mod check_mode;
mod check_predictions;
mod collection_components;
mod collections_keyword;
mod config;
mod copy_tree;
mod core_releases;
mod cron;
mod debug_var;
mod delegation;
mod doc;
mod empty_conditionals;
mod errors;
mod example;
mod execution_environment;
mod fact_cache;
mod fact_gathering;
mod faults;
mod fetch;
mod file_edits;
mod file_links;
mod filter_edges;
mod filters;
mod find;
mod foreign_nodes;
mod get_url;
mod git_module;
mod hash_behaviour;
mod includes;
mod inheritance;
mod install;
mod installed_collections;
mod integration_targets;
mod interrupt;
mod inventory;
mod inventory_flags;
mod keywords;
mod known_hosts;
mod legacy;
mod library_actions;
mod listing;
mod lookup_config;
mod lookups;
mod loop_control;
mod magic_vars;
mod meta;
mod misbehaving;
mod missing_dirs;
mod module_languages;
mod module_new;
mod module_pack;
mod module_routing;
mod module_warnings;
mod modules;
mod molecule;
mod native_types;
mod node_shims;
mod package_service;
mod path_errors;
mod pause;
mod percent_format;
mod play_hosts;
mod playbook_python;
mod plugin_errors;
mod policy;
mod precedence;
mod python_plugins;
mod relative_paths;
mod roles;
mod sandboxed_play;
mod script;
mod set_stats;
mod setup_facts;
mod ssh;
mod static_import_names;
mod strategy;
mod systemd_module;
mod table_lookups;
mod tags;
mod target_patterns;
mod tempfile;
mod template;
mod template_errors;
mod template_header;
mod third_party_module;
mod trust;
mod unarchive;
mod uri;
mod users_groups;
mod variables;
mod vars_files;
mod vault;
mod vaulted_values;
mod wait_for;
mod working_dirs;
mod yaml_loading;

/// Every `.rs` file here is a module of this binary (a file left out would never run).
#[test]
fn every_test_file_is_a_module_of_this_binary() {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let main = std::fs::read_to_string(here.join("main.rs")).expect("main.rs read");
    let declared: Vec<&str> = main
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    for entry in std::fs::read_dir(&here).expect("tests/ listed") {
        let path = entry.expect("entry").path();
        let name = path
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let module = path.extension().is_some_and(|e| e == "rs") && name != "main"
            || path.join("mod.rs").is_file();
        assert!(
            !module || declared.contains(&name),
            "{} is not declared in tests/tests/main.rs: add `mod {name};`",
            path.display()
        );
    }
}
