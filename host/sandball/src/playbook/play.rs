//! A play: which hosts, its keywords, its roles, and its task lists (`pre_tasks`,
//! `tasks`, `post_tasks`, `handlers`).

use serde_json::Value;

use crate::playbook::attribute::Fields;
use crate::playbook::block::{TaskItem, task_items};
use crate::playbook::inheritance::{Keyword, Keywords};
use crate::playbook::keywords::is_play_keyword;
use crate::playbook::role::{self, RoleRef};
use crate::yaml::Node;
use crate::yaml::error::PlaybookError;
use crate::yaml::location::Location;
use crate::yaml::source::SourceFile;

/// One play of a playbook.
#[derive(Debug, Clone, PartialEq)]
pub struct Play {
    /// `name`.
    pub name: Option<String>,
    /// The host pattern; a YAML list of patterns is joined with `,`.
    pub hosts: String,
    /// `vars_files`: file names, or lists of candidates of which the first found is used.
    pub vars_files: Vec<Value>,
    /// `vars_prompt`.
    pub vars_prompt: Option<Value>,
    /// `gather_facts`.
    pub gather_facts: Option<Value>,
    /// `gather_subset`.
    pub gather_subset: Option<Value>,
    /// `gather_timeout`.
    pub gather_timeout: Option<Value>,
    /// `fact_path`.
    pub fact_path: Option<Value>,
    /// `serial`.
    pub serial: Option<Value>,
    /// `strategy`.
    pub strategy: Option<Value>,
    /// `order`.
    pub order: Option<Value>,
    /// `max_fail_percentage`.
    pub max_fail_percentage: Option<Value>,
    /// `force_handlers`.
    pub force_handlers: Option<Value>,
    /// `roles` (emptied once the roles are loaded into the play's tasks and handlers).
    pub roles: Vec<RoleRef>,
    /// The names of the play's roles, in order (`ansible_play_role_names`).
    pub role_names: Vec<String>,
    /// The names of the roles its roles depend on (`ansible_dependent_role_names`).
    pub dependent_role_names: Vec<String>,
    /// The play's roles (dependencies first), whose defaults and vars every task sees.
    pub loaded_roles: Vec<std::sync::Arc<crate::playbook::roles::Role>>,
    /// `pre_tasks`.
    pub pre_tasks: Vec<TaskItem>,
    /// `tasks`.
    pub tasks: Vec<TaskItem>,
    /// `post_tasks`.
    pub post_tasks: Vec<TaskItem>,
    /// `handlers`.
    pub handlers: Vec<TaskItem>,
    /// The keywords plays share with blocks and tasks (`vars`, `tags`, `become`…).
    pub keywords: Keywords,
    /// Where the play starts.
    pub location: Location,
}

impl Play {
    /// The directory of the file the play is written in (its imports' relative paths,
    /// `vars_files` and roles are found from there).
    pub fn dir(&self) -> std::path::PathBuf {
        self.location
            .file
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default()
    }

    /// `playbook_dir` while the play runs: [`dir`](Self::dir), absolute.
    pub fn playbook_dir(&self) -> std::path::PathBuf {
        let dir = self.dir();
        let dir = if dir.as_os_str().is_empty() {
            std::path::PathBuf::from(".")
        } else {
            dir
        };
        std::path::absolute(&dir).unwrap_or(dir)
    }

    /// Reads a play from its mapping.
    pub(crate) fn parse(source: &SourceFile, node: &Node) -> Result<Play, PlaybookError> {
        let fields = Fields::new(source, node, "Play")?;
        fields.reject_unknown(is_play_keyword)?;
        let tasks =
            |name: &str, handler: bool| task_items(source, fields.node(name), name, handler);
        Ok(Play {
            name: fields.string("name")?,
            hosts: hosts(&fields)?,
            vars_files: vars_files(&fields)?,
            vars_prompt: fields.value("vars_prompt"),
            gather_facts: fields.value("gather_facts"),
            gather_subset: fields.value("gather_subset"),
            gather_timeout: fields.value("gather_timeout"),
            fact_path: fields.value("fact_path"),
            serial: fields.value("serial"),
            strategy: fields.value("strategy"),
            order: fields.value("order"),
            max_fail_percentage: fields.value("max_fail_percentage"),
            force_handlers: fields.value("force_handlers"),
            keywords: with_user(&fields, Keywords::parse(&fields)?)?,
            roles: role::roles(&fields)?,
            role_names: Vec::new(),
            dependent_role_names: Vec::new(),
            loaded_roles: Vec::new(),
            pre_tasks: tasks("pre_tasks", false)?,
            tasks: tasks("tasks", false)?,
            post_tasks: tasks("post_tasks", false)?,
            handlers: tasks("handlers", true)?,
            location: fields.location(),
        })
    }
}

