//! Builds the [`Node`] tree from saphyr-parser's events the way Ansible's YAML loader
//! builds its data: YAML 1.1 scalar types, anchors and aliases, `<<` merge keys, and a
//! warning (not an error) for a duplicated mapping key, the last value winning.
//!
//! Tags: core-schema tags (`!!str`, `!!int`…, `!!binary` as the text of its bytes,
//! `!!set` as the list of its keys, `!!omap`/`!!pairs` as a list of `[key, value]`
//! pairs, as Ansible stores them), the non-specific `!`, Ansible's `!unsafe` and
//! `!vault` are understood; any other tag is an error that says where.

use std::borrow::Cow;
use std::collections::HashMap;

use saphyr_parser::{Event, Marker, Parser, ScalarStyle, Tag};
use serde_json::Value;

use crate::yaml::error::PlaybookError;
use crate::yaml::node::{Node, Yaml};
use crate::yaml::reindent::reindent;
use crate::yaml::resolver;
use crate::yaml::source::{Mark, SourceFile};

/// Deepest nesting accepted, so that later recursive walks cannot exhaust the stack.
const MAX_DEPTH: usize = 256;
/// Most nodes that aliases may copy in, so that an alias bomb cannot exhaust memory.
const MAX_ALIAS_NODES: usize = 1_000_000;

/// A loaded YAML file: its single document (`None` when there is none) and the warnings
/// raised while loading it.
pub(crate) struct Document {
    /// The document's root node.
    pub(crate) root: Option<Node>,
    /// Duplicate keys and the like, each saying where.
    pub(crate) warnings: Vec<String>,
    /// With [`load_all`], the documents before the last one, in order.
    pub(crate) earlier: Vec<Option<Node>>,
}

/// Parses the text of `source` as one YAML document. Lines that only libyaml's leniency
/// about indentation in flow collections and quoted scalars makes readable are padded
/// (see [`reindent`]) and read again, positions still pointing into the original text.
pub(crate) fn load(source: &SourceFile) -> Result<Document, PlaybookError> {
    load_documents(source, false)
}

/// [`load`] for a text of any number of documents (`from_yaml_all`): the last one is
/// the document's `root`, those before it its `earlier`.
pub(crate) fn load_all(source: &SourceFile) -> Result<Document, PlaybookError> {
    load_documents(source, true)
}

fn load_documents(source: &SourceFile, multi: bool) -> Result<Document, PlaybookError> {
    match parse(source, source.text(), &[], multi) {
        Err(Failure::Syntax {
            error,
            indentation: true,
        }) => match reindent(source.text()) {
            Some(padded) => match parse(source, &padded.text, &padded.pads, multi) {
                Err(Failure::Syntax { .. }) => Err(error),
                result => result.map_err(Failure::into_error),
            },
            None => Err(error),
        },
        result => result.map_err(Failure::into_error),
    }
}

/// Why a text could not be loaded.
enum Failure {
    /// The parser refused it; `indentation` when for the indentation of a line.
    Syntax {
        error: PlaybookError,
        indentation: bool,
    },
    /// It parsed, but its content is wrong (a bad tag, a merge of a scalar…).
    Content(PlaybookError),
}

impl Failure {
    fn into_error(self) -> PlaybookError {
        match self {
            Failure::Syntax { error, .. } | Failure::Content(error) => error,
        }
    }
}

/// Parses `text`, the text of `source` with `pads[i]` blanks added before its line `i`
/// (from 0).
fn parse(
    source: &SourceFile,
    text: &str,
    pads: &[usize],
    multi: bool,
) -> Result<Document, Failure> {
    let mut builder = Builder {
        source,
        stack: Vec::new(),
        anchors: HashMap::new(),
        alias_nodes: 0,
        documents: 0,
        root: None,
        warnings: Vec::new(),
        earlier: multi.then(Vec::new),
    };
    let mark_of = |marker: &Marker| {
        let pad = pads.get(marker.line().saturating_sub(1)).copied();
        Mark {
            line: marker.line().max(1),
            column: marker.col().saturating_sub(pad.unwrap_or(0)) + 1,
        }
    };
    let mut parser = Parser::new_from_str(text);
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|error| Failure::Syntax {
            error: source.error(
                mark_of(error.marker()),
                format!("YAML syntax error: {}", error.info()),
            ),
            indentation: error.info().starts_with("invalid indentation"),
        })?;
        builder
            .event(event, mark_of(&span.start))
            .map_err(Failure::Content)?;
    }
    Ok(Document {
        root: builder.root,
        warnings: builder.warnings,
        earlier: builder.earlier.unwrap_or_default(),
    })
}

