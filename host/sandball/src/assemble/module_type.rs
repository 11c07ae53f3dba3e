//! Module type detection: which assembler a legacy module needs, decided from its bytes
//! in the order Ansible's module_common uses.
//!
//! The first rule that matches wins: a binary file; `#<<INCLUDE_ANSIBLE_MODULE_COMMON>>`
//! (Module Replacer Python); a new-style Python import of `ansible.module_utils` or of a
//! collection's `module_utils` (Ansiballz); the PowerShell markers; the
//! `<<INCLUDE_ANSIBLE_MODULE_JSON_ARGS>>` marker (JSONARGS); `WANT_JSON`; else old-style.

use regex::Regex;
use std::sync::LazyLock;

/// The kind of a legacy module, which decides how it is assembled and run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleType {
    /// A compiled program: args file (JSON) as its only argument.
    Binary,
    /// Python with `#<<INCLUDE_ANSIBLE_MODULE_COMMON>>`: Module Replacer, then run as
    /// Ansiballz would (the marker becomes `from ansible.module_utils.basic import *`).
    ModuleCommon,
    /// Python importing `ansible.module_utils` (or a collection's): Ansiballz.
    NewStylePython,
    /// PowerShell with `# POWERSHELL_COMMON` or `#Requires -Module Ansible.ModuleUtils.*`
    /// / `#AnsibleRequires`: Module Replacer for PowerShell.
    PowerShell,
    /// Any language with `<<INCLUDE_ANSIBLE_MODULE_JSON_ARGS>>`: the JSON arguments are
    /// substituted into the text.
    JsonArgs,
    /// Any language with `WANT_JSON`: args file (JSON) as the only argument.
    WantJson,
    /// Anything else: args file of shell-quoted `key=value` pairs.
    OldStyle,
}

impl ModuleType {
    /// The name used in messages and at `-vvv`.
    pub fn name(self) -> &'static str {
        match self {
            ModuleType::Binary => "binary",
            ModuleType::ModuleCommon => "new-style Python (module_replacer)",
            ModuleType::NewStylePython => "new-style Python (Ansiballz)",
            ModuleType::PowerShell => "new-style PowerShell",
            ModuleType::JsonArgs => "JSONARGS",
            ModuleType::WantJson => "WANT_JSON",
            ModuleType::OldStyle => "old-style",
        }
    }
}

/// The Module Replacer marker for Python modules.
pub const MODULE_COMMON: &str = "#<<INCLUDE_ANSIBLE_MODULE_COMMON>>";
/// The JSONARGS marker.
pub const JSON_ARGS: &str = "<<INCLUDE_ANSIBLE_MODULE_JSON_ARGS>>";
/// The WANT_JSON marker.
pub const WANT_JSON: &str = "WANT_JSON";
/// The PowerShell common-code marker.
pub const POWERSHELL_COMMON: &str = "# POWERSHELL_COMMON";

/// New-style Python imports, in every form: absolute `from`/`import` of
/// `ansible.module_utils`, a collection's `plugins.module_utils`, and relative imports
/// reaching a `module_utils` package.
static NEW_STYLE_PYTHON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)^[ \t]*(?:from[ \t]+(?:ansible\.module_utils|ansible_collections\.[\w.]+\.plugins\.module_utils|\.+(?:[\w.]*\.)?module_utils)(?:[ \t.]|$)|import[ \t]+ansible\.module_utils(?:[ \t.,]|$)|import[ \t]+ansible_collections\.[\w.]+\.plugins\.module_utils)",
    )
    .expect("static regex")
});

/// PowerShell directives: `#Requires -Module Ansible.ModuleUtils.*` and
/// `#AnsibleRequires -PowerShell|-CSharpUtil|-OSVersion|-Become|-Wrapper`.
static POWERSHELL_REQUIRES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?mi)^[ \t]*#(?:requires[ \t]+-modules?[ \t]+ansible\.moduleutils\.|ansiblerequires[ \t]+-)")
        .expect("static regex")
});

/// Whether the bytes are not text: a NUL byte in the first 8 KiB, or not UTF-8 there.
pub fn is_binary(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(8192)];
    if head.contains(&0) {
        return true;
    }
    match std::str::from_utf8(head) {
        Ok(_) => false,
        // A multi-byte character cut at the 8 KiB boundary is still text.
        Err(e) => e.error_len().is_some(),
    }
}

/// Detects a module's type in module_common's order.
pub fn detect(bytes: &[u8]) -> ModuleType {
    if is_binary(bytes) {
        return ModuleType::Binary;
    }
    let text = String::from_utf8_lossy(bytes);
    if text.contains(MODULE_COMMON) {
        ModuleType::ModuleCommon
    } else if NEW_STYLE_PYTHON.is_match(&text) {
        ModuleType::NewStylePython
    } else if text.contains(POWERSHELL_COMMON) || POWERSHELL_REQUIRES.is_match(&text) {
        ModuleType::PowerShell
    } else if text.contains(JSON_ARGS) {
        ModuleType::JsonArgs
    } else if text.contains(WANT_JSON) {
        ModuleType::WantJson
    } else {
        ModuleType::OldStyle
    }
}