/// `hosts`: required; a non-empty string, or a non-empty list of strings joined with `,`.
fn hosts(play: &Fields<'_>) -> Result<String, PlaybookError> {
    let Some(entry) = play.entry("hosts") else {
        return Err(play.error("the field 'hosts' is required but was not set"));
    };
    let node = entry.value;
    let empty = |mark| {
        play.error_at(
            mark,
            "Hosts list cannot be empty. Please check your playbook",
        )
    };
    if let Some(pattern) = node.as_str() {
        return if pattern.trim().is_empty() {
            Err(empty(node.mark))
        } else {
            Ok(pattern.to_owned())
        };
    }
    if node.is_null() {
        return Err(empty(entry.key.mark));
    }
    let Some(items) = node.as_seq() else {
        return Err(play.error_at(
            node.mark,
            format!(
                "the hosts of a play must be a pattern string or a list of them, got {}",
                node.describe()
            ),
        ));
    };
    if items.is_empty() {
        return Err(empty(node.mark));
    }
    let patterns = items
        .iter()
        .map(|item| {
            item.as_str().ok_or_else(|| {
                play.error_at(
                    item.mark,
                    format!(
                        "the hosts of a play must be pattern strings, but an item is {}",
                        item.describe()
                    ),
                )
            })
        })
        .collect::<Result<Vec<&str>, _>>()?;
    Ok(patterns.join(","))
}

/// `vars_files`: one name, or a list whose items are names or lists of candidates.
fn vars_files(play: &Fields<'_>) -> Result<Vec<Value>, PlaybookError> {
    let Some(node) = play.node("vars_files").filter(|node| !node.is_null()) else {
        return Ok(Vec::new());
    };
    if let Some(items) = node.as_seq() {
        return Ok(items.iter().map(Node::to_json).collect());
    }
    if node.as_str().is_some() {
        return Ok(vec![node.to_json()]);
    }
    Err(play.error_at(
        node.mark,
        format!(
            "the field 'vars_files' must be a file name or a list of them, got {}",
            node.describe()
        ),
    ))
}

/// A play's `user`, the older name of `remote_user`, is its `remote_user`; both at
/// once is an error, as in Ansible.
fn with_user(fields: &Fields<'_>, mut keywords: Keywords) -> Result<Keywords, PlaybookError> {
    let Some(user) = fields.entry("user").filter(|e| !e.value.is_null()) else {
        return Ok(keywords);
    };
    if keywords.get(Keyword::RemoteUser).is_some() {
        return Err(fields.error_at(
            user.key.mark,
            "both 'user' and 'remote_user' are set for this play. The use of 'user' is deprecated, and should be removed",
        ));
    }
    keywords.set(
        Keyword::RemoteUser,
        user.value.to_json(),
        fields.source().location(user.key.mark),
    );
    Ok(keywords)
}

#[cfg(test)]
mod tests {
    use crate::playbook::inheritance::Keyword;
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::yaml;

    fn parse(text: &str) -> Result<Play, String> {
        let source = SourceFile::new(Path::new("p.yml"), text);
        let Ok(yaml::Document {
            root: Some(root), ..
        }) = yaml::load(&source)
        else {
            panic!("bad test YAML")
        };
        Play::parse(&source, &root).map_err(|error| {
            error
                .to_string()
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned()
        })
    }

    fn play(text: &str) -> Play {
        parse(text).unwrap_or_else(|error| panic!("{error}"))
    }