/// The text of a `!!binary` scalar's bytes (base64, line breaks and blanks ignored);
/// bytes that are not UTF-8 become U+FFFD, as Ansible shows them.
fn binary_text(text: &str) -> Result<String, String> {
    use base64::Engine;
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|e| format!("Failed to decode base64 data: {e}"))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// What a tag asks for.
enum TagKind {
    /// A core-schema tag, by suffix: `str`, `int`, `map`…
    Core(String),
    /// The non-specific tag `!`: a string (on a scalar).
    NonSpecific,
    /// Ansible's `!unsafe`.
    Unsafe,
    /// Ansible's `!vault`.
    Vault,
    /// Anything else, as written.
    Other(String),
}

impl TagKind {
    fn of(tag: &Tag) -> TagKind {
        let full = format!("{}{}", tag.handle, tag.suffix);
        if let Some(kind) = full.strip_prefix("tag:yaml.org,2002:") {
            return TagKind::Core(kind.to_owned());
        }
        match full.as_str() {
            "!" => TagKind::NonSpecific,
            "!unsafe" => TagKind::Unsafe,
            "!vault" => TagKind::Vault,
            _ => TagKind::Other(full),
        }
    }
}

/// The second half of a mapping entry being read: what its key was.
enum KeySlot {
    /// No key read yet.
    Empty,
    /// The key was a plain `<<`: the value is merged in.
    Merge,
    /// An ordinary key.
    Key(Node),
}

/// What a collection's tag makes of it.
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    /// Untagged, or tagged with its own kind (`!!seq`, `!!map`).
    Plain,
    /// `!unsafe`: every string in it is never templated.
    Unsafe,
    /// `!!set` on a mapping: the list of its keys.
    Set,
    /// `!!omap` or `!!pairs` on a sequence of one-entry mappings: `[key, value]` pairs.
    Pairs,
}

/// A collection being read.
enum Frame {
    Seq {
        items: Vec<Node>,
        mark: Mark,
        anchor: usize,
        shape: Shape,
    },
    Map {
        /// Entries written in this mapping, in order.
        explicit: Vec<(Node, Node)>,
        /// Entries brought in by merge keys, in the order in which later ones override.
        merged: Vec<(Node, Node)>,
        key: KeySlot,
        mark: Mark,
        anchor: usize,
        shape: Shape,
    },
}

/// A node with an anchor, ready to be copied by aliases.
struct Anchored {
    node: Node,
    count: usize,
    depth: usize,
}

/// Identity of a mapping key, as Python compares dict keys (`1`, `1.0` and `true` are
/// one key).
#[derive(Hash, PartialEq, Eq)]
enum KeyId {
    Null,
    Number(String),
    Text(String),
}

impl KeyId {
    fn of(key: &Node) -> KeyId {
        match &key.value {
            Yaml::Scalar(Value::Null) => KeyId::Null,
            Yaml::Scalar(Value::Bool(flag)) => KeyId::Number(u8::from(*flag).to_string()),
            Yaml::Scalar(Value::Number(number)) => KeyId::Number(match number.as_f64() {
                Some(float) if number.is_f64() && float.fract() == 0.0 && float.abs() < 1e15 => {
                    format!("{float:.0}")
                }
                _ => number.to_string(),
            }),
            _ => KeyId::Text(key.key_text()),
        }
    }
}

/// Turns the parser's events into nodes, one collection frame per open sequence or
/// mapping.
struct Builder<'s> {
    source: &'s SourceFile,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Anchored>,
    alias_nodes: usize,
    documents: usize,
    root: Option<Node>,
    warnings: Vec<String>,
    /// When several documents are allowed, the finished ones before the current.
    earlier: Option<Vec<Option<Node>>>,
}

