//! Where a task's value is written, found again in the task's file when a failure
//! names it: ansible-core 2.19 shows, below a failed task's own `Origin:`, the origin of
//! the value the failure came from (an argument, a conditional, the loop) and, when
//! the template that failed sits deeper inside that value, the origin of that template
//! too. sandball keeps positions per task, not per value: the file is read again, only
//! when such a failure is shown.

use crate::yaml::location::Location;
use crate::yaml::source::SourceFile;
use crate::yaml::{self, Node, Yaml};

/// One of a task's values, as the task writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written<'a> {
    /// The action's name (`debug` of `debug: {msg: …}`).
    Action,
    /// The value of one of the task's keywords (`loop`, `with_items`…).
    Keyword(&'a str),
    /// The value of one of the action's arguments (`msg` of `debug: {msg: …}`, the
    /// `key=value` text holding it, or the free-form text for `_raw_params`).
    Arg(&'a str),
    /// A text (a conditional, a template): the first string with these words (spaces
    /// around them aside) in the task, else in its file (a block's or a play's
    /// `when`, a play's variable).
    Text(&'a str),
    /// A part of a text of the task's (a lookup's term in a template): the first
    /// string of the task's that is these words, else that holds them among others.
    Part(&'a str),
}

/// Where the task at `task` writes each of `values`, in their order: `None` for one
/// the task's file does not hold (any more).
pub fn find(task: &Location, values: &[Written<'_>]) -> Vec<Option<Location>> {
    let source = crate::yaml::read_file(&task.file)
        .ok()
        .map(|text| SourceFile::new(&task.file, &text));
    let root = source
        .as_ref()
        .and_then(|s| yaml::load(s).ok())
        .and_then(|d| d.root);
    let (Some(source), Some(root)) = (source, root) else {
        return vec![None; values.len()];
    };
    let node = task_node(&root, task);
    values
        .iter()
        .map(|written| {
            let found = match *written {
                Written::Action => node.and_then(action).map(|(key, _)| key),
                Written::Keyword(key) => node.and_then(|n| entry(n, key)),
                Written::Arg(key) => node.and_then(|n| argument(n, key)),
                Written::Text(words) => node
                    .and_then(|n| string(n, words.trim()))
                    .or_else(|| string(&root, words.trim())),
                Written::Part(words) => {
                    node.and_then(|n| string(n, words.trim()).or_else(|| holding(n, words)))
                }
            };
            found.map(|n| source.location(n.mark))
        })
        .collect()
}

/// The mapping that starts where the task does.
fn task_node<'a>(node: &'a Node, task: &Location) -> Option<&'a Node> {
    if node.as_map().is_some() && node.mark.line == task.line && node.mark.column == task.column {
        return Some(node);
    }
    children(node).find_map(|child| task_node(child, task))
}

/// The nodes directly inside `node` (a mapping's values).
fn children(node: &Node) -> Box<dyn Iterator<Item = &Node> + '_> {
    match &node.value {
        Yaml::Seq(items) => Box::new(items.iter()),
        Yaml::Map(entries) => Box::new(entries.iter().map(|(_, v)| v)),
        Yaml::Scalar(_) | Yaml::Unsafe(_) => Box::new(std::iter::empty()),
    }
}

/// The value of `key` in mapping `node`.
fn entry<'a>(node: &'a Node, key: &str) -> Option<&'a Node> {
    node.as_map()?
        .iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

/// The entry of the task's action: its name and its arguments (`action:` and
/// `local_action:` hold both).
fn action(task: &Node) -> Option<(&Node, &Node)> {
    task.as_map()?
        .iter()
        .find(|(k, _)| {
            k.as_str().is_some_and(|k| {
                matches!(k, "action" | "local_action")
                    || !crate::playbook::keywords::is_task_keyword(k)
            })
        })
        .map(|(k, v)| (k, v))
}

/// Where the task gives the action's argument `key`: in the action's mapping or in
/// `args:`, else in the action's `key=value` text (the whole text for `_raw_params`).
fn argument<'a>(task: &'a Node, key: &str) -> Option<&'a Node> {
    let (_, args) = action(task)?;
    let kv = format!("{key}=");
    entry(args, key)
        .or_else(|| entry(entry(task, "args")?, key))
        .or_else(|| {
            let text = args.as_str()?;
            (key == "_raw_params" || text.starts_with(&kv) || text.contains(&format!(" {kv}")))
                .then_some(args)
        })
}

/// The first string in `node` (itself included) that holds `words` among others.
fn holding<'a>(node: &'a Node, words: &str) -> Option<&'a Node> {
    match node.as_str() {
        Some(s) if !words.is_empty() && s.contains(words) => Some(node),
        _ => children(node).find_map(|child| holding(child, words)),
    }
}

/// The first string in `node` (itself included) that is `words`, spaces around it
/// aside.
fn string<'a>(node: &'a Node, words: &str) -> Option<&'a Node> {
    match node.as_str() {
        Some(s) if s.trim() == words => Some(node),
        _ => children(node).find_map(|child| string(child, words)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: &std::path::Path, line: usize, column: usize) -> Location {
        Location {
            file: file.to_path_buf(),
            line,
            column,
        }
    }

    #[test]
    fn values_are_found_where_the_task_writes_them() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("play.yml");
        std::fs::write(
            &file,
            r#"- hosts: all
  vars:
    middle: '{{ not_defined }}'
  tasks:
    - block:
        - name: first
          debug:
            msg:
              deep: ["{{ nope }}"]
          loop: "{{ items }}"
        - debug: msg="{{ x }}" other=1
        - command: echo {{ x }}
          args: {chdir: /tmp}
      when: "  flag  "
"#,
        )
        .unwrap();
        let first = at(&file, 6, 11);
        assert_eq!(
            find(
                &first,
                &[
                    Written::Action,
                    Written::Arg("msg"),
                    Written::Text("{{ nope }}"),
                    Written::Keyword("loop"),
                    // A block's conditional, a play's variable.
                    Written::Text("flag"),
                    Written::Text("{{ not_defined }}"),
                    // What the task does not write.
                    Written::Keyword("until"),
                    Written::Arg("var"),
                ]
            ),
            vec![
                Some(at(&file, 7, 11)),
                Some(at(&file, 9, 15)),
                Some(at(&file, 9, 22)),
                Some(at(&file, 10, 17)),
                Some(at(&file, 14, 13)),
                Some(at(&file, 3, 13)),
                None,
                None
            ]
        );
        assert_eq!(
            find(
                &at(&file, 11, 11),
                &[Written::Arg("msg"), Written::Arg("other")]
            ),
            vec![Some(at(&file, 11, 18)), Some(at(&file, 11, 18))]
        );
        assert_eq!(
            find(
                &at(&file, 12, 11),
                &[Written::Arg("_raw_params"), Written::Arg("chdir")]
            ),
            vec![Some(at(&file, 12, 20)), Some(at(&file, 13, 25))]
        );
        // No task starts there.
        assert_eq!(find(&at(&file, 1, 1), &[Written::Action]), vec![None]);
    }
}
