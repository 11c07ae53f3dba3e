//! A task's loop: which keyword gave it (`loop:` or a `with_<lookup>:`), and its
//! `loop_control` settings.

use serde_json::Value;

use crate::playbook::attribute::Fields;
use crate::yaml::error::PlaybookError;

/// The keyword a task's loop was written with. `loop:` takes the list as it is;
/// `with_<lookup>:` runs the lookup plugin of that name (so `with_items` flattens one
/// level, `with_dict` yields key/value pairs…).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum LoopKind {
    /// `loop:`.
    #[default]
    Loop,
    /// `with_items:`.
    WithItems,
    /// `with_list:`.
    WithList,
    /// `with_dict:`.
    WithDict,
    /// `with_indexed_items:`.
    WithIndexedItems,
    /// `with_sequence:`.
    WithSequence,
    /// `with_nested:`.
    WithNested,
    /// `with_together:`.
    WithTogether,
    /// `with_subelements:`.
    WithSubelements,
    /// `with_<lookup>:` for any other lookup plugin (`with_fileglob`, `with_lines`…),
    /// holding the lookup's name.
    WithLookup(String),
}

impl LoopKind {
    /// The kind for a task keyword: `loop` or `with_<lookup>`.
    pub(crate) fn from_keyword(keyword: &str) -> Option<LoopKind> {
        if keyword == "loop" {
            return Some(LoopKind::Loop);
        }
        let kind = match keyword.strip_prefix("with_")? {
            "" => return None,
            "items" => LoopKind::WithItems,
            "list" => LoopKind::WithList,
            "dict" => LoopKind::WithDict,
            "indexed_items" => LoopKind::WithIndexedItems,
            "sequence" => LoopKind::WithSequence,
            "nested" => LoopKind::WithNested,
            "together" => LoopKind::WithTogether,
            "subelements" => LoopKind::WithSubelements,
            other => LoopKind::WithLookup(other.to_owned()),
        };
        Some(kind)
    }

    /// The lookup plugin a `with_<lookup>` loop runs; `None` for `loop:`.
    pub fn lookup(&self) -> Option<&str> {
        Some(match self {
            LoopKind::Loop => return None,
            LoopKind::WithItems => "items",
            LoopKind::WithList => "list",
            LoopKind::WithDict => "dict",
            LoopKind::WithIndexedItems => "indexed_items",
            LoopKind::WithSequence => "sequence",
            LoopKind::WithNested => "nested",
            LoopKind::WithTogether => "together",
            LoopKind::WithSubelements => "subelements",
            LoopKind::WithLookup(name) => name,
        })
    }
}

/// A task's `loop_control`.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopControl {
    /// The variable each item is bound to (`item` unless set).
    pub loop_var: String,
    /// The variable the item's index is bound to, if any.
    pub index_var: Option<String>,
    /// What to show for each item instead of the whole item (templated per item).
    pub label: Option<Value>,
    /// Seconds to wait between items.
    pub pause: Option<Value>,
    /// Whether `ansible_loop` is set.
    pub extended: Option<Value>,
    /// Whether `ansible_loop.allitems` is set when `extended` is.
    pub extended_allitems: Option<Value>,
    /// Conditionals that stop the loop after an item.
    pub break_when: Vec<Value>,
}

impl Default for LoopControl {
    fn default() -> Self {
        LoopControl {
            loop_var: "item".to_owned(),
            index_var: None,
            label: None,
            pause: None,
            extended: None,
            extended_allitems: None,
            break_when: Vec::new(),
        }
    }
}

const LOOP_CONTROL_KEYWORDS: &[&str] = &[
    "loop_var",
    "index_var",
    "label",
    "pause",
    "extended",
    "extended_allitems",
    "break_when",
];

/// The task's loop, if any: its (raw) value and the keyword it came from. Two loop
/// keywords on one task, or a `with_<lookup>` without a value, are errors.
pub(crate) fn task_loop(task: &Fields<'_>) -> Result<Option<(Value, LoopKind)>, PlaybookError> {
    let mut found: Option<(Value, LoopKind)> = None;
    for entry in task.entries() {
        let Some(kind) = LoopKind::from_keyword(entry.name) else {
            continue;
        };
        let name = kind.lookup().unwrap_or("loop").to_owned();
        if found.is_some() {
            return Err(task.error_at(entry.key.mark, format!("duplicate loop in task: {name}")));
        }
        if entry.value.is_null() {
            if kind == LoopKind::Loop {
                continue;
            }
            return Err(task.error_at(
                entry.key.mark,
                format!("you must specify a value when using {}", entry.name),
            ));
        }
        found = Some((entry.value.to_json(), kind));
    }
    Ok(found)
}

