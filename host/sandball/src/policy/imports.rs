//! What a component can ask for, read from the component itself: the interfaces it
//! imports (decoded with wasmparser, without running it), what each one reaches on
//! the node, and where that disagrees with the manifest (an import the manifest does
//! not cover is an error; a requested capability the component cannot use, a
//! warning).

use sandball_wire::capability::CapabilityRequest;
use sandball_wire::manifest::Manifest;
use serde::Serialize;

/// What an imported interface reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reach {
    /// Standard streams, clocks, random numbers, I/O plumbing, exit: always given.
    Always,
    /// Arguments, working directory and environment variables (only granted ones).
    Environment,
    /// The filesystem (only granted paths are visible).
    Fs,
    /// TCP and UDP sockets (only granted peers; UDP never).
    Net,
    /// Host name lookups.
    Dns,
    /// Running programs through the sandball host interface.
    Exec,
    /// Read-only information about the node (`sandball:host/system`): uname, ids,
    /// time zone, addresses, mount and route tables; always given (its name lookup
    /// needs `dns`).
    System,
    /// Argument handling (`sandball:host/arguments`): the module's own arguments and
    /// result, checked and masked by the shim; always given, reaches nothing.
    Arguments,
    /// Something the shim does not provide: the component cannot be instantiated.
    Unknown,
}

/// One imported interface.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Import {
    /// The import name, `wasi:cli/stdout@0.2.6`.
    pub name: String,
    /// What it reaches.
    pub reach: Reach,
}

/// A disagreement between imports and manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// `error` or `warning`.
    pub level: &'static str,
    /// What is wrong.
    pub message: String,
}

/// The interface part of an import name: `wasi:cli/stdout@0.2.6` → `wasi:cli/stdout`.
fn interface(name: &str) -> &str {
    name.split_once('@').map(|(i, _)| i).unwrap_or(name)
}

/// What importing `name` reaches.
pub fn reach(name: &str) -> Reach {
    match interface(name) {
        "wasi:cli/environment" => Reach::Environment,
        "wasi:filesystem/types" | "wasi:filesystem/preopens" | "sandball:host/posix" => Reach::Fs,
        "wasi:sockets/ip-name-lookup" => Reach::Dns,
        "sandball:host/process" => Reach::Exec,
        "sandball:host/types" => Reach::Always,
        "sandball:host/system" => Reach::System,
        "sandball:host/arguments" => Reach::Arguments,
        i if i.starts_with("wasi:sockets/") || i.starts_with("wasi:http/") => Reach::Net,
        i if ["wasi:cli/", "wasi:io/", "wasi:clocks/", "wasi:random/"]
            .iter()
            .any(|p| i.starts_with(p)) =>
        {
            Reach::Always
        }
        _ => Reach::Unknown,
    }
}

