//! A task: its action and arguments, and every task keyword with the type Ansible gives
//! it. Values stay raw JSON (templating is the executor's work).

use serde_json::{Map, Value};

use crate::playbook::attribute::Fields;
use crate::playbook::inheritance::{Keyword, Keywords};
use crate::playbook::loop_control::{self, LoopControl, LoopKind};
use crate::playbook::mod_args;
use crate::yaml::Node;
use crate::yaml::error::PlaybookError;
use crate::yaml::location::Location;
use crate::yaml::source::SourceFile;

/// One task (or handler) of a play, a block or a role. The default is an empty task,
/// for the ones the executor adds itself (fact gathering).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Task {
    /// `name`.
    pub name: Option<String>,
    /// Where `name`'s value is (for the warning about a name that cannot be templated).
    pub name_location: Option<Location>,
    /// The action as written: `file`, `ansible.builtin.file`, `debug`, `include_tasks`…
    pub action: String,
    /// The action's arguments: a mapping stays typed, a `key=value` string gives strings;
    /// free-form text is in `_raw_params`, and a templated argument string that must
    /// give a mapping at run time is in `_variable_params`.
    pub args: Map<String, Value>,
    /// `register`: a valid variable name.
    pub register: Option<String>,
    /// `register` as a mapping (ansible-core 2.21's register projections): each name
    /// and the expression (or value) it is registered with once the task is done.
    pub projections: Vec<(String, Value)>,
    /// The loop's value, from `loop:` or a `with_<lookup>:` keyword.
    pub loop_: Option<Value>,
    /// Which keyword `loop_` came from (`Loop` when there is no loop).
    pub loop_kind: LoopKind,
    /// `loop_control`.
    pub loop_control: Option<LoopControl>,
    /// `changed_when`, as a list of conditionals.
    pub changed_when: Vec<Value>,
    /// `failed_when`, as a list of conditionals.
    pub failed_when: Vec<Value>,
    /// `listen` (handlers only): the topics the handler answers to.
    pub listen: Vec<String>,
    /// `until`.
    pub until: Option<Value>,
    /// `retries`.
    pub retries: Option<Value>,
    /// `delay`.
    pub delay: Option<Value>,
    /// `async`.
    pub async_: Option<Value>,
    /// `poll`.
    pub poll: Option<Value>,
    /// The keywords tasks share with blocks and plays (`when`, `vars`, `no_log`…).
    pub keywords: Keywords,
    /// Where the task starts.
    pub location: Location,
}