    #[test]
    fn reads_every_keyword() {
        let p = play(
            "name: Web
hosts: [web, db]
vars: {port: 80}
vars_files: [common.yml, [a.yml, b.yml]]
vars_prompt: [{name: pw}]
gather_facts: no
gather_subset: [min]
gather_timeout: 10
fact_path: /etc/facts
become: yes
become_user: root
become_method: su
become_flags: -l
become_exe: su
check_mode: false
diff: true
no_log: false
ignore_errors: true
ignore_unreachable: true
run_once: false
serial: [1, 50%]
strategy: free
order: sorted
any_errors_fatal: true
max_fail_percentage: 25
force_handlers: true
tags: [deploy]
environment: {PATH: /bin}
connection: ssh
remote_user: deploy
port: 22
timeout: 30
throttle: 5
debugger: never
collections: [my.col]
module_defaults: {}
capabilities: {network: false}
roles: [common]
pre_tasks: [{debug: msg=pre}]
tasks: [{debug: msg=main}]
post_tasks: [{debug: msg=post}]
handlers: [{name: h, debug: msg=h, listen: t}]
",
        );
        assert_eq!(p.name.as_deref(), Some("Web"));
        assert_eq!(p.hosts, "web,db");
        assert_eq!(Value::Object(p.keywords.vars.clone()), json!({"port": 80}));
        assert_eq!(
            p.vars_files,
            vec![json!("common.yml"), json!(["a.yml", "b.yml"])]
        );
        assert_eq!(p.vars_prompt, Some(json!([{"name": "pw"}])));
        assert_eq!(p.gather_facts, Some(json!(false)));
        assert_eq!(p.gather_subset, Some(json!(["min"])));
        assert_eq!(p.gather_timeout, Some(json!(10)));
        assert_eq!(p.fact_path, Some(json!("/etc/facts")));
        assert_eq!(p.keywords.get(Keyword::Become).cloned(), Some(json!(true)));
        assert_eq!(
            p.keywords.get(Keyword::BecomeUser).cloned(),
            Some(json!("root"))
        );
        assert_eq!(
            p.keywords.get(Keyword::BecomeMethod).cloned(),
            Some(json!("su"))
        );
        assert_eq!(
            p.keywords.get(Keyword::BecomeFlags).cloned(),
            Some(json!("-l"))
        );
        assert_eq!(
            p.keywords.get(Keyword::BecomeExe).cloned(),
            Some(json!("su"))
        );
        assert_eq!(
            p.keywords.get(Keyword::CheckMode).cloned(),
            Some(json!(false))
        );
        assert_eq!(p.keywords.get(Keyword::Diff).cloned(), Some(json!(true)));
        assert_eq!(p.keywords.get(Keyword::NoLog).cloned(), Some(json!(false)));
        assert_eq!(
            p.keywords.get(Keyword::IgnoreErrors).cloned(),
            Some(json!(true))
        );
        assert_eq!(
            p.keywords.get(Keyword::IgnoreUnreachable).cloned(),
            Some(json!(true))
        );
        assert_eq!(
            p.keywords.get(Keyword::RunOnce).cloned(),
            Some(json!(false))
        );
        assert_eq!(p.serial, Some(json!([1, "50%"])));
        assert_eq!(p.strategy, Some(json!("free")));
        assert_eq!(p.order, Some(json!("sorted")));
        assert_eq!(
            p.keywords.get(Keyword::AnyErrorsFatal).cloned(),
            Some(json!(true))
        );
        assert_eq!(p.max_fail_percentage, Some(json!(25)));
        assert_eq!(p.force_handlers, Some(json!(true)));
        assert_eq!(p.keywords.tags, vec!["deploy".to_owned()]);
        assert_eq!(
            p.keywords.get(Keyword::Environment).cloned(),
            Some(json!({"PATH": "/bin"}))
        );
        assert_eq!(
            p.keywords.get(Keyword::Connection).cloned(),
            Some(json!("ssh"))
        );
        assert_eq!(
            p.keywords.get(Keyword::RemoteUser).cloned(),
            Some(json!("deploy"))
        );
        assert_eq!(p.keywords.get(Keyword::Port).cloned(), Some(json!(22)));
        assert_eq!(p.keywords.get(Keyword::Timeout).cloned(), Some(json!(30)));
        assert_eq!(p.keywords.get(Keyword::Throttle).cloned(), Some(json!(5)));
        assert_eq!(
            p.keywords.get(Keyword::Debugger).cloned(),
            Some(json!("never"))
        );
        assert_eq!(
            p.keywords.get(Keyword::Collections).cloned(),
            Some(json!(["my.col"]))
        );
        assert_eq!(
            p.keywords.get(Keyword::ModuleDefaults).cloned(),
            Some(json!({}))
        );
        assert_eq!(
            p.keywords.get(Keyword::Capabilities).cloned(),
            Some(json!({"network": false}))
        );
        assert_eq!(p.roles.len(), 1);
        assert_eq!(p.pre_tasks.len(), 1);
        assert_eq!(p.tasks.len(), 1);
        assert_eq!(p.post_tasks.len(), 1);
        match &p.handlers[0] {
            TaskItem::Task(handler) => assert_eq!(handler.listen, vec!["t".to_owned()]),
            TaskItem::Block(_) => panic!("handler is a task"),
        }
        assert_eq!(p.location.to_string(), "p.yml:1:1");
    }

