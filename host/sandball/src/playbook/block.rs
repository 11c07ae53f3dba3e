//! Lists of tasks and the blocks among them: a `block:` (with its `rescue:` and
//! `always:` sections) groups tasks under shared keywords; any other mapping in a task
//! list is a task.

use crate::playbook::attribute::Fields;
use crate::playbook::inheritance::Keywords;
use crate::playbook::keywords::{is_block_keyword, is_block_section};
use crate::playbook::task::Task;
use crate::yaml::Node;
use crate::yaml::error::PlaybookError;
use crate::yaml::location::Location;
use crate::yaml::source::SourceFile;

/// One entry of a task list.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskItem {
    /// A task (a handler, in a play's `handlers`).
    Task(Box<Task>),
    /// A block of tasks.
    Block(Box<Block>),
}

/// A `block:` with its `rescue:` and `always:` sections and the keywords its tasks
/// inherit.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// `name`.
    pub name: Option<String>,
    /// The tasks of `block:`.
    pub block: Vec<TaskItem>,
    /// The tasks of `rescue:`, run when a task of `block:` fails.
    pub rescue: Vec<TaskItem>,
    /// The tasks of `always:`, run in any case.
    pub always: Vec<TaskItem>,
    /// The keywords its tasks inherit (`when`, `vars`, `become`, `notify`…).
    pub keywords: Keywords,
    /// Where the block starts.
    pub location: Location,
}

impl Block {
    /// Reads a block from its mapping; its tasks are handlers when `handler` is set.
    fn parse(source: &SourceFile, node: &Node, handler: bool) -> Result<Block, PlaybookError> {
        let fields = Fields::new(source, node, "Block")?;
        fields.reject_unknown(is_block_keyword)?;
        let section = |name: &str| {
            let items = task_items(source, fields.node(name), name, handler)?;
            // A handler may be a block of handlers, as ansible-core reads it, but a
            // block inside it is refused, as there.
            match items.iter().find_map(|i| match i {
                TaskItem::Block(b) if handler => Some(b),
                _ => None,
            }) {
                Some(nested) => Err(PlaybookError::at(
                    &nested.location,
                    "Using a block as a handler is not supported.",
                )),
                None => Ok(items),
            }
        };
        Ok(Block {
            name: fields.string("name")?,
            block: section("block")?,
            rescue: section("rescue")?,
            always: section("always")?,
            keywords: Keywords::parse(&fields)?,
            location: fields.location(),
        })
    }
}

