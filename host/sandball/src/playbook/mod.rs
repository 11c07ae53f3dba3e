//! Playbooks, loaded as Ansible 2.19 loads them: the YAML file (typed by Ansible's YAML
//! 1.1 rules, duplicate keys warned about) becomes plays, blocks, tasks and handlers,
//! each keyword checked and typed, every object carrying the `file:line:column` where
//! it starts. No templating happens here: values stay raw JSON for the executor.
//!
//! `roles:` are loaded here ([`roles`]): they become blocks of the play; so do
//! `import_tasks` and `import_role` (`imports`), and `import_playbook` brings the plays
//! of another file. Not resolved here: `include_*` tasks (run by the executor) and
//! `!vault` values (an error).

mod attribute;
mod block;
pub(crate) mod imports;
mod inheritance;
pub(crate) mod keywords;
mod loop_control;
mod mod_args;
pub(crate) use mod_args::takes_raw_params;
mod play;
mod role;
pub mod roles;
pub mod search_path;
pub(crate) mod splitter;
mod task;
pub mod value_origin;
pub mod vars_files;

use std::path::{Path, PathBuf};

pub use block::{Block, TaskItem};
pub use inheritance::{Chain, Keyword, Keywords, Setting, search_list};
pub use loop_control::{LoopControl, LoopKind};
pub use play::Play;
pub use role::RoleRef;
pub use task::Task;

use crate::yaml::source::{self, SourceFile};
use crate::yaml::{self, PlaybookError};

/// A loaded playbook.
#[derive(Debug, Clone, PartialEq)]
pub struct Playbook {
    /// The file it was loaded from.
    pub path: PathBuf,
    /// Its plays, in order.
    pub plays: Vec<Play>,
    /// What the loader warned about (duplicate mapping keys…), each saying where; a
    /// callback prints them after `[WARNING]: `.
    pub warnings: Vec<String>,
}

/// The keys that make a playbook entry an `import_playbook`.
const IMPORT_PLAYBOOK: &[&str] = &[
    "import_playbook",
    "ansible.builtin.import_playbook",
    "ansible.legacy.import_playbook",
];

/// Loads the playbook file at `path`.
/// [`load`], templating the names of static imports (`import_playbook`,
/// `import_tasks`, `import_role`) with `known`: what ansible-core knows when it reads
/// a playbook — the extra vars and the run's magic variables
/// ([`crate::vars::Magic::run_wide`]); `playbook_dir` is the directory of the
/// playbook being read, as in Ansible. The magic variables win over extra vars of
/// their names, as ansible-core layers them.
pub fn load_with_vars(
    path: &Path,
    known: &serde_json::Map<String, serde_json::Value>,
) -> Result<Playbook, PlaybookError> {
    IMPORT_VARS.with(|v| *v.borrow_mut() = known.clone());
    let loaded = load(path);
    IMPORT_VARS.with(|v| v.borrow_mut().clear());
    loaded
}

