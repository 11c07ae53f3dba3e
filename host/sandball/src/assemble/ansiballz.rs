//! Ansiballz: a new-style Python module as one Python script the node runs with its
//! interpreter (from a file, or piped on stdin).
//!
//! The script carries a zip (base64) of the module and every module_utils file it
//! imports ([`super::module_utils`]). On the node it unpacks the zip once per content
//! into a private cache directory named by the zip's sha256 (where Python keeps the
//! bytecode it compiles, so later runs start fast; a cache that is not the running
//! user's alone — another user's, or writable by others — is never used, the run then
//! unpacks into a temporary directory of its own), puts that first on `sys.path`,
//! hands the arguments to
//! `ansible.module_utils.basic` the way the shipped `basic.py` reads them (the
//! `_ANSIBLE_ARGS` bytes, plus the `_ANSIBLE_PROFILE` serialization profile that
//! ansible-core 2.17+ reads; older versions ignore it) and runs the module as
//! `__main__` — through ansible-core 2.19's own loader where the payload has it, which
//! reports an exception the module did not handle as its failure. The zip is cached
//! by content for the run: only the arguments differ from one task to the next.

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

/// A built zip: its content address and its base64 text.
#[derive(Debug)]
pub struct Zip {
    /// Lowercase hex sha256 of the zip's bytes: the node keeps it unpacked under it.
    pub sha256: String,
    /// The zip, base64.
    pub b64: String,
}

/// The zips built during a run, by content address of their inputs.
#[derive(Debug, Default)]
pub struct ZipCache {
    zips: Mutex<HashMap<[u8; 32], Arc<Zip>>>,
}

