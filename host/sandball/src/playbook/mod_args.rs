//! Which key of a task is its action, and what the action's arguments are, as Ansible's
//! module-argument parser decides: every key that is not a task keyword is the action
//! (exactly one may be), or `action:`/`local_action:` name it with a module string;
//! a string of arguments is read as `key=value` pairs (free-form actions keep their
//! command line in `_raw_params`); `args:` supplies arguments the inline ones override.

use sandball_pycompat::fqcn::ansible_short_name;
use serde_json::{Map, Value};

use crate::playbook::attribute::{Entry, Fields};
use crate::playbook::keywords::is_task_keyword;
use crate::playbook::splitter::{SplitError, parse_kv, split_args};
use crate::template::is_template;
use crate::yaml::error::PlaybookError;
use crate::yaml::source::Mark;
use crate::yaml::{Node, Yaml};

/// Actions, by short name, that accept words which are not `key=value` pairs.
const RAW_PARAM_ACTIONS: &[&str] = &[
    "add_host",
    "command",
    "group_by",
    "import_role",
    "import_tasks",
    "include_role",
    "include_tasks",
    "include_vars",
    "meta",
    "raw",
    "script",
    "set_fact",
    "shell",
    "win_command",
    "win_shell",
];

/// A task's action and its arguments.
#[derive(Debug, PartialEq)]
pub(crate) struct Action {
    /// The action as written: `file`, `ansible.builtin.file`, `debug`…
    pub(crate) name: String,
    /// The arguments: `args:` overridden by the action's own.
    pub(crate) args: Map<String, Value>,
    /// Whether the task used `local_action:` (and so runs delegated to localhost).
    pub(crate) local: bool,
}

/// An action found in the task, before its arguments are checked and merged.
struct Found {
    /// The action as written.
    name: String,
    /// Its own arguments.
    args: Map<String, Value>,
    /// Where its arguments are written.
    mark: Mark,
}

/// Whether the action's string argument is a command line, from which only a few
/// `key=value` options are taken out.
fn is_free_form(action: &str) -> bool {
    matches!(
        action,
        "ansible.windows.win_command" | "ansible.windows.win_shell"
    ) || matches!(
        ansible_short_name(action),
        "command" | "shell" | "raw" | "script" | "win_command" | "win_shell"
    )
}

/// Whether the action accepts `_raw_params`.
pub(crate) fn takes_raw_params(action: &str) -> bool {
    is_free_form(action) || RAW_PARAM_ACTIONS.contains(&ansible_short_name(action))
}

/// Finds the task's action and builds its arguments.
pub(crate) fn parse_action(task: &Fields<'_>) -> Result<Action, PlaybookError> {
    let base = args_keyword(task)?;
    let mut found: Option<Found> = None;
    if let Some(entry) = task.entry("action") {
        found = module_string_form(task, entry)?;
    }
    let local = task.entry("local_action");
    if let Some(entry) = local {
        if task.has("action") {
            return Err(task.error_at(
                entry.key.mark,
                "action and local_action are mutually exclusive",
            ));
        }
        found = module_string_form(task, entry)?;
    }
    for entry in task
        .entries()
        .iter()
        .filter(|entry| !is_task_keyword(entry.name))
    {
        if let Some(first) = &found {
            return Err(task.error_at(
                entry.key.mark,
                format!(
                    "conflicting action statements: {}, {}",
                    first.name, entry.name
                ),
            ));
        }
        // The facts `set_fact` sets are variables too.
        if ansible_short_name(entry.name) == "set_fact" {
            for (key, _) in entry.value.as_map().unwrap_or_default() {
                if let Some(name) = key.as_str() {
                    task.warn_if_reserved(name, key.mark);
                }
            }
        }
        found = Some(Found {
            name: entry.name.to_owned(),
            args: action_args(task, entry.name, entry.value)?,
            mark: entry.value.mark,
        });
    }
    let Some(Found {
        name,
        args: own,
        mark,
    }) = found
    else {
        return Err(task.error("no module/action detected in task"));
    };
    if ansible_short_name(&name) == "include" {
        return Err(PlaybookError::Removed(Box::new(task.error(
            "The 'ansible.builtin.include' action plugin has been removed. Use include_tasks \
             or import_tasks instead. This feature was removed from ansible-core in a release \
             after 2023-05-16.",
        ))));
    }
    if !is_free_form(&name)
        && let Some(key) = own.keys().find(|key| key.starts_with("_ansible_"))
    {
        return Err(task.error_at(
            mark,
            format!(
                "Invalid parameter specified beginning with keyword '_ansible_' for action \
                 '{name}': '{key}'. The prefix '_ansible_' is reserved for internal use only."
            ),
        ));
    }
    let mut args = base;
    args.extend(own);
    // Words that are not `key=value` pairs stay in `_raw_params` even for an action
    // that takes none: whether it does (a Python action plugin says) and whether they
    // are a template of its arguments is settled when the task runs
    // (`executor/task/args.rs`), as in ansible-core 2.19.
    Ok(Action {
        name,
        args,
        local: local.is_some(),
    })
}