impl Builder<'_> {
    fn event(&mut self, event: Event<'_>, mark: Mark) -> Result<(), PlaybookError> {
        match event {
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1
                    && let Some(earlier) = &mut self.earlier
                {
                    earlier.push(self.root.take());
                    // Anchors do not reach from one document into the next.
                    self.anchors.clear();
                    return Ok(());
                }
                if self.documents > 1 {
                    return Err(self.source.error(
                        mark,
                        "a playbook must be a single YAML document, but another document starts here",
                    ));
                }
                Ok(())
            }
            Event::Scalar(text, style, anchor, tag) => {
                if self.expects_key()
                    && style == ScalarStyle::Plain
                    && tag.is_none()
                    && text == "<<"
                {
                    if let Some(Frame::Map { key, .. }) = self.stack.last_mut() {
                        *key = KeySlot::Merge;
                    }
                    return Ok(());
                }
                let node = self.scalar(text, style, tag.as_deref(), mark)?;
                self.add(node, anchor)
            }
            Event::Alias(id) => {
                let Some(anchored) = self.anchors.get(&id) else {
                    return Err(self.source.error(
                        mark,
                        "this alias refers to a node that contains it (recursive YAML structures are not supported)",
                    ));
                };
                self.alias_nodes += anchored.count;
                if self.alias_nodes > MAX_ALIAS_NODES {
                    return Err(self.source.error(
                        mark,
                        format!("YAML aliases expand to more than {MAX_ALIAS_NODES} nodes"),
                    ));
                }
                if self.stack.len() + anchored.depth > MAX_DEPTH {
                    return Err(self.too_deep(mark));
                }
                let node = anchored.node.clone();
                self.add(node, 0)
            }
            Event::SequenceStart(anchor, tag) => {
                let shape = self.collection_tag(tag.as_deref(), "seq", "a list", mark)?;
                self.open(
                    Frame::Seq {
                        items: Vec::new(),
                        mark,
                        anchor,
                        shape,
                    },
                    mark,
                )
            }
            Event::MappingStart(anchor, tag) => {
                let shape = self.collection_tag(tag.as_deref(), "map", "a mapping", mark)?;
                self.open(
                    Frame::Map {
                        explicit: Vec::new(),
                        merged: Vec::new(),
                        key: KeySlot::Empty,
                        mark,
                        anchor,
                        shape,
                    },
                    mark,
                )
            }
            Event::SequenceEnd | Event::MappingEnd => match self.stack.pop() {
                Some(frame) => {
                    let (node, anchor) = self.close(frame)?;
                    self.add(node, anchor)
                }
                None => Ok(()),
            },
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => Ok(()),
        }
    }

    fn too_deep(&self, mark: Mark) -> PlaybookError {
        self.source.error(
            mark,
            format!("YAML nesting is deeper than {MAX_DEPTH} levels"),
        )
    }

    /// Whether the next node is the key of a mapping entry.
    fn expects_key(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Frame::Map {
                key: KeySlot::Empty,
                ..
            })
        )
    }

    fn open(&mut self, frame: Frame, mark: Mark) -> Result<(), PlaybookError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(self.too_deep(mark));
        }
        self.stack.push(frame);
        Ok(())
    }

    /// The typed scalar for one scalar event.
    fn scalar(
        &self,
        text: Cow<'_, str>,
        style: ScalarStyle,
        tag: Option<&Tag>,
        mark: Mark,
    ) -> Result<Node, PlaybookError> {
        let value = match tag.map(TagKind::of) {
            None if style == ScalarStyle::Plain => Yaml::Scalar(
                resolver::implicit(&text).map_err(|message| self.source.error(mark, message))?,
            ),
            None | Some(TagKind::NonSpecific) => Yaml::Scalar(Value::String(text.into_owned())),
            Some(TagKind::Core(kind)) if kind == "binary" => Yaml::Scalar(Value::String(
                binary_text(&text).map_err(|message| self.source.error(mark, message))?,
            )),
            Some(TagKind::Core(kind)) => Yaml::Scalar(
                resolver::explicit(&kind, &text)
                    .map_err(|message| self.source.error(mark, message))?,
            ),
            Some(TagKind::Unsafe) => Yaml::Unsafe(text.into_owned()),
            // As in ansible-core 2.19, a value no password opens fails where it is used,
            // not where it is read.
            Some(TagKind::Vault) => Yaml::Scalar(match crate::vault::decrypt_value(&text) {
                Ok(plain) => serde_json::Value::String(plain),
                Err(_) => serde_json::json!({ super::node::VAULT_KEY: text }),
            }),
            Some(TagKind::Other(name)) => {
                return Err(self
                    .source
                    .error(mark, format!("unknown YAML tag '{name}'")));
            }
        };
        Ok(Node { value, mark })
    }

    /// Checks the tag of a collection; returns what it makes of it.
    fn collection_tag(
        &self,
        tag: Option<&Tag>,
        core: &str,
        what: &str,
        mark: Mark,
    ) -> Result<Shape, PlaybookError> {
        match tag.map(TagKind::of) {
            None | Some(TagKind::NonSpecific) => Ok(Shape::Plain),
            Some(TagKind::Core(kind)) if kind == core => Ok(Shape::Plain),
            Some(TagKind::Core(kind)) if core == "map" && kind == "set" => Ok(Shape::Set),
            Some(TagKind::Core(kind)) if core == "seq" && (kind == "omap" || kind == "pairs") => {
                Ok(Shape::Pairs)
            }
            Some(TagKind::Unsafe) => Ok(Shape::Unsafe),
            Some(TagKind::Core(kind)) => Err(self.source.error(
                mark,
                format!("the YAML tag '!!{kind}' is not supported on {what}"),
            )),
            Some(TagKind::Vault) => Err(self.source.error(
                mark,
                "a !vault value must be the text of a vault, not a collection",
            )),
            Some(TagKind::Other(name)) => Err(self
                .source
                .error(mark, format!("unknown YAML tag '{name}'"))),
        }
    }

    /// Turns a finished collection into its node; returns it with its anchor id.
    fn close(&mut self, frame: Frame) -> Result<(Node, usize), PlaybookError> {
        let (node, anchor, shape) = match frame {
            Frame::Seq {
                items,
                mark,
                anchor,
                shape,
            } => {
                let items = if shape == Shape::Pairs {
                    items
                        .into_iter()
                        .map(|item| self.pair(item))
                        .collect::<Result<_, _>>()?
                } else {
                    items
                };
                (
                    Node {
                        value: Yaml::Seq(items),
                        mark,
                    },
                    anchor,
                    shape,
                )
            }
            Frame::Map {
                explicit,
                merged,
                mark,
                anchor,
                shape,
                ..
            } => {
                let node = self.mapping(explicit, merged, mark)?;
                let node = match node.value {
                    Yaml::Map(entries) if shape == Shape::Set => Node {
                        value: Yaml::Seq(entries.into_iter().map(|(key, _)| key).collect()),
                        mark,
                    },
                    _ => node,
                };
                (node, anchor, shape)
            }
        };
        let node = if shape == Shape::Unsafe {
            node.into_unsafe()
        } else {
            node
        };
        Ok((node, anchor))
    }

    /// One item of an `!!omap`/`!!pairs` sequence, a one-entry mapping, as `[key, value]`.
    fn pair(&self, item: Node) -> Result<Node, PlaybookError> {
        match item.value {
            Yaml::Map(mut entries) if entries.len() == 1 => {
                let (key, value) = entries.remove(0);
                Ok(Node {
                    value: Yaml::Seq(vec![key, value]),
                    mark: item.mark,
                })
            }
            Yaml::Map(entries) => Err(self.source.error(
                item.mark,
                format!(
                    "expected a single mapping item, but found {} items",
                    entries.len()
                ),
            )),
            _ => Err(self.source.error(
                item.mark,
                "expected a mapping of length 1 in an !!omap or !!pairs sequence",
            )),
        }
    }

    /// The mapping of merged-in entries overridden by explicit ones; a key written twice
    /// keeps its first place and its last value, with a warning (or as
    /// `ANSIBLE_DUPLICATE_YAML_DICT_KEY` says: `error`, `ignore`).
    fn mapping(
        &mut self,
        explicit: Vec<(Node, Node)>,
        merged: Vec<(Node, Node)>,
        mark: Mark,
    ) -> Result<Node, PlaybookError> {
        let mut entries: Vec<(Node, Node)> = Vec::with_capacity(merged.len() + explicit.len());
        let mut explicitly_set: Vec<bool> = Vec::with_capacity(entries.capacity());
        let mut index: HashMap<KeyId, usize> = HashMap::new();
        let tagged = merged
            .into_iter()
            .map(|entry| (entry, false))
            .chain(explicit.into_iter().map(|entry| (entry, true)));
        for ((key, value), is_explicit) in tagged {
            match index.get(&KeyId::of(&key)) {
                Some(&at) => {
                    if is_explicit && explicitly_set[at] {
                        self.duplicate(&key)?;
                    }
                    explicitly_set[at] |= is_explicit;
                    entries[at] = (key, value);
                }
                None => {
                    index.insert(KeyId::of(&key), entries.len());
                    entries.push((key, value));
                    explicitly_set.push(is_explicit);
                }
            }
        }
        Ok(Node {
            value: Yaml::Map(entries),
            mark,
        })
    }

    /// A key written twice in one mapping: a warning, an error or nothing, as
    /// `ANSIBLE_DUPLICATE_YAML_DICT_KEY` (ansible.cfg's `duplicate_dict_key`) says.
    fn duplicate(&mut self, key: &Node) -> Result<(), PlaybookError> {
        let found = format!("Found duplicate mapping key '{}'", key.key_text());
        match crate::config::settings()
            .get("ANSIBLE_DUPLICATE_YAML_DICT_KEY")
            .unwrap_or_default()
            .to_ascii_lowercase()
            .as_str()
        {
            "ignore" => Ok(()),
            "error" => Err(self
                .source
                .error(key.mark, format!("YAML parsing failed: {found}."))),
            _ => {
                self.warnings.push(format!(
                    "{found} {}. Using last defined value only.",
                    self.source.place(key.mark)
                ));
                Ok(())
            }
        }
    }

    /// Puts a finished node where it belongs: the document root, the end of a sequence, or
    /// a mapping entry's key or value.
    fn add(&mut self, node: Node, anchor: usize) -> Result<(), PlaybookError> {
        if anchor > 0 {
            self.anchors.insert(
                anchor,
                Anchored {
                    count: node.count(),
                    depth: node.depth(),
                    node: node.clone(),
                },
            );
        }
        let source = self.source;
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map {
                key,
                explicit,
                merged,
                ..
            }) => match std::mem::replace(key, KeySlot::Empty) {
                KeySlot::Empty if node.is_scalar() => *key = KeySlot::Key(node),
                KeySlot::Empty => {
                    return Err(source.error(
                        node.mark,
                        format!("found an unhashable mapping key ({})", node.describe()),
                    ));
                }
                KeySlot::Key(name) => explicit.push((name, node)),
                KeySlot::Merge => merged.extend(merge_entries(source, node)?),
            },
        }
        Ok(())
    }
}

