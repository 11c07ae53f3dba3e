//! The `ini` plugin: INI inventories. Lines before any section are hosts in `ungrouped`;
//! `[g]` (or `[g:hosts]`) lists hosts of `g` with inline `key=value` variables, `[g:vars]`
//! sets group variables, `[g:children]` names child groups. A child group must be declared
//! by a section somewhere in the file, and a `:vars` section needs its group declared too.
//! Values are typed as Python literals (`ast.literal_eval`), in `:vars` sections as well.
//! Any readable file but a `.toml` one is taken, so INI is the last resort for `.yml`,
//! `.cfg`, `.txt` and other names that other plugins did not parse.

use super::data::InventoryData;
use super::error::InventoryError;
use super::plugin::{
    InventoryPlugin, ParseContext, populate_host_vars, read_source, readable_file,
};
use super::range::expand_hostpattern;
use indexmap::IndexMap;
use regex::Regex;
use sandball_pycompat::literal::literal_eval;
use sandball_pycompat::shlex;
use serde_json::{Map, Value};
use std::path::Path;
use std::sync::LazyLock;

/// INI inventory files.
pub struct IniPlugin;

static SECTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:#.*)?$").expect("static regex"));
static GROUP_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([^:\]\s]+)\s*(?:#.*)?$").expect("static regex"));

impl InventoryPlugin for IniPlugin {
    fn name(&self) -> &'static str {
        "ini"
    }

    /// Any readable file but a `.toml` one (which the TOML plugin owns): INI is the last
    /// resort for files with any other name, as in Ansible.
    fn verify_file(&self, source: &str) -> bool {
        readable_file(source) && Path::new(source).extension().is_none_or(|e| e != "toml")
    }

    fn parse(
        &self,
        source: &str,
        data: &mut InventoryData,
        _: &ParseContext,
    ) -> Result<(), InventoryError> {
        let bytes = read_source(source)?;
        let lines = decode_lines(&bytes)
            .map_err(|(line, e)| InventoryError::parse(source, Some(line), e))?;
        IniParser {
            data,
            path: source,
            line: 0,
            pending: IndexMap::new(),
        }
        .parse(&lines)
    }
}

/// The file's lines split as Python's `str.splitlines` does. A file that is not UTF-8 is
/// still read when only comment lines have other bytes.
fn decode_lines(bytes: &[u8]) -> Result<Vec<String>, (usize, String)> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok(sandball_pycompat::pyops::splitlines(text)
            .into_iter()
            .map(str::to_string)
            .collect());
    }
    let mut lines = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let end = rest
            .iter()
            .position(|b| *b == b'\n' || *b == b'\r')
            .unwrap_or(rest.len());
        let line = &rest[..end];
        let skip = match (rest.get(end), rest.get(end + 1)) {
            (Some(b'\r'), Some(b'\n')) => 2,
            (Some(_), _) => 1,
            (None, _) => 0,
        };
        rest = &rest[(end + skip).min(rest.len())..];
        if line.first().is_some_and(|b| *b == b'#' || *b == b';') {
            lines.push(String::new());
        } else {
            let text = std::str::from_utf8(line)
                .map_err(|e| (lines.len() + 1, format!("not valid UTF-8: {e}")))?;
            lines.push(text.to_string());
        }
    }
    Ok(lines)
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    Hosts,
    Vars,
    Children,
}

/// A group referenced before it was declared.
struct Pending {
    line: usize,
    state: State,
    parents: Vec<String>,
}

struct IniParser<'a> {
    data: &'a mut InventoryData,
    path: &'a str,
    line: usize,
    pending: IndexMap<String, Pending>,
}