/// The `args:` keyword: a mapping, or a template that gives one at run time.
fn args_keyword(task: &Fields<'_>) -> Result<Map<String, Value>, PlaybookError> {
    let Some(node) = task.node("args").filter(|node| !node.is_null()) else {
        return Ok(Map::new());
    };
    match (&node.value, node.as_str()) {
        (Yaml::Map(_), _) => Ok(object(node)),
        (_, Some(text)) if is_template(text) => {
            let mut args = Map::new();
            args.insert(
                "_variable_params".to_owned(),
                Value::String(text.to_owned()),
            );
            Ok(args)
        }
        _ => Err(task.error_at(
            node.mark,
            format!(
                "args must be a mapping or a template string (\"{{{{ var }}}}\"), got {}",
                node.describe()
            ),
        )),
    }
}

/// A mapping node as a JSON object.
fn object(node: &Node) -> Map<String, Value> {
    match node.to_json() {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The arguments given under the action's own key: a mapping, a `key=value` string, or
/// nothing.
fn action_args(
    task: &Fields<'_>,
    action: &str,
    node: &Node,
) -> Result<Map<String, Value>, PlaybookError> {
    match (&node.value, node.as_str()) {
        (Yaml::Map(_), _) => Ok(object(node)),
        (_, Some(text)) => parse_kv(text, is_free_form(action))
            .map_err(|error| task.error_at(node.mark, error.to_string())),
        (Yaml::Scalar(Value::Null), _) => Ok(Map::new()),
        _ => Err(unexpected_type(task, node)),
    }
}

fn unexpected_type(task: &Fields<'_>, node: &Node) -> PlaybookError {
    task.error_at(
        node.mark,
        format!("unexpected parameter type in action: {}", node.describe()),
    )
}

/// `action:` or `local_action:`: a string `module k=v…`, or a mapping with a `module`
/// key and the arguments (an `args` key among them is merged in). `None` when a mapping
/// names no module.
fn module_string_form(
    task: &Fields<'_>,
    entry: &Entry<'_>,
) -> Result<Option<Found>, PlaybookError> {
    let node = entry.value;
    let split_error = |error: SplitError| task.error_at(node.mark, error.to_string());
    let (module, mut args) = match &node.value {
        Yaml::Map(entries) => {
            let Some((_, module)) = entries
                .iter()
                .find(|(key, _)| key.as_str() == Some("module"))
            else {
                return Ok(None);
            };
            let Some(text) = module.as_str() else {
                return Err(task.error_at(
                    module.mark,
                    format!(
                        "the module name should be a string, got {}",
                        module.describe()
                    ),
                ));
            };
            crate::template::deprecate(
                "Using a mapping for `action` is deprecated.",
                "2.23",
                format!(
                    "\n{}\nUse a string value for `action`.\n",
                    task.source().location(node.mark).origin_block(true)
                ),
                None,
            );
            let mut args = object(node);
            args.shift_remove("module");
            (text, args)
        }
        _ => match node.as_str() {
            Some(text) => (text, Map::new()),
            None => return Err(unexpected_type(task, node)),
        },
    };
    let words = split_args(module).map_err(split_error)?;
    let Some((name, rest)) = words.split_first() else {
        return Err(task.error_at(node.mark, "no module/action detected in task"));
    };
    let name = name.trim().to_owned();
    args.extend(parse_kv(&rest.join(" "), is_free_form(&name)).map_err(split_error)?);
    if let Some(extra) = args.shift_remove("args") {
        match extra {
            Value::Object(map) => args.extend(map),
            Value::String(text) => args.extend(parse_kv(&text, false).map_err(split_error)?),
            _ => {
                return Err(task.error_at(
                    node.mark,
                    "the 'args' of an action must be a mapping or a key=value string",
                ));
            }
        }
    }
    Ok(Some(Found {
        name,
        args,
        mark: node.mark,
    }))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::yaml;
    use crate::yaml::source::SourceFile;

    fn action_of(text: &str) -> Result<Action, String> {
        let source = SourceFile::new(Path::new("m.yml"), text);
        let Ok(yaml::Document {
            root: Some(root), ..
        }) = yaml::load(&source)
        else {
            panic!("bad test YAML")
        };
        Fields::new(&source, &root, "Task")
            .and_then(|fields| parse_action(&fields))
            .map_err(|error| {
                error
                    .to_string()
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned()
            })
    }

    fn ok(text: &str) -> (String, Value, bool) {
        match action_of(text) {
            Ok(action) => (action.name, Value::Object(action.args), action.local),
            Err(error) => panic!("{error}"),
        }
    }

    fn err(text: &str) -> String {
        match action_of(text) {
            Ok(action) => panic!("expected an error, got {action:?}"),
            Err(error) => error,
        }
    }

    #[test]
    fn mapping_arguments_stay_typed() {
        assert_eq!(
            ok("name: t\nansible.builtin.file:\n  path: /x\n  mode: 0644\n  force: yes\n"),
            (
                "ansible.builtin.file".into(),
                json!({"path": "/x", "mode": 420, "force": true}),
                false
            )
        );
    }

    #[test]
    fn string_arguments_are_key_value_strings() {
        assert_eq!(
            ok("file: path=/x state=touch mode=0644\n"),
            (
                "file".into(),
                json!({"path": "/x", "state": "touch", "mode": "0644"}),
                false
            )
        );
        assert_eq!(
            ok("debug: msg=\"hello there\"\n").1,
            json!({"msg": "hello there"})
        );
        assert_eq!(ok("ping:\n").1, json!({}));
    }

    #[test]
    fn free_form_actions_keep_their_command_line() {
        assert_eq!(
            ok("shell: echo {{ a }} > /tmp/out chdir=/tmp\n").1,
            json!({"chdir": "/tmp", "_raw_params": "echo {{ a }} > /tmp/out"})
        );
        assert_eq!(
            ok("ansible.builtin.command: ls -l name=x\nargs:\n  creates: /y\n").1,
            json!({"creates": "/y", "_raw_params": "ls -l name=x"})
        );
        assert_eq!(ok("raw: uptime\n").1, json!({"_raw_params": "uptime"}));
        assert_eq!(
            ok("ansible.windows.win_shell: dir\n").1,
            json!({"_raw_params": "dir"})
        );
    }

    #[test]
    fn raw_param_actions_take_words_and_pairs() {
        assert_eq!(
            ok("meta: flush_handlers\n").1,
            json!({"_raw_params": "flush_handlers"})
        );
        assert_eq!(
            ok("include_tasks: other.yml\n").1,
            json!({"_raw_params": "other.yml"})
        );
        assert_eq!(ok("set_fact: a=1 b=two\n").1, json!({"a": "1", "b": "two"}));
        assert_eq!(ok("include_role: name=web\n").1, json!({"name": "web"}));
        assert_eq!(
            ok("ansible.builtin.include_vars: vars.yml\n").1,
            json!({"_raw_params": "vars.yml"})
        );
    }

    #[test]
    fn extra_params_are_kept_for_run_time() {
        assert_eq!(
            ok("file: /tmp/x state=touch\n").1,
            json!({"_raw_params": "/tmp/x", "state": "touch"})
        );
        assert_eq!(
            ok("file: \"{{ file_args }}\"\n").1,
            json!({"_raw_params": "{{ file_args }}"})
        );
    }

    #[test]
    fn args_keyword_is_overridden_by_inline_arguments() {
        assert_eq!(
            ok("copy: dest=/a\nargs:\n  dest: /b\n  content: x\n").1,
            json!({"dest": "/a", "content": "x"})
        );
        assert_eq!(
            ok("copy:\nargs: \"{{ copy_args }}\"\n").1,
            json!({"_variable_params": "{{ copy_args }}"})
        );
        assert_eq!(
            err("copy:\nargs: dest=/a\n"),
            "ERROR! args must be a mapping or a template string (\"{{ var }}\"), got a string in 'm.yml': line 2, column 7"
        );
    }

    #[test]
    fn action_keyword_forms() {
        assert_eq!(
            ok("action: file path=/x state=absent\n"),
            (
                "file".into(),
                json!({"path": "/x", "state": "absent"}),
                false
            )
        );
        assert_eq!(
            ok("action:\n  module: copy dest=/a\n  content: hi\n  args: {mode: '0600'}\n"),
            (
                "copy".into(),
                json!({"content": "hi", "dest": "/a", "mode": "0600"}),
                false
            )
        );
        assert_eq!(
            ok("action: shell echo hi chdir=/tmp\n").1,
            json!({"chdir": "/tmp", "_raw_params": "echo hi"})
        );
        assert_eq!(
            ok("local_action: command whoami\n"),
            ("command".into(), json!({"_raw_params": "whoami"}), true)
        );
        assert_eq!(
            ok("local_action:\n  module: debug\n  msg: hi\n"),
            ("debug".into(), json!({"msg": "hi"}), true)
        );
    }

    #[test]
    fn action_keyword_errors() {
        assert_eq!(
            err("action: file\nlocal_action: copy\n"),
            "ERROR! action and local_action are mutually exclusive in 'm.yml': line 2, column 1"
        );
        assert_eq!(
            err("action: file path=/x\ndebug: msg=x\n"),
            "ERROR! conflicting action statements: file, debug in 'm.yml': line 2, column 1"
        );
        assert_eq!(
            err("name: t\naction:\n  path: /x\n"),
            "ERROR! no module/action detected in task in 'm.yml': line 1, column 1"
        );
        assert_eq!(
            err("action: 5\n"),
            "ERROR! unexpected parameter type in action: an integer in 'm.yml': line 1, column 9"
        );
        assert_eq!(
            err("action: \"\"\n"),
            "ERROR! no module/action detected in task in 'm.yml': line 1, column 9"
        );
        assert_eq!(
            err("action: {module: [a]}\n"),
            "ERROR! the module name should be a string, got a list in 'm.yml': line 1, column 18"
        );
    }

    #[test]
    fn exactly_one_action() {
        assert_eq!(
            err("name: two\ndebug: msg=a\ncommand: ls\n"),
            "ERROR! conflicting action statements: debug, command in 'm.yml': line 3, column 1"
        );
        assert_eq!(
            err("name: none\nwhen: x\n"),
            "ERROR! no module/action detected in task in 'm.yml': line 1, column 1"
        );
    }

    #[test]
    fn argument_type_and_split_errors() {
        assert_eq!(
            err("debug: [a]\n"),
            "ERROR! unexpected parameter type in action: a list in 'm.yml': line 1, column 8"
        );
        assert_eq!(
            err("debug: msg=\"unclosed\n"),
            "ERROR! failed at splitting arguments, either an unbalanced jinja2 block or quotes: msg=\"unclosed in 'm.yml': line 1, column 8"
        );
        assert_eq!(
            err("debug:\n  _ansible_check_mode: true\n"),
            "ERROR! Invalid parameter specified beginning with keyword '_ansible_' for action 'debug': '_ansible_check_mode'. The prefix '_ansible_' is reserved for internal use only. in 'm.yml': line 2, column 3"
        );
    }
}