/// Whether a Python module file holds nothing but its documentation, as ansible-core's
/// files for its action plugins do (`template`, `package`, `fetch`, `script`…): its
/// statements are only `from __future__` imports and `UPPER_CASE = …` assignments
/// (`DOCUMENTATION`, `EXAMPLES`, `RETURN`, `ANSIBLE_METADATA`). Running such a file does
/// nothing; the work is the action plugin's.
pub fn documentation_only(bytes: &[u8]) -> bool {
    static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^[A-Z_][A-Z0-9_]*\s*=").unwrap_or_else(|e| unreachable!("{e}"))
    });
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    let mut open: Option<&str> = None;
    for line in text.lines() {
        if let Some(quote) = open {
            if line.contains(quote) {
                open = None;
            }
            continue;
        }
        let statement = !(line.trim().is_empty()
            || line.starts_with(['#', ' ', '\t', ')', ']', '}'])
            || line.starts_with("from __future__ ")
            || ASSIGNMENT.is_match(line));
        if statement {
            return false;
        }
        open = ["\'\'\'", "\"\"\""]
            .into_iter()
            .find(|q| line.matches(q).count() % 2 == 1);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documentation_only_files_are_told_from_modules() {
        let docs = "#!/usr/bin/python\n# Copyright\nfrom __future__ import annotations\n\nDOCUMENTATION = r\"\"\"\nmodule: template\noptions:\n  src: x\n\"\"\"\n\nEXAMPLES = r\'\'\'\n- name: t\n  template: src=a dest=b\n\'\'\'\nANSIBLE_METADATA = {\n    'status': ['preview'],\n}\nRETURN = r\'\'\' # \'\'\'\n";
        assert!(documentation_only(docs.as_bytes()));
        let module = format!("{docs}\nimport json\nprint(json.dumps({{}}))\n");
        assert!(!documentation_only(module.as_bytes()));
        let main = "DOCUMENTATION = ''\ndef main():\n    pass\n";
        assert!(!documentation_only(main.as_bytes()));
        assert!(!documentation_only(b"\x7fELF\x00\x01"));
        assert!(!documentation_only(b"#!/bin/sh\necho '{}'\n"));
    }

    fn t(s: &str) -> ModuleType {
        detect(s.as_bytes())
    }

    #[test]
    fn binaries_are_recognised_first() {
        assert_eq!(
            detect(b"\x7fELF\x02\x01\x01\0\0WANT_JSON"),
            ModuleType::Binary
        );
        assert_eq!(detect(b"\xff\xfe\xfdgarbage"), ModuleType::Binary);
        // Non-ASCII UTF-8 is text.
        assert_eq!(t("#!/bin/sh\necho 'héllo'\n"), ModuleType::OldStyle);
    }

    #[test]
    fn new_style_python_in_every_import_form() {
        for src in [
            "from ansible.module_utils.basic import AnsibleModule\n",
            "import ansible.module_utils.basic\n",
            "import ansible.module_utils.basic as basic\n",
            "from ansible.module_utils import basic\n",
            "try:\n    from ansible.module_utils.urls import fetch_url\nexcept ImportError:\n    pass\n",
            "if True:\n\tfrom ansible.module_utils.basic import *\n",
            "from ansible_collections.ns.coll.plugins.module_utils.helper import x\n",
            "import ansible_collections.ns.coll.plugins.module_utils.helper\n",
            "from ..module_utils.helper import x\n",
            "from ...plugins.module_utils import helper\n",
        ] {
            assert_eq!(t(src), ModuleType::NewStylePython, "{src}");
        }
        // Mentions that are not imports do not count.
        assert_eq!(
            t("# see ansible.module_utils.basic\nprint('from ansible.module_utils')\n"),
            ModuleType::OldStyle
        );
        assert_eq!(
            t("import ansible.module_utils_extra\n"),
            ModuleType::OldStyle
        );
    }

    #[test]
    fn order_follows_module_common() {
        // MODULE_COMMON beats a new-style import.
        assert_eq!(
            t("#<<INCLUDE_ANSIBLE_MODULE_COMMON>>\nfrom ansible.module_utils.basic import *\n"),
            ModuleType::ModuleCommon
        );
        // A new-style import beats WANT_JSON and JSONARGS.
        assert_eq!(
            t("# WANT_JSON\nfrom ansible.module_utils.basic import AnsibleModule\n"),
            ModuleType::NewStylePython
        );
        // PowerShell beats JSONARGS.
        assert_eq!(
            t("#!powershell\n# POWERSHELL_COMMON\n$a = '<<INCLUDE_ANSIBLE_MODULE_JSON_ARGS>>'\n"),
            ModuleType::PowerShell
        );
        // JSONARGS beats WANT_JSON.
        assert_eq!(
            t("# WANT_JSON\nargs = '''<<INCLUDE_ANSIBLE_MODULE_JSON_ARGS>>'''\n"),
            ModuleType::JsonArgs
        );
        assert_eq!(t("#!/usr/bin/ruby\n# WANT_JSON\n"), ModuleType::WantJson);
        assert_eq!(t("#!/bin/sh\nsource $1\n"), ModuleType::OldStyle);
    }

    #[test]
    fn powershell_directives() {
        assert_eq!(
            t("#!powershell\n#Requires -Module Ansible.ModuleUtils.Legacy\n"),
            ModuleType::PowerShell
        );
        assert_eq!(
            t("#!powershell\n#AnsibleRequires -CSharpUtil Ansible.Basic\n"),
            ModuleType::PowerShell
        );
        assert_eq!(
            t("#!powershell\n#Requires -Version 3.0\n"),
            ModuleType::OldStyle
        );
    }
}