/// The task's `loop_control`, if set.
pub(crate) fn loop_control(task: &Fields<'_>) -> Result<Option<LoopControl>, PlaybookError> {
    let Some(node) = task.node("loop_control").filter(|node| !node.is_null()) else {
        return Ok(None);
    };
    let fields = Fields::new(task.source(), node, "LoopControl")?;
    fields.reject_unknown(|name| LOOP_CONTROL_KEYWORDS.contains(&name))?;
    Ok(Some(LoopControl {
        loop_var: fields
            .string("loop_var")?
            .unwrap_or_else(|| "item".to_owned()),
        index_var: fields.string("index_var")?,
        label: fields.value("label"),
        pause: fields.value("pause"),
        extended: fields.value("extended"),
        extended_allitems: fields.value("extended_allitems"),
        break_when: fields.conditionals("break_when")?,
    }))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::yaml;
    use crate::yaml::source::SourceFile;

    fn on_task<T>(text: &str, check: impl FnOnce(&Fields<'_>) -> T) -> T {
        let source = SourceFile::new(Path::new("l.yml"), text);
        let Ok(yaml::Document {
            root: Some(root), ..
        }) = yaml::load(&source)
        else {
            panic!("bad test YAML")
        };
        match Fields::new(&source, &root, "Task") {
            Ok(fields) => check(&fields),
            Err(error) => panic!("{error}"),
        }
    }

    fn first_line(error: PlaybookError) -> String {
        error
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned()
    }

    #[test]
    fn kinds_from_keywords() {
        assert_eq!(LoopKind::from_keyword("loop"), Some(LoopKind::Loop));
        assert_eq!(
            LoopKind::from_keyword("with_items"),
            Some(LoopKind::WithItems)
        );
        assert_eq!(
            LoopKind::from_keyword("with_list"),
            Some(LoopKind::WithList)
        );
        assert_eq!(
            LoopKind::from_keyword("with_dict"),
            Some(LoopKind::WithDict)
        );
        assert_eq!(
            LoopKind::from_keyword("with_indexed_items"),
            Some(LoopKind::WithIndexedItems)
        );
        assert_eq!(
            LoopKind::from_keyword("with_sequence"),
            Some(LoopKind::WithSequence)
        );
        assert_eq!(
            LoopKind::from_keyword("with_nested"),
            Some(LoopKind::WithNested)
        );
        assert_eq!(
            LoopKind::from_keyword("with_together"),
            Some(LoopKind::WithTogether)
        );
        assert_eq!(
            LoopKind::from_keyword("with_subelements"),
            Some(LoopKind::WithSubelements)
        );
        assert_eq!(
            LoopKind::from_keyword("with_fileglob"),
            Some(LoopKind::WithLookup("fileglob".to_owned()))
        );
        assert_eq!(LoopKind::from_keyword("with_"), None);
        assert_eq!(LoopKind::from_keyword("name"), None);
        assert_eq!(
            LoopKind::WithLookup("lines".to_owned()).lookup(),
            Some("lines")
        );
        assert_eq!(LoopKind::WithItems.lookup(), Some("items"));
        assert_eq!(LoopKind::Loop.lookup(), None);
    }

    #[test]
    fn finds_the_loop() {
        on_task("debug: var=item\nwith_items: [1, [2]]\n", |task| {
            assert_eq!(
                task_loop(task).ok(),
                Some(Some((json!([1, [2]]), LoopKind::WithItems)))
            );
        });
        on_task("debug: var=item\nloop: \"{{ xs }}\"\n", |task| {
            assert_eq!(
                task_loop(task).ok(),
                Some(Some((json!("{{ xs }}"), LoopKind::Loop)))
            );
        });
        on_task("debug: var=item\nloop:\n", |task| {
            assert_eq!(task_loop(task).ok(), Some(None));
        });
        on_task("debug: var=item\n", |task| {
            assert_eq!(task_loop(task).ok(), Some(None));
        });
    }

    #[test]
    fn two_loops_or_an_empty_with_are_errors() {
        on_task("debug: var=item\nloop: [1]\nwith_items: [2]\n", |task| {
            assert_eq!(
                task_loop(task).err().map(first_line).as_deref(),
                Some("ERROR! duplicate loop in task: items in 'l.yml': line 3, column 1")
            );
        });
        on_task("debug: var=item\nwith_dict:\n", |task| {
            assert_eq!(
                task_loop(task).err().map(first_line).as_deref(),
                Some(
                    "ERROR! you must specify a value when using with_dict in 'l.yml': line 2, column 1"
                )
            );
        });
    }

    #[test]
    fn loop_control_defaults_and_keys() {
        on_task(
            "loop_control:\n  index_var: i\n  label: \"{{ item.name }}\"\n  pause: 2\n  extended: true\n  break_when: done\n",
            |task| {
                let control = loop_control(task).ok().flatten().unwrap_or_default();
                assert_eq!(control.loop_var, "item");
                assert_eq!(control.index_var.as_deref(), Some("i"));
                assert_eq!(control.label, Some(json!("{{ item.name }}")));
                assert_eq!(control.pause, Some(json!(2)));
                assert_eq!(control.extended, Some(json!(true)));
                assert_eq!(control.break_when, vec![json!("done")]);
            },
        );
        on_task("loop_control: {loop_var: outer}\n", |task| {
            let control = loop_control(task).ok().flatten().unwrap_or_default();
            assert_eq!(control.loop_var, "outer");
        });
        on_task("name: x\n", |task| {
            assert_eq!(loop_control(task).ok(), Some(None));
        });
        assert_eq!(LoopControl::default().loop_var, "item");
    }

    #[test]
    fn loop_control_errors() {
        on_task("loop_control: {loop_vars: x}\n", |task| {
            assert_eq!(
                loop_control(task).err().map(first_line).as_deref(),
                Some(
                    "ERROR! 'loop_vars' is not a valid attribute for a LoopControl in 'l.yml': line 1, column 16"
                )
            );
        });
        on_task("loop_control: item\n", |task| {
            assert_eq!(
                loop_control(task).err().map(first_line).as_deref(),
                Some(
                    "ERROR! a LoopControl must be a mapping, got a string in 'l.yml': line 1, column 15"
                )
            );
        });
    }
}
