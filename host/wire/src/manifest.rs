//! A module's manifest: name, description, argument spec, check-mode support and the
//! capabilities it needs. Stored as JSON in the component's `sandball:manifest`
//! custom section, so the component's sha256 covers it; the guest SDK validates
//! arguments against the same spec, the controller derives grants from it.
//!
//! The argument spec has the shape of Ansible's `argument_spec` (and of a role's
//! `meta/argument_specs.yml`), so a module author can read it as one.

use crate::capability::CapabilityRequest;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON object read in declaration order (kept for messages and documentation).
pub type OrderedMap<V> = Vec<(String, V)>;

/// A module's self-description.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Module name as used in tasks (`file`, `ansible.builtin.file` resolves to it).
    pub name: String,
    /// One-line description.
    #[serde(default)]
    pub description: String,
    /// Whether the module can run in check mode (it then reports what it would change).
    #[serde(default)]
    pub supports_check_mode: bool,
    /// Whether the file common arguments (`mode`, `owner`, `group`, …) are accepted.
    #[serde(default)]
    pub add_file_common_args: bool,
    /// The arguments the module accepts.
    #[serde(default, with = "ordered")]
    pub argument_spec: OrderedMap<ArgSpec>,
    /// Dependencies between top-level arguments.
    #[serde(default, flatten)]
    pub dependencies: Dependencies,
    /// Capabilities the module needs, in terms of its arguments.
    #[serde(default)]
    pub capabilities: Vec<CapabilityRequest>,
}

/// Dependencies between the arguments of one spec level.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Dependencies {
    /// Groups of arguments of which at most one may be given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mutually_exclusive: Vec<Vec<String>>,
    /// Groups of arguments that must be given together or not at all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_together: Vec<Vec<String>>,
    /// Groups of arguments of which at least one must be given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_one_of: Vec<Vec<String>>,
    /// `[key, value, [requirements]]` or `[key, value, [requirements], any]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_if: Vec<RequiredIf>,
    /// `key: [requirements]` (a single string is accepted for one requirement).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        with = "ordered_strings"
    )]
    pub required_by: OrderedMap<Vec<String>>,
}

/// One `required_if` rule, written as Ansible's 3- or 4-element list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "RequiredIfList", into = "RequiredIfList")]
pub struct RequiredIf {
    /// The argument whose value triggers the rule.
    pub key: String,
    /// The triggering value.
    pub value: Value,
    /// The arguments then required.
    pub requirements: Vec<String>,
    /// When true, one of the requirements is enough; otherwise all are needed.
    pub any: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum RequiredIfList {
    Three(String, Value, Vec<String>),
    Four(String, Value, Vec<String>, bool),
}

impl From<RequiredIfList> for RequiredIf {
    fn from(l: RequiredIfList) -> Self {
        match l {
            RequiredIfList::Three(key, value, requirements) => RequiredIf {
                key,
                value,
                requirements,
                any: false,
            },
            RequiredIfList::Four(key, value, requirements, any) => RequiredIf {
                key,
                value,
                requirements,
                any,
            },
        }
    }
}

impl From<RequiredIf> for RequiredIfList {
    fn from(r: RequiredIf) -> Self {
        if r.any {
            RequiredIfList::Four(r.key, r.value, r.requirements, true)
        } else {
            RequiredIfList::Three(r.key, r.value, r.requirements)
        }
    }
}

/// The type of an argument, as Ansible names them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArgType {
    /// Text (numbers and booleans are converted, with a warning where Ansible gives one).
    #[default]
    Str,
    /// A list (a comma-separated string is split).
    List,
    /// A mapping (`k=v` strings and JSON strings are parsed).
    Dict,
    /// A boolean (`yes`/`no`/`on`/`off`/`true`/`false`/`1`/`0`/`y`/`n`/`t`/`f`).
    Bool,
    /// An integer.
    Int,
    /// A floating-point number.
    Float,
    /// A path: `~` and environment variables are expanded.
    Path,
    /// Any value, unchanged.
    Raw,
    /// JSON text (a mapping or list is serialised to JSON).
    Jsonarg,
    /// Same as `jsonarg`.
    Json,
    /// A size in bytes (`1k`, `10MB`, …).
    Bytes,
    /// A size in bits (`1Mb`, …).
    Bits,
}