/// Reads the task list under keyword `field` (`tasks`, `handlers`, `block`…): absent or
/// null is empty; each entry is a block if it has a `block`, `rescue` or `always` key,
/// else a task (a handler when `handler` is set).
pub(crate) fn task_items(
    source: &SourceFile,
    node: Option<&Node>,
    field: &str,
    handler: bool,
) -> Result<Vec<TaskItem>, PlaybookError> {
    let Some(node) = node.filter(|node| !node.is_null()) else {
        return Ok(Vec::new());
    };
    let what = if handler { "handler" } else { "task" };
    let Some(items) = node.as_seq() else {
        return Err(source.error(
            node.mark,
            format!(
                "A malformed block was encountered while loading {field}: {} should be a list or None but is {} (a list of {what}s)",
                sandball_pycompat::pyfmt::py_repr(&node.to_json()),
                node.describe()
            ),
        ));
    };
    items
        .iter()
        .map(|item| {
            let Some(entries) = item.as_map() else {
                return Err(source.error(
                    item.mark,
                    format!(
                        "a {what} in '{field}' must be a mapping, got {}",
                        item.describe()
                    ),
                ));
            };
            let is_block = entries
                .iter()
                .any(|(key, _)| key.as_str().is_some_and(is_block_section));
            Ok(if is_block {
                TaskItem::Block(Box::new(Block::parse(source, item, handler)?))
            } else {
                TaskItem::Task(Box::new(Task::parse(source, item, handler)?))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::playbook::inheritance::Keyword;
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::yaml;

    fn items(text: &str, handler: bool) -> Result<Vec<TaskItem>, String> {
        let source = SourceFile::new(Path::new("b.yml"), text);
        let Ok(yaml::Document { root, .. }) = yaml::load(&source) else {
            panic!("bad test YAML")
        };
        task_items(&source, root.as_ref(), "tasks", handler).map_err(|error| {
            error
                .to_string()
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned()
        })
    }

    fn block_of(item: &TaskItem) -> &Block {
        match item {
            TaskItem::Block(block) => block,
            TaskItem::Task(task) => panic!("not a block: {task:?}"),
        }
    }

    fn task_of(item: &TaskItem) -> &Task {
        match item {
            TaskItem::Task(task) => task,
            TaskItem::Block(block) => panic!("not a task: {block:?}"),
        }
    }

    #[test]
    fn blocks_with_sections_and_keywords() {
        let list = items(
            "- name: outer
  when: go
  become: true
  vars: {a: 1}
  tags: [b]
  notify: h
  block:
    - debug: msg=one
    - block:
        - command: /bin/false
      rescue:
        - debug: msg=rescued
  rescue:
    - debug: msg=r
  always:
    - debug: msg=a
- debug: msg=after
",
            false,
        )
        .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(list.len(), 2);
        let outer = block_of(&list[0]);
        assert_eq!(outer.name.as_deref(), Some("outer"));
        assert_eq!(outer.keywords.when, vec![json!("go")]);
        assert_eq!(
            outer.keywords.get(Keyword::Become).cloned(),
            Some(json!(true))
        );
        assert_eq!(
            serde_json::Value::Object(outer.keywords.vars.clone()),
            json!({"a": 1})
        );
        assert_eq!(outer.keywords.tags, vec!["b".to_owned()]);
        assert_eq!(outer.keywords.notify(), vec!["h".to_owned()]);
        assert_eq!(outer.location.to_string(), "b.yml:1:3");
        assert_eq!(outer.block.len(), 2);
        assert_eq!(task_of(&outer.block[0]).location.to_string(), "b.yml:8:7");
        let inner = block_of(&outer.block[1]);
        assert_eq!(task_of(&inner.block[0]).action, "command");
        assert_eq!(
            task_of(&inner.rescue[0]).location.to_string(),
            "b.yml:12:11"
        );
        assert!(inner.always.is_empty());
        assert_eq!(task_of(&outer.rescue[0]).args.get("msg"), Some(&json!("r")));
        assert_eq!(task_of(&outer.always[0]).args.get("msg"), Some(&json!("a")));
        assert_eq!(task_of(&list[1]).location.to_string(), "b.yml:17:3");
    }

    #[test]
    fn rescue_alone_makes_a_block() {
        let list = items("- rescue:\n    - debug:\n", false).unwrap_or_default();
        assert!(block_of(&list[0]).block.is_empty());
        assert_eq!(block_of(&list[0]).rescue.len(), 1);
    }

    #[test]
    fn tasks_inside_handler_blocks_are_handlers() {
        let list = items("- block:\n    - debug:\n      listen: x\n", true).unwrap_or_default();
        assert_eq!(
            task_of(&block_of(&list[0]).block[0]).listen,
            vec!["x".to_owned()]
        );
    }

    #[test]
    fn empty_and_null_lists() {
        assert_eq!(items("", false), Ok(vec![]));
        assert_eq!(items("~\n", false), Ok(vec![]));
        assert_eq!(items("[]\n", false), Ok(vec![]));
    }

    #[test]
    fn errors_say_what_and_where() {
        assert_eq!(
            items("debug: msg=x\n", false),
            Err("ERROR! A malformed block was encountered while loading tasks: {'debug': 'msg=x'} should be a list or None but is a mapping (a list of tasks) in 'b.yml': line 1, column 1".to_owned())
        );
        assert_eq!(
            items("- debug: msg=x\n- just a string\n", false),
            Err("ERROR! a task in 'tasks' must be a mapping, got a string in 'b.yml': line 2, column 3".to_owned())
        );
        assert_eq!(
            items("- [a]\n", true),
            Err("ERROR! a handler in 'tasks' must be a mapping, got a list in 'b.yml': line 1, column 3".to_owned())
        );
        assert_eq!(
            items("- block:\n    - debug:\n  loop: [1]\n", false),
            Err(
                "ERROR! 'loop' is not a valid attribute for a Block in 'b.yml': line 3, column 3"
                    .to_owned()
            )
        );
        assert_eq!(
            items("- block:\n    - debug:\n  debug: msg=x\n", false),
            Err(
                "ERROR! 'debug' is not a valid attribute for a Block in 'b.yml': line 3, column 3"
                    .to_owned()
            )
        );
        assert_eq!(
            items("- block: nope\n", false),
            Err("ERROR! A malformed block was encountered while loading block: 'nope' should be a list or None but is a string (a list of tasks) in 'b.yml': line 1, column 10".to_owned())
        );
        assert_eq!(
            items("- block:\n    - name: nothing\n", false),
            Err("ERROR! no module/action detected in task in 'b.yml': line 2, column 7".to_owned())
        );
    }
}