impl IniParser<'_> {
    fn error(&self, message: impl Into<String>) -> InventoryError {
        InventoryError::parse(self.path, Some(self.line), message)
    }

    fn parse(mut self, lines: &[String]) -> Result<(), InventoryError> {
        let mut group = "ungrouped".to_string();
        let mut state = State::Hosts;
        for (i, raw) in lines.iter().enumerate() {
            self.line = i + 1;
            let line = raw.trim();
            if line.is_empty() || line.starts_with(['#', ';']) {
                continue;
            }
            if let Some(m) = SECTION.captures(line) {
                group = m[1].to_string();
                let tag = m.get(2).map(|t| t.as_str());
                state = match tag.unwrap_or("hosts") {
                    "hosts" => State::Hosts,
                    "vars" => State::Vars,
                    "children" => State::Children,
                    other => {
                        return Err(self.error(format!(
                            "Section [{group}:{other}] has unknown type: {other}"
                        )));
                    }
                };
                self.section(&group, state)?;
                continue;
            }
            if line.starts_with('[') && line.ends_with(']') {
                return Err(self.error(format!(
                    "Invalid section entry: '{line}'. Please make sure that there are no spaces in the section \
                     entry, and that there are no other invalid characters"
                )));
            }
            match state {
                State::Hosts => self.host_line(&group, line)?,
                State::Vars => {
                    let Some((k, v)) = line.split_once('=') else {
                        return Err(self.error(format!("Expected key=value, got: {line}")));
                    };
                    let value = self.value(v.trim())?;
                    self.data
                        .set_variable(&group, k.trim(), value)
                        .map_err(|e| self.error(e.0))?;
                }
                State::Children => {
                    let Some(m) = GROUP_NAME.captures(line) else {
                        return Err(self.error(format!("Expected group name, got: {line}")));
                    };
                    let child = m[1].to_string();
                    if self.data.group_index(&child).is_some() {
                        self.data
                            .add_child(&group, &child)
                            .map_err(|e| self.error(e.0))?;
                    } else {
                        let line = self.line;
                        self.pending
                            .entry(child)
                            .or_insert(Pending {
                                line,
                                state: State::Children,
                                parents: Vec::new(),
                            })
                            .parents
                            .push(group.clone());
                    }
                }
            }
        }
        if let Some((name, decl)) = self.pending.first() {
            self.line = decl.line;
            let message = match decl.state {
                State::Vars => {
                    format!("Section [{name}:vars] not valid for undefined group '{name}'.")
                }
                _ => {
                    let parent = decl.parents.last().map(String::as_str).unwrap_or_default();
                    format!("Section [{parent}:children] includes undefined group '{name}'.")
                }
            };
            return Err(self.error(message));
        }
        Ok(())
    }

    /// A `[group(:kind)]` header: declares the group, settling references waiting for it.
    fn section(&mut self, group: &str, state: State) -> Result<(), InventoryError> {
        if self.data.group_index(group).is_none() {
            if state == State::Vars && !self.pending.contains_key(group) {
                let line = self.line;
                self.pending.insert(
                    group.to_string(),
                    Pending {
                        line,
                        state,
                        parents: Vec::new(),
                    },
                );
            }
            self.data.add_group(group).map_err(|e| self.error(e.0))?;
        }
        if state != State::Vars {
            match self.pending.get(group).map(|p| p.state) {
                Some(State::Children) => self.add_pending_children(group)?,
                Some(_) => {
                    self.pending.shift_remove(group);
                }
                None => {}
            }
        }
        Ok(())
    }

    /// Makes `group` a child of the groups that named it before it was declared, and
    /// settles those parents in turn when they were waiting too.
    fn add_pending_children(&mut self, group: &str) -> Result<(), InventoryError> {
        let mut queue = vec![group.to_string()];
        while let Some(child) = queue.pop() {
            let Some(decl) = self.pending.shift_remove(&child) else {
                continue;
            };
            for parent in decl.parents {
                self.data
                    .add_child(&parent, &child)
                    .map_err(|e| self.error(e.0))?;
                if self
                    .pending
                    .get(&parent)
                    .is_some_and(|p| p.state == State::Children)
                {
                    queue.push(parent);
                }
            }
        }
        Ok(())
    }

    /// A host line: a host pattern, then `key=value` variables.
    fn host_line(&mut self, group: &str, line: &str) -> Result<(), InventoryError> {
        let tokens = shlex::split_comments(line)
            .map_err(|e| self.error(format!("Error parsing host definition '{line}': {e}")))?;
        let Some((pattern, assignments)) = tokens.split_first() else {
            return Err(self.error(format!("Expected a host definition, got: {line}")));
        };
        let (hosts, port) = expand_hostpattern(pattern).map_err(|e| self.error(e.to_string()))?;
        if pattern.trim().ends_with(':') && port.is_none() {
            return Err(self.error(format!(
                "Invalid host pattern '{pattern}' supplied, ending in ':' is not allowed, this character is reserved to provide a port."
            )));
        }
        if hosts.iter().any(|h| h.trim() == "---") {
            return Err(self.error(format!(
                "Invalid host pattern '{pattern}' supplied, '---' is normally a sign this is a YAML file."
            )));
        }
        let mut vars = Map::new();
        for token in assignments {
            let Some((k, v)) = token.split_once('=') else {
                return Err(self.error(format!(
                    "Expected key=value host variable assignment, got: {token}"
                )));
            };
            vars.insert(k.to_string(), self.value(v)?);
        }
        populate_host_vars(
            self.data,
            &hosts,
            &vars,
            group,
            port,
            (self.path, Some(self.line)),
        )
    }

    /// A value typed as a Python literal, else kept as text.
    fn value(&self, text: &str) -> Result<Value, InventoryError> {
        match literal_eval(text) {
            Ok(Some(value)) => Ok(value),
            Ok(None) => Ok(Value::String(text.to_string())),
            Err(e) => Err(self.error(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::plugin::{parse_alone, parse_text_alone};
    use serde_json::json;

    fn parse(text: &str) -> Result<InventoryData, InventoryError> {
        parse_text_alone(&IniPlugin, "hosts", text, InventoryData::new())
    }

    fn error(text: &str) -> String {
        let e = parse(text).unwrap_err().to_string();
        e.split_once("/hosts:")
            .map(|(_, rest)| rest.to_string())
            .unwrap_or(e)
    }

    fn host_vars(data: &InventoryData, h: &str) -> Value {
        Value::Object(data.host_at(data.host_index(h).unwrap()).vars().clone())
    }

    fn group_vars(data: &InventoryData, g: &str) -> Value {
        Value::Object(data.group_at(data.group_index(g).unwrap()).vars().clone())
    }

    fn members(data: &InventoryData, g: &str) -> Vec<String> {
        let g = data.group_index(g).unwrap();
        data.direct_hosts_of(g)
            .map(|h| data.host_at(h).name().to_string())
            .collect()
    }

    #[test]
    fn verify_takes_any_file_but_toml() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["hosts", "inv.ini", "inv.yml", "inv.cfg", "inv.toml"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let ok = |n: &str| IniPlugin.verify_file(&dir.path().join(n).display().to_string());
        assert!(ok("hosts") && ok("inv.ini") && ok("inv.yml") && ok("inv.cfg"));
        assert!(!ok("inv.toml") && !ok("missing"));
    }

    #[test]
    fn sections_hosts_and_ungrouped() {
        let data = parse(
            "# comment\n; also a comment\nfree1\nfree2:2222\n\n[web]\nweb[01:03] http=80\n[db:hosts]\ndb-[a:b]\n\
             [odd]\nx[1:6:2]\n[all]\nallhost\n",
        )
        .unwrap();
        assert_eq!(members(&data, "ungrouped"), ["free1", "free2"]);
        assert_eq!(members(&data, "web"), ["web01", "web02", "web03"]);
        assert_eq!(members(&data, "db"), ["db-a", "db-b"]);
        assert_eq!(members(&data, "odd"), ["x1", "x3", "x5"]);
        assert_eq!(members(&data, "all"), ["allhost"]);
        assert_eq!(host_vars(&data, "free2")["ansible_port"], json!(2222));
        assert_eq!(host_vars(&data, "web02")["http"], json!(80));
    }

    #[test]
    fn inline_values_are_python_literals() {
        let data = parse(
            "[g]\nh a=5 b='5' c=\"'5'\" d=True e=yes f=[1,2] g=\"{'k':'v'}\" h=1.5 i=\"two words\" j=None k=007 \
             m=\"x#y\" n= s={'k':'v'} l=x#y m=lost\n",
        )
        .unwrap();
        assert_eq!(
            host_vars(&data, "h"),
            json!({"a": 5, "b": 5, "c": "5", "d": true, "e": "yes", "f": [1, 2], "g": {"k": "v"}, "h": 1.5,
                   "i": "two words", "j": null, "k": "007", "l": "x", "m": "x#y", "n": "", "s": "{k:v}"})
        );
    }

    #[test]
    fn vars_sections_are_typed_too() {
        let data = parse(
            "[web]\nh\n[web:vars]\nport = 8080 # a comment\nflag=False\nword=FALSE\nmsg = hello world # kept\n\
             quoted='a b'\nlist=[1, 'x']\nempty=\n",
        )
        .unwrap();
        assert_eq!(
            group_vars(&data, "web"),
            json!({"port": 8080, "flag": false, "word": "FALSE", "msg": "hello world # kept", "quoted": "a b",
                   "list": [1, "x"], "empty": ""})
        );
    }

    #[test]
    fn children_may_be_declared_later() {
        let data = parse(
            "[top:children]\nmid\n[mid:children]\nleaf\n[leaf]\nh1\n[top:vars]\nv=1\n[mid]\n",
        )
        .unwrap();
        let children = |g: &str| -> Vec<String> {
            let g = data.group_index(g).unwrap();
            data.children_of(g)
                .map(|c| data.group_at(c).name().to_string())
                .collect()
        };
        assert_eq!(children("top"), ["mid"]);
        assert_eq!(children("mid"), ["leaf"]);
        assert_eq!(group_vars(&data, "top")["v"], json!(1));
    }

    #[test]
    fn vars_before_the_group_is_declared_is_fine() {
        let data = parse("[g:vars]\nx=1\n[g]\nh\n").unwrap();
        assert_eq!(group_vars(&data, "g")["x"], json!(1));
    }

    #[test]
    fn undefined_groups_are_errors() {
        assert_eq!(
            error("[p:children]\nnope\n"),
            "1: Section [p:children] includes undefined group 'nope'.".replace("1:", "2:")
        );
        assert_eq!(
            error("h\n[nope:vars]\nx=1\n"),
            "2: Section [nope:vars] not valid for undefined group 'nope'."
        );
    }

    #[test]
    fn line_errors() {
        assert_eq!(
            error("[g:bogus]\n"),
            "1: Section [g:bogus] has unknown type: bogus"
        );
        assert!(error("[g x]\n").starts_with("1: Invalid section entry: '[g x]'."));
        assert_eq!(
            error("[g]\nh a=1 b\n"),
            "2: Expected key=value host variable assignment, got: b"
        );
        assert_eq!(
            error("[g:vars]\nnovalue\n[g]\n"),
            "2: Expected key=value, got: novalue"
        );
        assert_eq!(
            error("[g:children]\na b\n"),
            "2: Expected group name, got: a b"
        );
        assert_eq!(
            error("\n\nh x='open\n"),
            "3: Error parsing host definition 'h x='open': No closing quotation"
        );
        assert!(
            error("h:\n")
                .starts_with("1: Invalid host pattern 'h:' supplied, ending in ':' is not allowed")
        );
        assert!(error("---\nall:\n").starts_with("1: Invalid host pattern '---' supplied"));
        assert_eq!(
            error("[g]\nh x=\"{[1]:2}\"\n"),
            "2: unhashable type: 'list'"
        );
        assert_eq!(error("web[1:]\n"), "1: host range must specify end value");
        assert_eq!(
            error("[a:children]\nb\n[b:children]\na\n"),
            "4: Adding group 'a' as child to 'b' creates a recursive dependency loop."
        );
    }

    #[test]
    fn non_utf8_comment_lines_are_tolerated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hosts");
        std::fs::write(&path, b"# caf\xe9\nh1\n").unwrap();
        let mut data = InventoryData::new();
        parse_alone(&IniPlugin, &path.display().to_string(), &mut data).unwrap();
        assert!(data.host_index("h1").is_some());
        std::fs::write(&path, b"h\xe9\n").unwrap();
        let e = parse_alone(
            &IniPlugin,
            &path.display().to_string(),
            &mut InventoryData::new(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("hosts:1: not valid UTF-8"), "{e}");
    }

    #[test]
    fn python_line_splitting() {}
}