/// The entries a `<<` value brings in: a mapping's, or those of a list of mappings where
/// the first mapping wins over later ones.
fn merge_entries(source: &SourceFile, value: Node) -> Result<Vec<(Node, Node)>, PlaybookError> {
    let wrong = |node: &Node| {
        source.error(
            node.mark,
            format!(
                "a merge key (<<) takes a mapping or a list of mappings, got {}",
                node.describe()
            ),
        )
    };
    match value.value {
        Yaml::Map(entries) => Ok(entries),
        Yaml::Seq(items) => {
            let mut entries = Vec::new();
            for item in items.into_iter().rev() {
                match item.value {
                    Yaml::Map(more) => entries.extend(more),
                    _ => return Err(wrong(&item)),
                }
            }
            Ok(entries)
        }
        _ => Err(wrong(&value)),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;

    fn parse(text: &str) -> Result<Document, PlaybookError> {
        load(&SourceFile::new(Path::new("t.yml"), text))
    }

    fn json_of(text: &str) -> Value {
        match parse(text) {
            Ok(document) => document.root.map_or(Value::Null, |root| root.to_json()),
            Err(error) => panic!("{error}"),
        }
    }

    fn error_of(text: &str) -> String {
        match parse(text) {
            Ok(_) => panic!("expected an error for {text:?}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn types_scalars_like_ansible() {
        let value = json_of(
            "a: yes\nb: 'yes'\nc: 0755\nd: \"0755\"\ne: 0o755\nf: 1e3\ng: 1.5\nh: ~\ni:\nj: !!str 12\nk: !!int \"12\"\nl: ! 12\nm: |\n  text\n",
        );
        assert_eq!(
            value,
            json!({"a": true, "b": "yes", "c": 493, "d": "0755", "e": "0o755", "f": "1e3",
                   "g": 1.5, "h": null, "i": null, "j": "12", "k": 12, "l": "12", "m": "text\n"})
        );
    }

    #[test]
    fn keeps_marks_on_keys_and_values() {
        let document = parse("- hosts: all\n  tasks:\n    - debug: msg=hi\n").ok();
        let root = document.and_then(|document| document.root);
        let Some(play) = root
            .as_ref()
            .and_then(Node::as_seq)
            .and_then(|plays| plays.first())
        else {
            panic!("no play");
        };
        assert_eq!(play.mark, Mark { line: 1, column: 3 });
        let Some(entries) = play.as_map() else {
            panic!("play is not a mapping")
        };
        assert_eq!(entries[1].0.mark, Mark { line: 2, column: 3 });
        let task = &entries[1]
            .1
            .as_seq()
            .map(<[Node]>::to_vec)
            .unwrap_or_default()[0];
        assert_eq!(task.mark, Mark { line: 3, column: 7 });
        let Some(task_entries) = task.as_map() else {
            panic!("task is not a mapping")
        };
        assert_eq!(
            task_entries[0].1.mark,
            Mark {
                line: 3,
                column: 14
            }
        );
    }

    #[test]
    fn duplicate_keys_warn_and_keep_the_last_value_in_the_first_place() {
        let Ok(document) = parse("a: 1\nb: 2\na: 3\n") else {
            panic!("should load")
        };
        assert_eq!(
            document.root.map(|root| root.to_json()),
            Some(json!({"a": 3, "b": 2}))
        );
        assert_eq!(
            document.warnings,
            vec![
                "Found duplicate mapping key 'a' in 't.yml': line 3, column 1. Using last defined value only."
            ]
        );
    }

    #[test]
    fn numeric_keys_compare_like_python() {
        let Ok(document) = parse("1: a\n1.0: b\n").map(|d| d.warnings) else {
            panic!("should load")
        };
        assert_eq!(document.len(), 1);
    }

    #[test]
    fn anchors_aliases_and_merge_keys() {
        let value = json_of(
            "base: &base {a: 1, b: 2}\nother: &other {b: 20, c: 30}\nuse: *base\nmerged:\n  <<: *base\n  b: 3\nmany:\n  <<: [*base, *other]\n  d: 4\nquoted:\n  '<<': x\n",
        );
        assert_eq!(value["use"], json!({"a": 1, "b": 2}));
        assert_eq!(value["merged"], json!({"a": 1, "b": 3}));
        assert_eq!(value["many"]["b"], json!(2));
        assert_eq!(value["many"]["c"], json!(30));
        assert_eq!(value["many"]["d"], json!(4));
        assert_eq!(value["quoted"], json!({"<<": "x"}));
    }

    #[test]
    fn overriding_a_merged_key_does_not_warn() {
        let Ok(document) = parse("a: &a {x: 1}\nb:\n  <<: *a\n  x: 2\n") else {
            panic!("should load")
        };
        assert!(document.warnings.is_empty());
    }

    #[test]
    fn vault_values_no_password_opens_are_kept_marked() {
        assert_eq!(
            json_of("a: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6162\n"),
            json!({"a": {"__ansible_vault": "$ANSIBLE_VAULT;1.1;AES256\n6162\n"}})
        );
    }

    #[test]
    fn unsafe_tag_wraps_strings() {
        assert_eq!(
            json_of("a: !unsafe '{{ x }}'\nb: !unsafe [ '{{ y }}', 1 ]\n"),
            json!({"a": {"__ansible_unsafe": "{{ x }}"}, "b": [{"__ansible_unsafe": "{{ y }}"}, 1]})
        );
    }

    #[test]
    fn binary_set_and_pair_tags_load_as_ansible_stores_them() {
        assert_eq!(
            json_of(
                "b: !!binary aGVsbG8=\nm: !!binary |\n  aGVs\n  bG8=\ns: !!set {x, y}\no: !!omap [a: 1, b: 2]\np: !!pairs\n  - a: 1\n  - a: [2]\n"
            ),
            json!({
                "b": "hello",
                "m": "hello",
                "s": ["x", "y"],
                "o": [["a", 1], ["b", 2]],
                "p": [["a", 1], ["a", [2]]],
            })
        );
    }

    #[test]
    fn empty_text_has_no_document() {
        assert!(
            parse("# only a comment\n")
                .ok()
                .and_then(|d| d.root)
                .is_none()
        );
        assert_eq!(json_of("---\n"), Value::Null);
    }

    #[test]
    fn syntax_errors_say_where() {
        assert_eq!(
            error_of("a: 1\n  b: 2\n"),
            "ERROR! YAML syntax error: mapping values are not allowed in this context in 't.yml': line 2, column 4\nOrigin: t.yml:2:4\n\na: 1\n  b: 2\n   ^ here"
        );
    }

    #[test]
    fn reads_flow_lines_and_quoted_continuations_libyaml_reads() {
        assert_eq!(
            json_of("a: {\n\"x\": [1,\n2\n]\n}\nb: \"one\ntwo\"\n"),
            json!({"a": {"x": [1, 2]}, "b": "one two"})
        );
        // Positions still point into the original text.
        assert!(
            error_of("a: {\n\"x\": !custom 1\n}\n")
                .starts_with("ERROR! unknown YAML tag '!custom' in 't.yml': line 2, column 14")
        );
        // A text the padding does not save keeps its own error.
        assert!(
            error_of("a: [\n1,\n b: c\n")
                .starts_with("ERROR! YAML syntax error: invalid indentation in 't.yml': line 2")
        );
    }

    #[test]
    fn tag_errors_say_where() {
        assert!(
            error_of("a: !custom x\n")
                .starts_with("ERROR! unknown YAML tag '!custom' in 't.yml': line 1, column 12")
        );
        assert!(
            error_of("a: !!int ten\n")
                .starts_with("ERROR! 'ten' is not an integer in 't.yml': line 1, column 10")
        );
        assert!(error_of("a: !!set [x]\n").starts_with(
            "ERROR! the YAML tag '!!set' is not supported on a list in 't.yml': line 1, column 10"
        ));
        assert!(error_of("a: !!binary 'a'\n").starts_with("ERROR! Failed to decode base64 data: "));
        assert!(error_of("a: !!omap [{x: 1, y: 2}]\n").starts_with(
            "ERROR! expected a single mapping item, but found 2 items in 't.yml': line 1, column 12"
        ));
        assert!(error_of("a: !vault [x]\n").starts_with("ERROR! a !vault value must be"));
    }

    #[test]
    fn several_documents_are_an_error() {
        assert!(error_of("- a\n---\n- b\n").starts_with(
            "ERROR! a playbook must be a single YAML document, but another document starts here in 't.yml': line 2, column 1"
        ));
    }

    #[test]
    fn bad_merge_values_and_keys() {
        assert!(error_of("a:\n  <<: 1\n").starts_with(
            "ERROR! a merge key (<<) takes a mapping or a list of mappings, got an integer in 't.yml': line 2, column 7"
        ));
        assert!(error_of("a:\n  <<: [1]\n").contains("line 2, column 8"));
        assert!(error_of("? [a]\n: 1\n").starts_with(
            "ERROR! found an unhashable mapping key (a list) in 't.yml': line 1, column 3"
        ));
    }

    #[test]
    fn recursive_aliases_and_unknown_anchors_are_errors() {
        assert!(error_of("a: &x [*x]\n").contains("recursive YAML structures are not supported"));
        assert!(error_of("a: *nope\n").starts_with("ERROR! YAML syntax error:"));
    }

    #[test]
    fn alias_bombs_and_deep_nesting_are_stopped() {
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..8 {
            let previous = level - 1;
            bomb.push_str(&format!(
                "a{level}: &a{level} [*a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}]\n"
            ));
        }
        assert!(error_of(&bomb).contains("YAML aliases expand to more than 1000000 nodes"));
        let deep = format!("{}x\n", "- ".repeat(300));
        assert!(error_of(&deep).contains("nesting is deeper than 256 levels"));
    }
}
