//! Module Replacer: the text substitutions of the original assembler, still used for
//! JSONARGS modules (any language), PowerShell modules and Python modules marked
//! `#<<INCLUDE_ANSIBLE_MODULE_COMMON>>`.
//!
//! Public markers: `#<<INCLUDE_ANSIBLE_MODULE_COMMON>>` becomes
//! `from ansible.module_utils.basic import *` (the module then goes through Ansiballz,
//! whose zip carries `basic.py` and what it imports). Internal markers:
//! `<<INCLUDE_ANSIBLE_MODULE_JSON_ARGS>>` (the arguments as JSON),
//! `"<<INCLUDE_ANSIBLE_MODULE_COMPLEX_ARGS>>"` (that JSON as a Python string literal),
//! `"<<ANSIBLE_VERSION>>"`, `<<SELINUX_SPECIAL_FILESYSTEMS>>` (comma-separated) and
//! `syslog.LOG_USER` (the configured facility).

use super::module_type::{JSON_ARGS, MODULE_COMMON};
use serde_json::Value;

/// What the substitutions put in.
#[derive(Clone, Debug)]
pub struct Substitutions<'a> {
    /// The module's arguments, internal ones included.
    pub args: &'a Value,
    /// The Ansible version modules are told.
    pub version: &'a str,
    /// Filesystems with a special SELinux context.
    pub selinux_special_fs: &'a [String],
    /// Syslog facility name (`LOG_USER`, `LOG_LOCAL0`, …).
    pub syslog_facility: &'a str,
}

/// The Python import `#<<INCLUDE_ANSIBLE_MODULE_COMMON>>` stands for.
pub const MODULE_COMMON_IMPORT: &str = "from ansible.module_utils.basic import *";

/// Applies every Module Replacer substitution to a module's text.
pub fn substitute(text: &str, s: &Substitutions<'_>) -> String {
    let json = s.args.to_string();
    let mut complex = String::new();
    sandball_pycompat::pyfmt::quote(&json, &mut complex);
    let mut version = String::new();
    sandball_pycompat::pyfmt::quote(s.version, &mut version);
    text.replace(MODULE_COMMON, MODULE_COMMON_IMPORT)
        .replace(JSON_ARGS, &json)
        .replace("\"<<INCLUDE_ANSIBLE_MODULE_COMPLEX_ARGS>>\"", &complex)
        .replace("\"<<ANSIBLE_VERSION>>\"", &version)
        .replace(
            "<<SELINUX_SPECIAL_FILESYSTEMS>>",
            &s.selinux_special_fs.join(","),
        )
        .replace("syslog.LOG_USER", &format!("syslog.{}", s.syslog_facility))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_marker_is_replaced() {
        let args = json!({"param1": "test's quotes", "param2": "\"To be\" - H"});
        let fs = vec!["nfs".to_string(), "vfat".to_string()];
        let s = Substitutions {
            args: &args,
            version: "2.19.0",
            selinux_special_fs: &fs,
            syslog_facility: "LOG_LOCAL0",
        };
        let src = "#<<INCLUDE_ANSIBLE_MODULE_COMMON>>\njson_arguments = \"\"\"<<INCLUDE_ANSIBLE_MODULE_JSON_ARGS>>\"\"\"\nMODULE_COMPLEX_ARGS = \"<<INCLUDE_ANSIBLE_MODULE_COMPLEX_ARGS>>\"\nANSIBLE_VERSION = \"<<ANSIBLE_VERSION>>\"\nSELINUX = '<<SELINUX_SPECIAL_FILESYSTEMS>>'\nsyslog.openlog('x', 0, syslog.LOG_USER)\n";
        let out = substitute(src, &s);
        assert_eq!(
            out,
            "from ansible.module_utils.basic import *\n\
json_arguments = \"\"\"{\"param1\":\"test's quotes\",\"param2\":\"\\\"To be\\\" - H\"}\"\"\"\n\
MODULE_COMPLEX_ARGS = '{\"param1\":\"test\\'s quotes\",\"param2\":\"\\\\\"To be\\\\\" - H\"}'\n\
ANSIBLE_VERSION = '2.19.0'\n\
SELINUX = 'nfs,vfat'\n\
syslog.openlog('x', 0, syslog.LOG_LOCAL0)\n"
        );
    }

    #[test]
    fn python_reads_the_complex_args_back() {
        let args = json!({"a": "back\\slash 'q' \"dq\" \n é"});
        let s = Substitutions {
            args: &args,
            version: "2.19.0",
            selinux_special_fs: &[],
            syslog_facility: "LOG_USER",
        };
        let out = substitute(
            "import json\nprint(json.dumps(json.loads(\"<<INCLUDE_ANSIBLE_MODULE_COMPLEX_ARGS>>\")))\n",
            &s,
        );
        let run = std::process::Command::new("python3")
            .arg("-c")
            .arg(out)
            .output()
            .unwrap();
        let back: Value = serde_json::from_slice(&run.stdout).unwrap();
        assert_eq!(back, args);
    }
}