/// The spec of one argument.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ArgSpec {
    /// Argument type.
    #[serde(default, rename = "type")]
    pub kind: ArgType,
    /// Element type for lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elements: Option<ArgType>,
    /// Value used when the argument is not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// Where to look for a value when the argument is not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<Fallback>,
    /// Allowed values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<Value>>,
    /// The argument must be given.
    #[serde(default)]
    pub required: bool,
    /// The value is a secret: masked in `invocation` and never logged.
    #[serde(default)]
    pub no_log: bool,
    /// Other names the argument may be given under.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Spec of the suboptions of a `dict` (or of each element of a `list` of dicts).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "ordered_opt")]
    pub options: Option<OrderedMap<ArgSpec>>,
    /// Apply suboption defaults even when the dict itself is not given.
    #[serde(default)]
    pub apply_defaults: bool,
    /// The argument is deprecated and goes away in this version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed_in_version: Option<String>,
    /// The argument is deprecated and goes away at this date (YYYY-MM-DD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed_at_date: Option<String>,
    /// Collection the removal version or date belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed_from_collection: Option<String>,
    /// Aliases that are deprecated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deprecated_aliases: Vec<DeprecatedAlias>,
    /// Dependencies between suboptions.
    #[serde(default, flatten)]
    pub dependencies: Dependencies,
    /// Human description (documentation only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// `fallback`: environment variables consulted, in order, when the argument is absent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fallback {
    /// Variable names.
    pub env: Vec<String>,
}

/// One deprecated alias.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeprecatedAlias {
    /// The alias.
    pub name: String,
    /// Version it goes away in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Date it goes away at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// Collection the version or date belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection_name: Option<String>,
}

/// Errors reading a manifest.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The JSON did not match the manifest schema.
    #[error("invalid module manifest: {0}")]
    Json(#[from] serde_json::Error),
}

impl Manifest {
    /// Parses a manifest from its JSON bytes.
    pub fn from_json(bytes: &[u8]) -> Result<Self, ManifestError> {
        Ok(serde_json::from_slice(bytes)?)
    }
}

/// Serde for ordered maps written as JSON objects.
mod ordered {
    use super::*;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer, V: Serialize>(
        m: &[(String, V)],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(m.len()))?;
        for (k, v) in m {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>, V: Deserialize<'de>>(
        d: D,
    ) -> Result<Vec<(String, V)>, D::Error> {
        struct Visit<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for Visit<V> {
            type Value = Vec<(String, V)>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mapping")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, V>()? {
                    out.push((k, v));
                }
                Ok(out)
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
    }
}

mod ordered_opt {
    use super::*;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(
        m: &Option<Vec<(String, ArgSpec)>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match m {
            Some(m) => super::ordered::serialize(m, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<(String, ArgSpec)>>, D::Error> {
        super::ordered::deserialize(d).map(Some)
    }
}

/// `required_by` values may be a single string or a list.
mod ordered_strings {
    use super::*;
    use serde::{Deserializer, Serializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }

    pub fn serialize<S: Serializer>(m: &[(String, Vec<String>)], s: S) -> Result<S::Ok, S::Error> {
        super::ordered::serialize(m, s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<(String, Vec<String>)>, D::Error> {
        let raw: Vec<(String, OneOrMany)> = super::ordered::deserialize(d)?;
        Ok(raw
            .into_iter()
            .map(|(k, v)| match v {
                OneOrMany::One(s) => (k, vec![s]),
                OneOrMany::Many(l) => (k, l),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_an_ansible_shaped_spec() {
        let m: Manifest = serde_json::from_value(json!({
            "name": "file",
            "supports_check_mode": true,
            "argument_spec": {
                "path": {"type": "path", "required": true, "aliases": ["dest", "name"]},
                "state": {"choices": ["file", "absent"], "default": "file"},
                "opts": {"type": "dict", "options": {"a": {"type": "int"}}, "apply_defaults": true}
            },
            "required_if": [["state", "link", ["src"]], ["state", "x", ["a", "b"], true]],
            "required_by": {"owner": "group"},
            "capabilities": [{"kind": "fs", "path": "$path", "access": "read-write"}]
        }))
        .unwrap();
        assert_eq!(m.argument_spec[0].0, "path");
        assert_eq!(m.argument_spec[0].1.kind, ArgType::Path);
        assert_eq!(m.argument_spec[1].1.kind, ArgType::Str);
        assert!(m.dependencies.required_if[1].any);
        assert_eq!(m.dependencies.required_by[0].1, vec!["group".to_string()]);
        let back = serde_json::to_value(&m).unwrap();
        assert_eq!(back["required_if"][0], json!(["state", "link", ["src"]]));
    }
}
