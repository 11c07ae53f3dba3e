//! The file common arguments (`mode`, `owner`, `group`, SELinux fields, `attributes`,
//! `unsafe_writes`) that `add_file_common_args` adds to a spec, and [`FileArgs`], what a
//! module reads back from them.

use super::realpath::realpath;
use sandball_wire::manifest::{ArgSpec, ArgType, Fallback};
use serde_json::{Map, Value};

/// The arguments `add_file_common_args: true` adds to a module's spec (those the module
/// does not define itself).
pub fn common_arg_spec() -> Vec<(String, ArgSpec)> {
    let text = |aliases: &[&str]| ArgSpec {
        aliases: aliases.iter().map(|a| a.to_string()).collect(),
        ..ArgSpec::default()
    };
    vec![
        (
            "mode".into(),
            ArgSpec {
                kind: ArgType::Raw,
                ..ArgSpec::default()
            },
        ),
        ("owner".into(), text(&[])),
        ("group".into(), text(&[])),
        ("seuser".into(), text(&[])),
        ("serole".into(), text(&[])),
        ("selevel".into(), text(&[])),
        ("setype".into(), text(&[])),
        ("attributes".into(), text(&["attr"])),
        (
            "unsafe_writes".into(),
            ArgSpec {
                kind: ArgType::Bool,
                default: Some(Value::Bool(false)),
                fallback: Some(Fallback {
                    env: vec!["ANSIBLE_UNSAFE_WRITES".into()],
                }),
                ..ArgSpec::default()
            },
        ),
    ]
}

/// The file arguments of one task, as `set_fs_attributes_if_different` applies them.
/// SELinux fields are carried but not applied.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileArgs {
    /// `path` (or `dest`); with `follow`, a symlink is resolved to its target.
    pub path: Option<String>,
    /// `mode`: a number, octal text or symbolic text.
    pub mode: Option<Value>,
    /// `owner`: a user name or id.
    pub owner: Option<String>,
    /// `group`: a group name or id.
    pub group: Option<String>,
    /// `seuser`.
    pub seuser: Option<String>,
    /// `serole`.
    pub serole: Option<String>,
    /// `setype`.
    pub setype: Option<String>,
    /// `selevel`.
    pub selevel: Option<String>,
    /// `unsafe_writes`.
    pub unsafe_writes: bool,
    /// `attributes` (`chattr` flags such as `+i`).
    pub attributes: Option<String>,
    /// `follow`.
    pub follow: bool,
}

impl FileArgs {
    /// Reads the file arguments from validated parameters.
    pub fn from_params(params: &Map<String, Value>) -> Self {
        let text = |key: &str| match params.get(key) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let flag = |key: &str| params.get(key).and_then(Value::as_bool).unwrap_or(false);
        let follow = flag("follow");
        let path = text("path").or_else(|| text("dest")).map(|p| {
            let is_link = std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink());
            if follow && is_link { realpath(&p) } else { p }
        });
        FileArgs {
            path,
            mode: params.get("mode").filter(|v| !v.is_null()).cloned(),
            owner: text("owner"),
            group: text("group"),
            seuser: text("seuser"),
            serole: text("serole"),
            setype: text("setype"),
            selevel: text("selevel"),
            unsafe_writes: flag("unsafe_writes"),
            attributes: text("attributes"),
            follow,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_params_and_follows_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(root.join("target"), b"").unwrap();
        std::os::unix::fs::symlink("target", root.join("link")).unwrap();
        let link = root.join("link").to_string_lossy().into_owned();
        let params = json!({"dest": link, "mode": "0644", "owner": 1000, "group": "adm",
                            "follow": true, "attributes": "+i", "unsafe_writes": false, "setype": null});
        let a = FileArgs::from_params(params.as_object().unwrap());
        assert_eq!(
            a.path.as_deref(),
            Some(root.join("target").to_str().unwrap())
        );
        assert_eq!(a.mode, Some(json!("0644")));
        assert_eq!(a.owner.as_deref(), Some("1000"));
        assert_eq!(a.group.as_deref(), Some("adm"));
        assert_eq!(a.attributes.as_deref(), Some("+i"));
        assert!(a.follow && a.setype.is_none());
        let params = json!({"path": link, "follow": false});
        let a = FileArgs::from_params(params.as_object().unwrap());
        assert_eq!(a.path.as_deref(), Some(link.as_str()));
    }

    #[test]
    fn common_spec_names() {
        let names: Vec<String> = common_arg_spec().into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "mode",
                "owner",
                "group",
                "seuser",
                "serole",
                "selevel",
                "setype",
                "attributes",
                "unsafe_writes"
            ]
        );
    }
}