pub fn load(path: &Path) -> Result<Playbook, PlaybookError> {
    let text = std::fs::read_to_string(path).map_err(|source| PlaybookError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    load_str(&text, path)
}

/// Loads a playbook from `text`, naming it `path` in locations and errors.
pub fn load_str(text: &str, path: &Path) -> Result<Playbook, PlaybookError> {
    let source = SourceFile::new(path, text);
    let yaml::Document { root, warnings, .. } = yaml::load(&source)?;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let base = absolute.parent().unwrap_or(Path::new("."));
    LOAD_DIRS.with(|dirs| dirs.borrow_mut().push(base.to_path_buf()));
    let plays = load_entries(&source, root, base);
    LOAD_DIRS.with(|dirs| dirs.borrow_mut().pop());
    Ok(Playbook {
        path: path.to_path_buf(),
        plays: plays?,
        warnings,
    })
}

/// The plays of a playbook's top node (`root`, read from `source` in `base`).
fn load_entries(
    source: &SourceFile,
    root: Option<yaml::Node>,
    base: &Path,
) -> Result<Vec<Play>, PlaybookError> {
    let start = source::Mark { line: 1, column: 1 };
    let Some(root) = root.filter(|root| !root.is_null()) else {
        return Err(source.error(start, "empty playbook, nothing to do"));
    };
    let Some(entries) = root.as_seq() else {
        return Err(source.error(
            root.mark,
            format!(
                "a playbook must be a list of plays, got {} instead",
                root.describe()
            ),
        ));
    };
    if entries.is_empty() {
        return Err(source.error(root.mark, "A playbook must contain at least one play"));
    }
    entries
        .iter()
        .map(|entry| {
            let Some(keys) = entry.as_map() else {
                return Err(source.error(
                    entry.mark,
                    format!(
                        "a playbook entry must be a play or an 'import_playbook', got {}",
                        entry.describe()
                    ),
                ));
            };
            let import = keys.iter().find(|(key, _)| {
                key.as_str()
                    .is_some_and(|name| IMPORT_PLAYBOOK.contains(&name))
            });
            if let Some((key, value)) = import {
                return import_playbook(source, entry, key, value, base);
            }
            let mut play = Play::parse(source, entry)?;
            roles::expand(&mut play, base)?;
            imports::expand(&mut play, base)?;
            Ok(vec![play])
        })
        .collect::<Result<Vec<Vec<Play>>, PlaybookError>>()
        .map(|plays| plays.into_iter().flatten().collect())
}

/// The plays of an `import_playbook` entry: the playbook file (beside the importing
/// one), each of its plays with the entry's `vars` over its own, the entry's `tags`
/// added, and the entry's `when` holding for every task.
fn import_playbook(
    source: &SourceFile,
    entry: &yaml::Node,
    key: &yaml::Node,
    value: &yaml::Node,
    base: &Path,
) -> Result<Vec<Play>, PlaybookError> {
    let Some(name) = value.as_str().filter(|n| !n.trim().is_empty()) else {
        return Err(source.error(
            value.mark,
            "import_playbook needs the file of the playbook to import",
        ));
    };
    let fields = attribute::Fields::new(source, entry, "import_playbook")?;
    fields.reject_unknown(|k| {
        IMPORT_PLAYBOOK.contains(&k) || matches!(k, "vars" | "tags" | "when" | "name")
    })?;
    // The name, and the import names of the plays it brings, see this entry's `vars`
    // over those of the entries around it, and the extra vars over all.
    let entry_vars = fields.vars()?;
    ENTRY_VARS.with(|stack| stack.borrow_mut().push(entry_vars));
    let imported = import_entry(source, key, value, name, base);
    ENTRY_VARS.with(|stack| stack.borrow_mut().pop());
    let loaded = imported?;
    let vars = fields.vars()?;
    let tags = fields.tags()?;
    let when = fields.conditionals("when")?;
    let mut plays = loaded.plays;
    for play in &mut plays {
        play.keywords.vars.extend(vars.clone());
        play.keywords.tags.extend(tags.iter().cloned());
        play.keywords.when.extend(when.iter().cloned());
    }
    Ok(plays)
}

/// The playbook an `import_playbook` entry names (`name`, templated), read.
fn import_entry(
    source: &SourceFile,
    key: &yaml::Node,
    value: &yaml::Node,
    name: &str,
    base: &Path,
) -> Result<Playbook, PlaybookError> {
    let name = render_at_load(name, &serde_json::Map::new())
        .map_err(|e| source.error(value.mark, format!("import_playbook: {e}")))?;
    let path = base.join(&name);
    if !path.is_file() {
        return Err(source.error(
            key.mark,
            format!("Could not find or access '{}'", path.display()),
        ));
    }
    let depth = IMPORT_DEPTH.with(|d| {
        let n = d.get() + 1;
        d.set(n);
        n
    });
    let loaded = if depth > 32 {
        Err(source.error(
            key.mark,
            "playbooks import each other too deeply (does one import itself?)",
        ))
    } else {
        load(&path)
    };
    IMPORT_DEPTH.with(|d| d.set(d.get() - 1));
    loaded
}

thread_local! {
    /// How deep `import_playbook` is nested while loading.
    static IMPORT_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// The directories of the playbooks being read, the innermost last
    /// (`playbook_dir` of import names).
    static LOAD_DIRS: std::cell::RefCell<Vec<PathBuf>> = const { std::cell::RefCell::new(Vec::new()) };
    /// The extra vars and magic variables import names are templated with while
    /// loading.
    static IMPORT_VARS: std::cell::RefCell<serde_json::Map<String, serde_json::Value>> =
        std::cell::RefCell::new(serde_json::Map::new());
    /// The `vars` of the `import_playbook` entries being read, outermost first.
    static ENTRY_VARS: std::cell::RefCell<Vec<serde_json::Map<String, serde_json::Value>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The variables an import name is templated with while the playbook is read: `vars`
/// (the play's, or an `import_playbook` entry's), the `vars` of the `import_playbook`
/// entries being read over them, and over all what the run knows (the extra vars and
/// the magic variables, `playbook_dir` that of the playbook being read).
pub(crate) fn known_at_load(
    vars: &serde_json::Map<String, serde_json::Value>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut layered = vars.clone();
    ENTRY_VARS.with(|stack| {
        for (k, v) in stack.borrow().iter().flatten() {
            layered.insert(k.clone(), v.clone());
        }
    });
    IMPORT_VARS.with(|known| {
        for (k, v) in known.borrow().iter() {
            layered.insert(k.clone(), v.clone());
        }
    });
    LOAD_DIRS.with(|dirs| {
        if let Some(dir) = dirs.borrow().last() {
            layered.insert(
                "playbook_dir".into(),
                serde_json::Value::String(dir.display().to_string()),
            );
        }
    });
    layered
}

/// `text` rendered as an import name is while the playbook is read, with
/// [`known_at_load`]`(vars)`. Text without Jinja is returned as it is.
pub(crate) fn render_at_load(
    text: &str,
    vars: &serde_json::Map<String, serde_json::Value>,
) -> Result<String, String> {
    if !crate::template::is_template(text) {
        return Ok(text.to_string());
    }
    let mut layered = crate::template::Vars::new();
    for (k, v) in known_at_load(vars) {
        layered.set_trusted(&k, v);
    }
    crate::template::Templar::new()
        .render(text, &layered)
        .map_err(|e| e.to_string())
}

/// [`load_data`] for a file of variables (`vars_files`, `include_vars`): a name Ansible
/// reserves draws ansible-core's warning, with its origin.
pub fn load_vars_data(text: &str, path: &Path) -> Result<serde_json::Value, PlaybookError> {
    let source = SourceFile::new(path, text);
    let yaml::Document { root, .. } = yaml::load(&source)?;
    for (key, _) in root.as_ref().and_then(|r| r.as_map()).unwrap_or_default() {
        if let Some(name) = key.as_str() {
            attribute::warn_if_reserved(&source, name, key.mark);
        }
    }
    Ok(root.map(|r| r.to_json()).unwrap_or(serde_json::Value::Null))
}

/// Reads `key=value` pairs as Ansible does for `-e` and module argument strings
/// (quotes removed, escapes decoded). Words that are not pairs are an error.
pub fn parse_kv(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let pairs = splitter::parse_kv(text, false).map_err(|e| e.to_string())?;
    if let Some(raw) = pairs.get("_raw_params") {
        return Err(format!("not key=value pairs: {raw}"));
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use crate::playbook::inheritance::Keyword;
    use crate::yaml::UNSAFE_KEY;
    use std::io::Write;

    use serde_json::{Value, json};

    use super::*;

    const SITE: &str = "\
---
# a comment
- name: Configure web servers
  hosts: webservers
  become: yes
  vars:
    http_port: 80
    max_clients: 200
  tasks:
    - name: ensure apache is at the latest version
      ansible.builtin.yum:
        name: httpd
        state: latest

    - name: write the apache config file
      template: src=/srv/httpd.j2 dest=/etc/httpd.conf
      notify:
        - restart apache

    - block:
        - command: /bin/false
      rescue:
        - debug: msg=recovered
      when: ansible_os_family == 'RedHat'

  handlers:
    - name: restart apache
      service:
        name: httpd
        state: restarted

- hosts: databases
  gather_facts: false
  tasks:
    - shell: echo {{ item }} chdir=/tmp
      with_items: [a, b]
";

    fn loaded(text: &str) -> Playbook {
        load_str(text, Path::new("/srv/site.yml")).unwrap_or_else(|error| panic!("{error}"))
    }

    fn error(text: &str) -> String {
        match load_str(text, Path::new("/srv/site.yml")) {
            Ok(book) => panic!("expected an error, loaded {book:?}"),
            Err(error) => error.to_string(),
        }
    }

    fn task(item: &TaskItem) -> &Task {
        match item {
            TaskItem::Task(task) => task,
            TaskItem::Block(block) => panic!("not a task: {block:?}"),
        }
    }

    #[test]
    fn loads_plays_tasks_blocks_and_handlers_with_locations() {
        let book = loaded(SITE);
        assert_eq!(book.path, Path::new("/srv/site.yml"));
        assert!(book.warnings.is_empty());
        assert_eq!(book.plays.len(), 2);
        let web = &book.plays[0];
        assert_eq!(web.name.as_deref(), Some("Configure web servers"));
        assert_eq!(web.hosts, "webservers");
        assert_eq!(
            web.keywords.get(Keyword::Become).cloned(),
            Some(json!(true))
        );
        assert_eq!(
            Value::Object(web.keywords.vars.clone()),
            json!({"http_port": 80, "max_clients": 200})
        );
        assert_eq!(web.location.to_string(), "/srv/site.yml:3:3");
        let yum = task(&web.tasks[0]);
        assert_eq!(yum.action, "ansible.builtin.yum");
        assert_eq!(
            Value::Object(yum.args.clone()),
            json!({"name": "httpd", "state": "latest"})
        );
        assert_eq!(yum.location.to_string(), "/srv/site.yml:10:7");
        let template = task(&web.tasks[1]);
        assert_eq!(
            Value::Object(template.args.clone()),
            json!({"src": "/srv/httpd.j2", "dest": "/etc/httpd.conf"})
        );
        assert_eq!(
            template.keywords.notify(),
            vec!["restart apache".to_owned()]
        );
        assert_eq!(template.location.to_string(), "/srv/site.yml:15:7");
        let TaskItem::Block(block) = &web.tasks[2] else {
            panic!("third item is a block")
        };
        assert_eq!(block.location.to_string(), "/srv/site.yml:20:7");
        assert_eq!(
            block.keywords.when,
            vec![json!("ansible_os_family == 'RedHat'")]
        );
        assert_eq!(
            task(&block.rescue[0]).location.to_string(),
            "/srv/site.yml:23:11"
        );
        let handler = task(&web.handlers[0]);
        assert_eq!(handler.name.as_deref(), Some("restart apache"));
        assert_eq!(handler.location.to_string(), "/srv/site.yml:27:7");
        let db = &book.plays[1];
        assert_eq!(db.gather_facts, Some(json!(false)));
        let shell = task(&db.tasks[0]);
        assert_eq!(shell.loop_kind, LoopKind::WithItems);
        assert_eq!(shell.loop_, Some(json!(["a", "b"])));
        assert_eq!(
            Value::Object(shell.args.clone()),
            json!({"chdir": "/tmp", "_raw_params": "echo {{ item }}"})
        );
    }

    #[test]
    fn load_reads_the_file() {
        let mut file = tempfile::NamedTempFile::new().unwrap_or_else(|e| panic!("{e}"));
        file.write_all(b"- hosts: all\n  tasks:\n    - ping:\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let book = load(file.path()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(book.path, file.path());
        assert_eq!(
            task(&book.plays[0].tasks[0]).location.to_string(),
            format!("{}:3:7", file.path().display())
        );
    }

    #[test]
    fn a_missing_file_is_a_read_error() {
        let missing = Path::new("/nonexistent/dir/site.yml");
        let Err(error) = load(missing) else {
            panic!("loaded a missing file")
        };
        assert!(matches!(error, PlaybookError::Read { .. }));
        assert!(
            error
                .to_string()
                .starts_with("ERROR! could not read the playbook '/nonexistent/dir/site.yml': ")
        );
    }

    #[test]
    fn duplicate_keys_are_warnings_and_the_last_value_wins() {
        let book = loaded("- hosts: all\n  tasks:\n    - debug: msg=one\n      debug: msg=two\n");
        assert_eq!(
            task(&book.plays[0].tasks[0]).args.get("msg"),
            Some(&json!("two"))
        );
        assert_eq!(
            book.warnings,
            vec!["Found duplicate mapping key 'debug' in '/srv/site.yml': line 4, column 7. Using last defined value only.".to_owned()]
        );
    }

    #[test]
    fn errors_quote_the_offending_line() {
        assert_eq!(
            error(
                "- hosts: all\n  tasks:\n    - name: two actions\n      debug: msg=a\n      command: ls\n"
            ),
            "ERROR! conflicting action statements: debug, command in '/srv/site.yml': line 5, column 7\nOrigin: /srv/site.yml:5:7\n\n      debug: msg=a\n      command: ls\n      ^ here"
        );
        assert_eq!(
            error("- hosts: all\n  tasks:\n    - name: nothing to do\n"),
            "ERROR! no module/action detected in task in '/srv/site.yml': line 3, column 7\nOrigin: /srv/site.yml:3:7\n\n  tasks:\n    - name: nothing to do\n      ^ here"
        );
    }

    #[test]
    fn playbook_shape_errors() {
        assert_eq!(
            error(""),
            "ERROR! empty playbook, nothing to do in '/srv/site.yml': line 1, column 1\nOrigin: /srv/site.yml:1:1"
        );
        assert!(error("# nothing\n").starts_with(
            "ERROR! empty playbook, nothing to do in '/srv/site.yml': line 1, column 1"
        ));
        assert!(error("hosts: all\n").starts_with(
            "ERROR! a playbook must be a list of plays, got a mapping instead in '/srv/site.yml': line 1, column 1"
        ));
        assert!(error("[]\n").starts_with(
            "ERROR! A playbook must contain at least one play in '/srv/site.yml': line 1, column 1"
        ));
        assert!(error("- hosts: all\n- site.yml\n").starts_with(
            "ERROR! a playbook entry must be a play or an 'import_playbook', got a string in '/srv/site.yml': line 2, column 3"
        ));
        assert!(error("- hosts: all\n- name: more\n  ansible.builtin.import_playbook: other.yml\n").starts_with(
            "ERROR! Could not find or access '/srv/other.yml' in '/srv/site.yml': line 3, column 3"
        ));
        // A templated name needs what it names.
        let undefined = error("- import_playbook: \"{{ x }}.yml\"\n");
        assert!(
            undefined.starts_with("ERROR! import_playbook: ")
                && undefined.contains("'x' is undefined"),
            "{undefined}"
        );
        assert!(error("- import_playbook: other.yml\n  become: true\n").contains("become"));
    }

    #[test]
    fn yaml_errors_say_where() {
        assert_eq!(
            error("- hosts: all\n  tasks:\n    - debug: msg=x\n   - ping:\n"),
            "ERROR! YAML syntax error: while parsing a block mapping, did not find expected key in '/srv/site.yml': line 4, column 4\nOrigin: /srv/site.yml:4:4\n\n    - debug: msg=x\n   - ping:\n   ^ here"
        );
    }

    #[test]
    fn yaml_values_are_typed_like_ansible() {
        let book = loaded(
            "- hosts: all\n  vars:\n    a: yes\n    b: 'no'\n    c: 0644\n    d: 0o644\n    e: 1.0\n    f: ~\n    g: !unsafe '{{ raw }}'\n    h: 0x1F\n",
        );
        assert_eq!(
            Value::Object(book.plays[0].keywords.vars.clone()),
            json!({"a": true, "b": "no", "c": 420, "d": "0o644", "e": 1.0, "f": null,
                   "g": {UNSAFE_KEY: "{{ raw }}"}, "h": 31})
        );
    }

    #[test]
    fn hosts_lists_are_joined() {
        assert_eq!(
            loaded("- hosts:\n    - web\n    - db:&prod\n").plays[0].hosts,
            "web,db:&prod"
        );
    }
}