/// The component's own imports (not those of the modules and components nested in
/// it), in order.
pub fn component_imports(bytes: &[u8]) -> Result<Vec<Import>, String> {
    let mut depth = 0usize;
    let mut out = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        match payload.map_err(|e| format!("malformed component: {e}"))? {
            wasmparser::Payload::Version { .. } => depth += 1,
            wasmparser::Payload::End(_) => depth = depth.saturating_sub(1),
            wasmparser::Payload::ComponentImportSection(reader) if depth == 1 => {
                for import in reader {
                    let import = import.map_err(|e| format!("malformed import: {e}"))?;
                    out.push(Import {
                        name: import.name.name.to_string(),
                        reach: reach(import.name.name),
                    });
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Which reach a capability request needs.
fn needs(req: &CapabilityRequest) -> Reach {
    match req {
        CapabilityRequest::Fs(_) => Reach::Fs,
        CapabilityRequest::Exec(_) => Reach::Exec,
        CapabilityRequest::Env { .. } => Reach::Environment,
        CapabilityRequest::Net { .. } => Reach::Net,
        CapabilityRequest::Dns => Reach::Dns,
    }
}

/// Compares the imports with the manifest's requests. The imports the manifest does not
/// cover are one finding per kind of capability, naming each interface (an
/// interpreter's component imports a family of them whatever the module does).
pub fn findings(manifest: &Manifest, imports: &[Import]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut uncovered: Vec<(Reach, Vec<&str>)> = Vec::new();
    for import in imports {
        let covered = match import.reach {
            Reach::Always | Reach::Environment | Reach::System | Reach::Arguments => true,
            Reach::Unknown => {
                out.push(Finding {
                    level: "error",
                    message: format!(
                        "imports {}, which the shim does not provide: the module cannot run",
                        import.name
                    ),
                });
                continue;
            }
            reach => manifest.capabilities.iter().any(|r| needs(r) == reach),
        };
        if !covered {
            match uncovered.iter_mut().find(|(r, _)| *r == import.reach) {
                Some((_, names)) => names.push(&import.name),
                None => uncovered.push((import.reach, vec![&import.name])),
            }
        }
    }
    for (reach, names) in uncovered {
        out.push(Finding {
            level: "error",
            message: format!(
                "imports {} ({}) but the manifest requests no {} capability",
                names.join(", "),
                describe(reach),
                kind_word(reach)
            ),
        });
    }
    for req in &manifest.capabilities {
        let reach = needs(req);
        // `system.fqdn` is a name lookup: `dns` serves the system interface too.
        let usable =
            |i: &Import| i.reach == reach || (reach == Reach::Dns && i.reach == Reach::System);
        if !imports.iter().any(usable) {
            out.push(Finding {
                level: "warning",
                message: format!(
                    "requests {req} but imports no interface that could use it ({})",
                    describe(reach)
                ),
            });
        }
    }
    out
}

fn kind_word(reach: Reach) -> &'static str {
    match reach {
        Reach::Fs => "fs",
        Reach::Net => "net",
        Reach::Dns => "dns",
        Reach::Exec => "exec",
        Reach::Environment => "env",
        Reach::Always | Reach::System | Reach::Arguments | Reach::Unknown => "",
    }
}

/// A few words on what a reach means, for people.
pub fn describe(reach: Reach) -> &'static str {
    match reach {
        Reach::Always => "streams, clocks, random: always given",
        Reach::Environment => "arguments; only granted environment variables",
        Reach::Fs => "filesystem: only granted paths",
        Reach::Net => "network: only granted TCP peers",
        Reach::Dns => "host name lookups",
        Reach::Exec => "running programs: only granted ones",
        Reach::System => {
            "node information (uname, ids, time zone, addresses, mount and route tables): read-only, always given"
        }
        Reach::Arguments => "argument validation and result masking: always given",
        Reach::Unknown => "not provided by the shim",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn import(name: &str) -> Import {
        Import {
            name: name.into(),
            reach: reach(name),
        }
    }

    #[test]
    fn interfaces_are_classified() {
        assert_eq!(reach("wasi:cli/stdout@0.2.6"), Reach::Always);
        assert_eq!(reach("wasi:cli/environment@0.2.0"), Reach::Environment);
        assert_eq!(reach("wasi:filesystem/preopens@0.2.0"), Reach::Fs);
        assert_eq!(reach("wasi:sockets/tcp@0.2.0"), Reach::Net);
        assert_eq!(reach("wasi:sockets/ip-name-lookup@0.2.0"), Reach::Dns);
        assert_eq!(reach("sandball:host/process@0.1.0"), Reach::Exec);
        assert_eq!(reach("sandball:host/posix@0.1.0"), Reach::Fs);
        assert_eq!(reach("sandball:host/system@0.1.0"), Reach::System);
        assert_eq!(reach("sandball:host/arguments@0.1.0"), Reach::Arguments);
        assert_eq!(reach("acme:evil/backdoor"), Reach::Unknown);
        let bare: Manifest = serde_json::from_value(json!({"name": "m"})).unwrap();
        assert_eq!(
            findings(&bare, &[import("sandball:host/arguments@0.1.0")]),
            vec![]
        );
    }

    #[test]
    fn uncovered_imports_are_errors_and_unused_requests_warnings() {
        let m: Manifest = serde_json::from_value(json!({
            "name": "m",
            "capabilities": [{"kind": "exec", "program": "$argv[0]"}, {"kind": "env", "name": "HOME"}]
        }))
        .unwrap();
        let imports = vec![
            import("wasi:cli/environment@0.2.6"),
            import("wasi:sockets/tcp@0.2.0"),
            import("acme:evil/backdoor"),
            import("wasi:sockets/udp@0.2.0"),
        ];
        let f = findings(&m, &imports);
        let errors: Vec<&str> = f
            .iter()
            .filter(|f| f.level == "error")
            .map(|f| f.message.as_str())
            .collect();
        // The interface the shim lacks, then one finding for both socket imports.
        assert_eq!(
            errors,
            vec![
                "imports acme:evil/backdoor, which the shim does not provide: the module cannot run",
                "imports wasi:sockets/tcp@0.2.0, wasi:sockets/udp@0.2.0 (network: only granted TCP peers) but the manifest requests no net capability",
            ]
        );
        let warnings: Vec<&str> = f
            .iter()
            .filter(|f| f.level == "warning")
            .map(|f| f.message.as_str())
            .collect();
        assert_eq!(
            warnings,
            vec![
                "requests exec $argv[0] but imports no interface that could use it (running programs: only granted ones)"
            ]
        );
    }

    #[test]
    fn the_system_interface_needs_no_request_and_serves_dns() {
        let m: Manifest =
            serde_json::from_value(json!({"name": "m", "capabilities": [{"kind": "dns"}]}))
                .unwrap();
        assert_eq!(
            findings(&m, &[import("sandball:host/system@0.1.0")]),
            vec![]
        );
        let none: Manifest = serde_json::from_value(json!({"name": "m"})).unwrap();
        assert_eq!(
            findings(&none, &[import("sandball:host/system@0.1.0")]),
            vec![]
        );
        let f = findings(&m, &[]);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].level, "warning");
    }

    #[test]
    fn a_core_module_has_no_component_imports() {
        assert_eq!(component_imports(b"\0asm\x01\0\0\0").unwrap(), vec![]);
    }
}