impl Task {
    /// Reads a task (a handler with `handler`) from its mapping.
    pub(crate) fn parse(
        source: &SourceFile,
        node: &Node,
        handler: bool,
    ) -> Result<Task, PlaybookError> {
        let fields = Fields::new(source, node, if handler { "Handler" } else { "Task" })?;
        let action = mod_args::parse_action(&fields)?;
        if !handler {
            fields.reject_unknown(|name| name != "listen")?;
        }
        let (loop_, loop_kind) = match loop_control::task_loop(&fields)? {
            Some((value, kind)) => (Some(value), kind),
            None => (None, LoopKind::Loop),
        };
        let mut keywords = Keywords::parse(&fields)?;
        keywords.dir = fields
            .location()
            .file
            .parent()
            .map(std::path::Path::to_path_buf);
        if action.local {
            let at = fields
                .entry("local_action")
                .map_or_else(|| fields.location(), |e| source.location(e.key.mark));
            keywords.set(
                Keyword::DelegateTo,
                Value::String("localhost".to_owned()),
                at,
            );
        }
        let (register, projections) = fields.register()?;
        Ok(Task {
            name: fields.string("name")?,
            name_location: fields
                .node("name")
                .map(|n| fields.source().location(n.mark)),
            action: action.name,
            args: action.args,
            register,
            projections,
            loop_,
            loop_kind,
            loop_control: loop_control::loop_control(&fields)?,
            changed_when: fields.conditionals("changed_when")?,
            failed_when: fields.conditionals("failed_when")?,
            listen: fields.name_list("listen")?,
            until: fields.value("until"),
            retries: fields.value("retries"),
            delay: fields.value("delay"),
            async_: fields.value("async"),
            poll: fields.value("poll"),
            keywords,
            location: fields.location(),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::playbook::inheritance::Keyword;
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::yaml;

    fn parse(text: &str, handler: bool) -> Result<Task, String> {
        let source = SourceFile::new(Path::new("/p/t.yml"), text);
        let Ok(yaml::Document {
            root: Some(root), ..
        }) = yaml::load(&source)
        else {
            panic!("bad test YAML")
        };
        Task::parse(&source, &root, handler).map_err(|error| {
            error
                .to_string()
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned()
        })
    }

    fn task(text: &str) -> Task {
        parse(text, false).unwrap_or_else(|error| panic!("{error}"))
    }

    #[test]
    fn reads_every_keyword() {
        let t = task(
            "name: Install it
ansible.builtin.package:
  name: nginx
register: out
when: ansible_os_family == 'Debian'
with_items: [a, b]
loop_control: {loop_var: pkg}
ignore_errors: yes
ignore_unreachable: true
changed_when: false
failed_when: [out.rc != 0, out.rc != 2]
no_log: true
vars: {x: 1}
tags: install,web
check_mode: no
diff: true
delegate_to: other
delegate_facts: true
run_once: true
notify: restart nginx
until: out is success
retries: 3
delay: 1
environment: {A: b}
become: true
become_user: root
become_method: sudo
become_flags: -H
become_exe: sudo
connection: local
remote_user: admin
port: 2222
timeout: 10
throttle: 2
any_errors_fatal: true
async: 60
poll: 0
collections: [community.general]
module_defaults: {}
debugger: on_failed
capabilities: {network: true}
",
        );
        assert_eq!(t.name.as_deref(), Some("Install it"));
        assert_eq!(t.action, "ansible.builtin.package");
        assert_eq!(Value::Object(t.args), json!({"name": "nginx"}));
        assert_eq!(t.register.as_deref(), Some("out"));
        assert_eq!(
            t.keywords.when,
            vec![json!("ansible_os_family == 'Debian'")]
        );
        assert_eq!(t.loop_, Some(json!(["a", "b"])));
        assert_eq!(t.loop_kind, LoopKind::WithItems);
        assert_eq!(
            t.loop_control.map(|control| control.loop_var).as_deref(),
            Some("pkg")
        );
        assert_eq!(
            t.keywords.get(Keyword::IgnoreErrors).cloned(),
            Some(json!(true))
        );
        assert_eq!(
            t.keywords.get(Keyword::IgnoreUnreachable).cloned(),
            Some(json!(true))
        );
        assert_eq!(t.changed_when, vec![json!(false)]);
        assert_eq!(
            t.failed_when,
            vec![json!("out.rc != 0"), json!("out.rc != 2")]
        );
        assert_eq!(t.keywords.get(Keyword::NoLog).cloned(), Some(json!(true)));
        assert_eq!(Value::Object(t.keywords.vars.clone()), json!({"x": 1}));
        assert_eq!(
            t.keywords.tags,
            vec!["install".to_owned(), "web".to_owned()]
        );
        assert_eq!(
            t.keywords.get(Keyword::CheckMode).cloned(),
            Some(json!(false))
        );
        assert_eq!(t.keywords.get(Keyword::Diff).cloned(), Some(json!(true)));
        assert_eq!(
            t.keywords.get(Keyword::DelegateTo).cloned(),
            Some(json!("other"))
        );
        assert_eq!(
            t.keywords.get(Keyword::DelegateFacts).cloned(),
            Some(json!(true))
        );
        assert_eq!(t.keywords.get(Keyword::RunOnce).cloned(), Some(json!(true)));
        assert_eq!(t.keywords.notify(), vec!["restart nginx".to_owned()]);
        assert!(t.listen.is_empty());
        assert_eq!(t.until, Some(json!("out is success")));
        assert_eq!(t.retries, Some(json!(3)));
        assert_eq!(t.delay, Some(json!(1)));
        assert_eq!(
            t.keywords.get(Keyword::Environment).cloned(),
            Some(json!({"A": "b"}))
        );
        assert_eq!(t.keywords.get(Keyword::Become).cloned(), Some(json!(true)));
        assert_eq!(
            t.keywords.get(Keyword::BecomeUser).cloned(),
            Some(json!("root"))
        );
        assert_eq!(
            t.keywords.get(Keyword::BecomeMethod).cloned(),
            Some(json!("sudo"))
        );
        assert_eq!(
            t.keywords.get(Keyword::BecomeFlags).cloned(),
            Some(json!("-H"))
        );
        assert_eq!(
            t.keywords.get(Keyword::BecomeExe).cloned(),
            Some(json!("sudo"))
        );
        assert_eq!(
            t.keywords.get(Keyword::Connection).cloned(),
            Some(json!("local"))
        );
        assert_eq!(
            t.keywords.get(Keyword::RemoteUser).cloned(),
            Some(json!("admin"))
        );
        assert_eq!(t.keywords.get(Keyword::Port).cloned(), Some(json!(2222)));
        assert_eq!(t.keywords.get(Keyword::Timeout).cloned(), Some(json!(10)));
        assert_eq!(t.keywords.get(Keyword::Throttle).cloned(), Some(json!(2)));
        assert_eq!(
            t.keywords.get(Keyword::AnyErrorsFatal).cloned(),
            Some(json!(true))
        );
        assert_eq!(t.async_, Some(json!(60)));
        assert_eq!(t.poll, Some(json!(0)));
        assert_eq!(
            t.keywords.get(Keyword::Collections).cloned(),
            Some(json!(["community.general"]))
        );
        assert_eq!(
            t.keywords.get(Keyword::ModuleDefaults).cloned(),
            Some(json!({}))
        );
        assert_eq!(
            t.keywords.get(Keyword::Debugger).cloned(),
            Some(json!("on_failed"))
        );
        assert_eq!(
            t.keywords.get(Keyword::Capabilities).cloned(),
            Some(json!({"network": true}))
        );
        assert_eq!(t.location.to_string(), "/p/t.yml:1:1");
    }

    #[test]
    fn a_minimal_task_has_empty_keywords() {
        let t = task("ping:\n");
        assert_eq!(t.action, "ping");
        assert!(t.args.is_empty());
        assert_eq!(t.name, None);
        assert_eq!(t.loop_, None);
        assert_eq!(t.loop_kind, LoopKind::Loop);
        assert!(
            t.keywords.when.is_empty()
                && t.keywords.tags.is_empty()
                && t.keywords.notify().is_empty()
        );
        assert_eq!(t.keywords.get(Keyword::Become).cloned(), None);
        assert_eq!(t.keywords.get(Keyword::DelegateTo).cloned(), None);
    }

    #[test]
    fn local_action_delegates_to_localhost() {
        let t = task("local_action: command hostname\ndelegate_to: elsewhere\n");
        assert_eq!(t.action, "command");
        assert_eq!(
            t.keywords.get(Keyword::DelegateTo).cloned(),
            Some(json!("localhost"))
        );
    }

    #[test]
    fn when_takes_booleans_and_lists() {
        assert_eq!(
            task("debug:\nwhen: true\n").keywords.when,
            vec![json!(true)]
        );
        assert_eq!(
            task("debug:\nwhen: [a, false]\n").keywords.when,
            vec![json!("a"), json!(false)]
        );
        assert_eq!(
            parse("debug:\nwhen: {a: 1}\n", false),
            Err("ERROR! the field 'when' must be a conditional (a string or a boolean) or a list of them, got a mapping in '/p/t.yml': line 2, column 7".to_owned())
        );
    }

    #[test]
    fn listen_is_for_handlers_only() {
        let handler = parse(
            "name: restart\nservice: name=x state=restarted\nlisten: web changed\n",
            true,
        );
        assert_eq!(
            handler.map(|h| h.listen),
            Ok(vec!["web changed".to_owned()])
        );
        assert_eq!(
            parse("debug:\nlisten: x\n", false),
            Err("ERROR! 'listen' is not a valid attribute for a Task in '/p/t.yml': line 2, column 1".to_owned())
        );
    }

    #[test]
    fn wrong_types_say_where() {
        assert_eq!(
            parse("name: [a]\ndebug:\n", false),
            Err("ERROR! the field 'name' should be a string, got a list in '/p/t.yml': line 1, column 7".to_owned())
        );
        assert_eq!(
            parse("debug:\nregister: 1x\n", false),
            Err("ERROR! Invalid 'register' specified: Invalid variable name '1x'. in '/p/t.yml': line 2, column 11".to_owned())
        );
        assert_eq!(
            parse("debug:\nregister: 200\n", false),
            Err("ERROR! Invalid 'register' specified: Invalid variable name '200' of type 'int'. in '/p/t.yml': line 2, column 11".to_owned())
        );
        assert_eq!(
            parse("debug:\nnotify: {a: b}\n", false),
            Err("ERROR! the field 'notify' must be a string or a list of strings, got a mapping in '/p/t.yml': line 2, column 9".to_owned())
        );
    }

    #[test]
    fn a_handler_names_itself_in_errors() {
        assert_eq!(
            parse("name: x\n", true),
            Err(
                "ERROR! no module/action detected in task in '/p/t.yml': line 1, column 1"
                    .to_owned()
            )
        );
        assert_eq!(
            parse("debug:\nvars: [1]\n", true),
            Err("ERROR! vars in a Handler must be a mapping or a list of mappings, got an integer in '/p/t.yml': line 2, column 8".to_owned())
        );
    }
}
