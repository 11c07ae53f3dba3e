//! Ansiballz: a new-style Python module as one Python script the node runs with its
//! interpreter (from a file, or piped on stdin).
//!
//! The script carries a zip (base64) of the module and every module_utils file it
//! imports ([`super::module_utils`]). On the node it writes the zip to a private
//! temporary file, puts it first on `sys.path`, hands the arguments to
//! `ansible.module_utils.basic` the way the shipped `basic.py` reads them (the
//! `_ANSIBLE_ARGS` bytes, plus the `_ANSIBLE_PROFILE` serialization profile that
//! ansible-core 2.17+ reads; older versions ignore it), runs the module as `__main__`
//! and removes the file. The zip is cached by content for the run: only the arguments
//! differ from one task to the next.

use super::module_utils::{self, CodeRoots, ModuleUtilsError};
use super::zip::{self, ZipError};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Errors building an Ansiballz payload.
#[derive(Debug, thiserror::Error)]
pub enum AnsiballzError {
    /// A module_utils file is missing or unreadable.
    #[error(transparent)]
    ModuleUtils(#[from] ModuleUtilsError),
    /// The zip could not be written.
    #[error(transparent)]
    Zip(#[from] ZipError),
}

/// The zips built during a run, by content address of their inputs.
#[derive(Debug, Default)]
pub struct ZipCache {
    zips: Mutex<HashMap<[u8; 32], Arc<String>>>,
}

impl ZipCache {
    /// The base64 zip of a module and its module_utils, built once per content.
    pub fn zip_b64(
        &self,
        roots: &CodeRoots,
        module_fqn: &str,
        module_src: &[u8],
    ) -> Result<Arc<String>, AnsiballzError> {
        let mut h = Sha256::new();
        h.update(module_fqn.as_bytes());
        h.update([0]);
        h.update(module_src);
        h.update(format!("{roots:?}").as_bytes());
        let key: [u8; 32] = h.finalize().into();
        if let Some(z) = self.lock().get(&key) {
            return Ok(z.clone());
        }
        let files = module_utils::collect(roots, module_fqn, module_src, PROFILE_MODULES)?;
        let bytes = zip::write(files.iter().map(|(k, v)| (k.as_str(), v.as_slice())))?;
        tracing::debug!(
            module = module_fqn,
            files = files.len(),
            bytes = bytes.len(),
            "built the Ansiballz zip"
        );
        let b64 = Arc::new(B64.encode(bytes));
        self.lock().insert(key, b64.clone());
        Ok(b64)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Arc<String>>> {
        // A poisoned lock only means another thread panicked mid-insert.
        self.zips.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The serialization profile `basic.py` (ansible-core 2.17+) imports by name for the
/// `legacy` profile the wrapper sets; older ansible-cores have none of these.
const PROFILE_MODULES: &[&str] = &[
    "ansible.module_utils._internal._json._profiles._module_legacy_c2m",
    "ansible.module_utils._internal._json._profiles._module_legacy_m2c",
];

/// The wrapper script: everything is passed as base64 or a plain identifier, so no
/// value can break out of its Python literal.
const WRAPPER: &str = r#"# sandball Ansiballz wrapper: runs the module in the zip below as __main__.
import base64
import os
import runpy
import sys
import tempfile

ZIP = '@ZIP@'
ARGS = '@ARGS@'
MODULE = '@MODULE@'


def main():
    # Python imports from a zip file on disk, so the zip goes to a private temporary
    # file (mode 0600) that is removed however the module ends.
    fd, path = tempfile.mkstemp(prefix='sandball_ansiballz_', suffix='.zip', dir=@TMPDIR@)
    try:
        with os.fdopen(fd, 'wb') as f:
            f.write(base64.b64decode(ZIP))
        sys.path.insert(0, path)
        from ansible.module_utils import basic
        basic._ANSIBLE_ARGS = base64.b64decode(ARGS)
        basic._ANSIBLE_PROFILE = 'legacy'
        runpy.run_module(MODULE, init_globals=dict(_module_fqn=MODULE, _modlib_path=path),
                         run_name='__main__', alter_sys=True)
    finally:
        os.unlink(path)


if __name__ == '__main__':
    main()
"#;

/// Builds the script for one run: `interpreter` goes on the shebang line, `args` are
/// the module's arguments (internal ones included), `tmpdir` is where the zip is
/// unpacked on the node (`None`: the interpreter's default temporary directory).
pub fn script(
    interpreter: &str,
    module_fqn: &str,
    zip_b64: &str,
    args: &Value,
    tmpdir: Option<&str>,
) -> Vec<u8> {
    let params = json!({ "ANSIBLE_MODULE_ARGS": args });
    let args_b64 = B64.encode(params.to_string());
    let tmpdir = match tmpdir {
        Some(d) => {
            let mut q = String::new();
            crate::template::python::py_quote(d, &mut q);
            q
        }
        None => "None".to_string(),
    };
    // The module name is a dotted identifier (checked by the finder), so it cannot
    // leave its quotes; the rest is base64.
    let body = WRAPPER
        .replace("@ZIP@", zip_b64)
        .replace("@ARGS@", &args_b64)
        .replace("@MODULE@", module_fqn)
        .replace("@TMPDIR@", &tmpdir);
    format!("#!{interpreter}\n{body}").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::test_write as write;

    /// A fake ansible-core whose `basic.py` reads its arguments the way the real one
    /// does (the `_ANSIBLE_ARGS` global, JSON with `ANSIBLE_MODULE_ARGS`).
    #[test]
    fn the_script_runs_the_module_with_its_arguments() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("ansible");
        write(
            &a,
            "__init__.py",
            "raise ImportError('controller code shipped')\n",
        );
        write(&a, "module_utils/__init__.py", "");
        write(
            &a,
            "module_utils/basic.py",
            "import json\n_ANSIBLE_ARGS = None\ndef params():\n    return json.loads(_ANSIBLE_ARGS)['ANSIBLE_MODULE_ARGS']\n",
        );
        let roots = CodeRoots {
            ansible: Some(a),
            ..Default::default()
        };
        let module = b"from ansible.module_utils import basic\nimport json, sys\nif __name__ == '__main__':\n    p = basic.params()\n    print(json.dumps({'got': p, 'main': __name__, 'argv0': sys.argv[0]}))\n";
        let cache = ZipCache::default();
        let z = cache
            .zip_b64(&roots, "ansible.modules.echo", module)
            .unwrap();
        assert!(Arc::ptr_eq(
            &z,
            &cache
                .zip_b64(&roots, "ansible.modules.echo", module)
                .unwrap()
        ));
        let tmp = d.path().join("remote_tmp");
        std::fs::create_dir(&tmp).unwrap();
        let args = json!({"name": "it's \"quoted\" ''' {{ x }}", "n": 3});
        let s = script(
            "/usr/bin/python3",
            "ansible.modules.echo",
            &z,
            &args,
            Some(tmp.to_str().unwrap()),
        );
        assert!(s.starts_with(b"#!/usr/bin/python3\n"));
        let mut child = std::process::Command::new("python3")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(&s).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["got"], args);
        assert_eq!(v["main"], "__main__");
        // The zip was removed from the temporary directory.
        assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
    }
}
