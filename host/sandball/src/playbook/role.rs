//! The entries of a play's `roles:` list, as written: which role, with which keywords
//! and parameters. Finding and loading the role is the resolver's work.

use serde_json::{Map, Value};

use crate::playbook::attribute::Fields;
use crate::playbook::inheritance::Keywords;
use crate::playbook::keywords::is_role_keyword;
use crate::yaml::Node;
use crate::yaml::error::PlaybookError;
use crate::yaml::location::Location;
use crate::yaml::source::SourceFile;

/// One entry of `roles:`.
#[derive(Debug, Clone, PartialEq)]
pub struct RoleRef {
    /// The role's name (or path), from `role:`, `name:`, or the entry itself when it is a
    /// string.
    pub name: String,
    /// The entry's keywords (`when`, `tags`, `vars`, `become`…).
    pub keywords: Keywords,
    /// The entry's other keys: parameters for the role, raw.
    pub params: Map<String, Value>,
    /// Where the entry starts.
    pub location: Location,
}

/// Reads the `roles:` list of a play: absent or null is empty.
pub(crate) fn roles(play: &Fields<'_>) -> Result<Vec<RoleRef>, PlaybookError> {
    let Some(node) = play.node("roles").filter(|node| !node.is_null()) else {
        return Ok(Vec::new());
    };
    let Some(items) = node.as_seq() else {
        return Err(play.error_at(
            node.mark,
            format!(
                "A malformed role declaration was encountered: roles ({}) should be a list but is {}",
                sandball_pycompat::pyfmt::py_repr(&node.to_json()),
                node.describe()
            ),
        ));
    };
    items.iter().map(|item| role(play.source(), item)).collect()
}

pub(crate) fn role(source: &SourceFile, node: &Node) -> Result<RoleRef, PlaybookError> {
    if let Some(name) = node.scalar_text() {
        // `name,version` was the old style of naming a role: refused, as in Ansible.
        if name.contains(',') {
            return Err(source.error(
                node.mark,
                format!("Invalid old style role requirement: {name}"),
            ));
        }
        return Ok(RoleRef {
            name,
            keywords: Keywords::default(),
            params: Map::new(),
            location: source.location(node.mark),
        });
    }
    if node.as_map().is_none() {
        return Err(source.error(
            node.mark,
            format!(
                "a role entry must be a role name or a mapping, got {}",
                node.describe()
            ),
        ));
    }
    let fields = Fields::new(source, node, "role")?;
    let name_key = if fields.has("role") { "role" } else { "name" };
    let Some(name) = fields.string(name_key)? else {
        return Err(fields.error("a role entry must name its role with 'role:' (or 'name:')"));
    };
    let keywords = Keywords::parse(&fields)?;
    let mut params = Map::new();
    for entry in fields
        .entries()
        .iter()
        .filter(|entry| entry.name != name_key && !is_role_keyword(entry.name))
    {
        params.insert(entry.name.to_owned(), entry.value.to_json());
    }
    Ok(RoleRef {
        name,
        keywords,
        params,
        location: fields.location(),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::yaml;

    fn parse(text: &str) -> Result<Vec<RoleRef>, String> {
        let source = SourceFile::new(Path::new("r.yml"), text);
        let Ok(yaml::Document {
            root: Some(root), ..
        }) = yaml::load(&source)
        else {
            panic!("bad test YAML")
        };
        Fields::new(&source, &root, "Play")
            .and_then(|fields| roles(&fields))
            .map_err(|error| {
                error
                    .to_string()
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned()
            })
    }

    #[test]
    fn names_keywords_and_params() {
        let list = parse(
            "roles:\n  - common\n  - role: web\n    when: x\n    tags: [t]\n    http_port: 80\n  - name: db\n    become: true\n",
        )
        .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(list.len(), 3);
        assert_eq!(list[0].name, "common");
        assert_eq!(list[0].location.to_string(), "r.yml:2:5");
        assert_eq!(list[1].name, "web");
        assert_eq!(list[1].keywords.when, vec![json!("x")]);
        assert_eq!(list[1].keywords.tags, vec!["t".to_string()]);
        assert_eq!(
            Value::Object(list[1].params.clone()),
            json!({"http_port": 80})
        );
        assert_eq!(list[1].location.to_string(), "r.yml:3:5");
        assert_eq!(list[2].name, "db");
        assert_eq!(
            list[2].keywords.get(crate::playbook::Keyword::Become),
            Some(&json!(true))
        );
    }

    #[test]
    fn role_wins_over_name() {
        let list = parse("roles:\n  - role: web\n    name: Web servers\n").unwrap_or_default();
        assert_eq!(list[0].name, "web");
        assert!(
            !list[0].params.contains_key("name"),
            "name is not a parameter"
        );
    }

    #[test]
    fn errors() {
        assert_eq!(parse("roles:\n"), Ok(vec![]));
        assert_eq!(
            parse("roles: web\n"),
            Err("ERROR! A malformed role declaration was encountered: roles ('web') should be a list but is a string in 'r.yml': line 1, column 8".to_owned())
        );
        assert_eq!(
            parse("roles:\n  - [web]\n"),
            Err("ERROR! a role entry must be a role name or a mapping, got a list in 'r.yml': line 2, column 5".to_owned())
        );
        assert_eq!(
            parse("roles:\n  - when: x\n"),
            Err("ERROR! a role entry must name its role with 'role:' (or 'name:') in 'r.yml': line 2, column 5".to_owned())
        );
    }
}