    #[test]
    fn a_minimal_play() {
        let p = play("hosts: all\n");
        assert_eq!(p.hosts, "all");
        assert_eq!(p.name, None);
        assert!(p.tasks.is_empty() && p.handlers.is_empty() && p.roles.is_empty());
        assert!(p.keywords.vars.is_empty() && p.vars_files.is_empty());
        assert_eq!(
            play("hosts: all\nvars_files: one.yml\n").vars_files,
            vec![json!("one.yml")]
        );
    }

    #[test]
    fn hosts_errors() {
        assert_eq!(
            parse("name: x\ntasks: []\n"),
            Err(
                "ERROR! the field 'hosts' is required but was not set in 'p.yml': line 1, column 1"
                    .to_owned()
            )
        );
        assert_eq!(
            parse("hosts:\n"),
            Err(
                "ERROR! Hosts list cannot be empty. Please check your playbook in 'p.yml': line 1, column 1"
                    .to_owned()
            )
        );
        assert_eq!(
            parse("hosts: ''\n"),
            Err(
                "ERROR! Hosts list cannot be empty. Please check your playbook in 'p.yml': line 1, column 8"
                    .to_owned()
            )
        );
        assert_eq!(
            parse("hosts: []\n"),
            Err(
                "ERROR! Hosts list cannot be empty. Please check your playbook in 'p.yml': line 1, column 8"
                    .to_owned()
            )
        );
        assert_eq!(
            parse("hosts: 5\n"),
            Err("ERROR! the hosts of a play must be a pattern string or a list of them, got an integer in 'p.yml': line 1, column 8".to_owned())
        );
        assert_eq!(
            parse("hosts: [web, ~]\n"),
            Err("ERROR! the hosts of a play must be pattern strings, but an item is null in 'p.yml': line 1, column 14".to_owned())
        );
    }

    #[test]
    fn user_is_the_older_name_of_remote_user() {
        let play = parse("hosts: all\nuser: bob\n").unwrap();
        assert_eq!(
            play.keywords.get(Keyword::RemoteUser),
            Some(&Value::String("bob".into()))
        );
        assert!(
            parse("hosts: all\nremote_user: a\nuser: b\n")
                .unwrap_err()
                .starts_with("ERROR! both 'user' and 'remote_user' are set for this play.")
        );
    }

    #[test]
    fn keyword_errors() {
        assert_eq!(
            parse("hosts: all\nfoo: bar\n"),
            Err(
                "ERROR! 'foo' is not a valid attribute for a Play in 'p.yml': line 2, column 1"
                    .to_owned()
            )
        );
        assert_eq!(
            parse("hosts: all\nwhen: x\n"),
            Err(
                "ERROR! 'when' is not a valid attribute for a Play in 'p.yml': line 2, column 1"
                    .to_owned()
            )
        );
        assert_eq!(
            parse("hosts: all\ntasks: {debug: msg=x}\n"),
            Err("ERROR! A malformed block was encountered while loading tasks: {'debug': 'msg=x'} should be a list or None but is a mapping (a list of tasks) in 'p.yml': line 2, column 8".to_owned())
        );
        assert_eq!(
            parse("hosts: all\nhandlers: x\n"),
            Err("ERROR! A malformed block was encountered while loading handlers: 'x' should be a list or None but is a string (a list of handlers) in 'p.yml': line 2, column 11".to_owned())
        );
        assert_eq!(
            parse("hosts: all\nvars_files: {a: 1}\n"),
            Err("ERROR! the field 'vars_files' must be a file name or a list of them, got a mapping in 'p.yml': line 2, column 13".to_owned())
        );
        assert_eq!(
            parse("hosts: all\nvars: [a]\n"),
            Err("ERROR! vars in a Play must be a mapping or a list of mappings, got a string in 'p.yml': line 2, column 8".to_owned())
        );
        assert_eq!(
            parse("hosts: all\ntasks:\n  - debug:\n    listen: x\n"),
            Err(
                "ERROR! 'listen' is not a valid attribute for a Task in 'p.yml': line 4, column 5"
                    .to_owned()
            )
        );
    }
}