impl ZipCache {
    /// The zip of a module and its module_utils, built once per content.
    pub fn zip(
        &self,
        roots: &CodeRoots,
        module_fqn: &str,
        module_src: &[u8],
    ) -> Result<Arc<Zip>, AnsiballzError> {
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
        let zip = Arc::new(Zip {
            sha256: hex::encode(Sha256::digest(&bytes)),
            b64: B64.encode(bytes),
        });
        self.lock().insert(key, zip.clone());
        Ok(zip)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Arc<Zip>>> {
        // A poisoned lock only means another thread panicked mid-insert.
        self.zips.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What the wrapper's runtime imports by name: the serialization profile `basic.py`
/// (ansible-core 2.17+) imports for the `legacy` profile the wrapper sets, and the
/// loader that runs the module (2.19+); older ansible-cores have none of these.
const PROFILE_MODULES: &[&str] = &[
    "ansible.module_utils._internal._ansiballz._loader",
    "ansible.module_utils._internal._json._profiles._module_legacy_c2m",
    "ansible.module_utils._internal._json._profiles._module_legacy_m2c",
];

/// The wrapper script: everything is passed as base64 or a plain identifier, so no
/// value can break out of its Python literal.
const WRAPPER: &str = r#"# sandball Ansiballz wrapper: runs the module in the zip below as __main__.
# Only what every run needs is imported up front (a payload already unpacked needs no
# zipfile, tempfile or shutil): start-up time is most of a module's run.
import binascii
import os
import runpy
import stat
import sys

ZIP = '@ZIP@'
ZIP_SHA256 = '@SHA@'
ARGS = '@ARGS@'
MODULE = '@MODULE@'
CACHE = os.path.expanduser(@CACHE@)


def private(path):
    # A directory (not a link) of this user's that nobody else may use (0700).
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def unpack(dest):
    import io
    import zipfile
    with zipfile.ZipFile(io.BytesIO(binascii.a2b_base64(ZIP))) as z:
        z.extractall(dest)


def unpacked():
    # The zip is unpacked once per content, into a private directory named by its
    # sha256 where Python also keeps the bytecode it compiles: later runs of the same
    # payload skip unpacking and compiling. A run unpacks beside it and renames, so a
    # reader never sees a half-written directory.
    path = os.path.join(CACHE, ZIP_SHA256)
    if private(CACHE) and private(path):
        return path
    import shutil
    import tempfile
    try:
        os.makedirs(CACHE, mode=0o700, exist_ok=True)
        if private(CACHE):
            if not os.path.lexists(path):
                tmp = tempfile.mkdtemp(prefix='.unpacking-', dir=CACHE)
                unpack(tmp)
                try:
                    os.rename(tmp, path)
                except OSError:
                    # Another run got there first.
                    shutil.rmtree(tmp, ignore_errors=True)
            if private(path):
                return path
    except OSError:
        pass
    # No cache of this user's own there (an unwritable home, another user's
    # directory): a private directory for this run only.
    import atexit
    tmp = tempfile.mkdtemp(prefix='sandball-ansiballz-')
    atexit.register(shutil.rmtree, tmp, True)
    unpack(tmp)
    return tmp


def main():
    path = unpacked()
    sys.path.insert(0, path)
    # The cache directory is ours: keep the compiled bytecode there even when the
    # environment says not to write any (PYTHONDONTWRITEBYTECODE).
    sys.dont_write_bytecode = False
    args = binascii.a2b_base64(ARGS)
    try:
        # ansible-core 2.19+: its own loader runs the module, as its wrapper does, and
        # reports an exception the module did not handle (or a module that returned
        # instead of exiting) as the module's failure.
        from ansible.module_utils._internal._ansiballz import _loader
    except ImportError:
        _loader = None
    if _loader is not None:
        _loader.run_module(json_params=args, profile='legacy', module_fqn=MODULE,
                           modlib_path=path, extensions={})
        return
    from ansible.module_utils import basic
    basic._ANSIBLE_ARGS = args
    basic._ANSIBLE_PROFILE = 'legacy'
    runpy.run_module(MODULE, init_globals=dict(_module_fqn=MODULE, _modlib_path=path),
                     run_name='__main__', alter_sys=True)


if __name__ == '__main__':
    main()
"#;

/// Builds the script for one run: `interpreter` goes on the shebang line, `args` are
/// the module's arguments (internal ones included), `cache_dir` is where the node keeps
/// unpacked payloads (`~` is the node user's home).
pub fn script(
    interpreter: &str,
    module_fqn: &str,
    zip: &Zip,
    args: &Value,
    cache_dir: &str,
) -> Vec<u8> {
    let params = json!({ "ANSIBLE_MODULE_ARGS": args });
    let args_b64 = B64.encode(params.to_string());
    let mut cache = String::new();
    sandball_pycompat::pyfmt::quote(cache_dir, &mut cache);
    // The module name is a dotted identifier (checked by the finder) and the sha256 is
    // hex, so neither can leave its quotes; the rest is base64 or quoted.
    let body = WRAPPER
        .replace("@ZIP@", &zip.b64)
        .replace("@SHA@", &zip.sha256)
        .replace("@ARGS@", &args_b64)
        .replace("@MODULE@", module_fqn)
        .replace("@CACHE@", &cache);
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
        let z = cache.zip(&roots, "ansible.modules.echo", module).unwrap();
        assert!(Arc::ptr_eq(
            &z,
            &cache.zip(&roots, "ansible.modules.echo", module).unwrap()
        ));
        let node_cache = d.path().join("remote_tmp/ansiballz");
        let args = json!({"name": "it's \"quoted\" ''' {{ x }}", "n": 3});
        let s = script(
            "/usr/bin/python3",
            "ansible.modules.echo",
            &z,
            &args,
            node_cache.to_str().unwrap(),
        );
        assert!(s.starts_with(b"#!/usr/bin/python3\n"));
        let private_tmp = d.path().join("tmp");
        std::fs::create_dir(&private_tmp).unwrap();
        let run = |s: &[u8]| {
            let mut child = std::process::Command::new("python3")
                .env("TMPDIR", &private_tmp)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            child.stdin.take().unwrap().write_all(s).unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["got"], args);
            assert_eq!(v["main"], "__main__");
        };
        for _ in 0..2 {
            run(&s);
        }
        // Unpacked once, under the zip's sha256, in a private directory, with the
        // bytecode Python compiled.
        let entries: Vec<String> = std::fs::read_dir(&node_cache)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(entries, std::slice::from_ref(&z.sha256));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&node_cache).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(
            node_cache
                .join(&z.sha256)
                .join("ansible/module_utils/__pycache__")
                .is_dir()
        );

        // A cache others may write to is never used: code planted there does not run,
        // the payload is unpacked into a temporary directory removed afterwards.
        let shared = d.path().join("shared");
        write(
            &shared.join(&z.sha256),
            "ansible/module_utils/basic.py",
            "raise SystemExit('planted code ran')\n",
        );
        for p in [&shared, &shared.join(&z.sha256)] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        run(&script(
            "/usr/bin/python3",
            "ansible.modules.echo",
            &z,
            &args,
            shared.to_str().unwrap(),
        ));
        assert_eq!(std::fs::read_dir(&private_tmp).unwrap().count(), 0);
    }
}
