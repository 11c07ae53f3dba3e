"""``AnsibleModule``: what an Ansible module's code calls, over the sandball host
interface."""

import json
import os
import shlex
import sys

from wit_world.imports import arguments, posix, process
from componentize_py_types import Err

# The run's state, set by ``sandball_module.entry`` before the module's ``main`` runs.
_state = {"manifest": None, "stdin": None}


class ModuleExit(SystemExit):
    """Raised by ``exit_json``/``fail_json`` once the result is printed, as Ansible's
    ``sys.exit``: ``code`` is the exit code."""


def _host_message(error):
    """The text of a host interface error (``sandball:host/types.error``)."""
    value = getattr(error, "value", error)
    return getattr(value, "message", str(value))


class AnsibleModule:
    """The module's arguments and what it reports, as ansible-core's ``AnsibleModule``.

    ``argument_spec`` and the other validation settings given here are the module's
    own copy for ansible-core: in a component the manifest's are applied (they must
    name the same arguments; a difference is refused, so the two cannot drift apart).
    """

    def __init__(self, argument_spec=None, supports_check_mode=False, **_validation):
        manifest = _state["manifest"]
        stdin = _state["stdin"]
        if manifest is None or stdin is None:
            raise RuntimeError("AnsibleModule is made inside a component run only (sandball_module.entry)")
        self._warnings = []
        self._deprecations = []
        self._secrets = []
        self._started = False
        env = list(os.environ.items())
        try:
            settings = json.loads(arguments.start(manifest, stdin, env))
        except Err as refused:
            # A validation failure or a check-mode skip: printed as it is.
            text = refused.value
            failed = json.loads(text).get("failed") is True
            self._print(text, 1 if failed else 0)
        self._started = True
        self.params = settings["params"]
        self.check_mode = settings["check_mode"]
        self._diff = settings["diff"]
        self.no_log = settings["no_log"]
        self._verbosity = settings["verbosity"]
        self._name = settings["module_name"]
        self.argument_spec = argument_spec or {}
        self.supports_check_mode = supports_check_mode
        declared = json.loads(manifest)
        theirs = set((declared.get("argument_spec") or {}).keys())
        if argument_spec is not None and set(argument_spec.keys()) != theirs:
            self.fail_json(
                msg="the module's argument_spec and its manifest's name different arguments: "
                "%s in the module, %s in the manifest"
                % (", ".join(sorted(argument_spec)), ", ".join(sorted(theirs)))
            )
        manifest_check = declared.get("supports_check_mode") is True
        if supports_check_mode != manifest_check:
            self.fail_json(
                msg="the module says supports_check_mode=%s, its manifest %s"
                % (supports_check_mode, manifest_check)
            )

    # Reporting ----------------------------------------------------------------------

    def warn(self, warning):
        """Adds a warning to the result."""
        self._warnings.append(str(warning))

    def deprecate(self, msg, version=None, date=None, collection_name=None):
        """Adds a deprecation notice to the result."""
        entry = {"msg": msg}
        if version is not None:
            entry["version"] = str(version)
        if date is not None:
            entry["date"] = str(date)
        if collection_name is not None:
            entry["collection_name"] = collection_name
        self._deprecations.append(entry)

    @property
    def no_log_values(self):
        """Secrets masked wherever they appear in the result (add to it)."""
        return _SecretSet(self._secrets)

    def exit_json(self, **kwargs):
        """Prints the result and ends the module (exit code 0)."""
        self._finish(dict(kwargs), 0)

    def fail_json(self, msg, **kwargs):
        """Prints a failure and ends the module (exit code 1)."""
        result = {"failed": True, "msg": msg}
        result.update((k, v) for k, v in kwargs.items() if k not in ("failed", "msg"))
        self._finish(result, 1)

    def _finish(self, result, code):
        if self._warnings:
            result["warnings"] = self._warnings + list(result.get("warnings") or [])
        if self._deprecations:
            result["deprecations"] = self._deprecations + list(result.get("deprecations") or [])
        if not self._started:
            self._print(json.dumps(result), code)
        try:
            text = arguments.finish(json.dumps(result), [str(s) for s in self._secrets])
        except Err as e:
            text = json.dumps({"failed": True, "msg": str(e.value)})
            code = 1
        self._print(text, code)

    @staticmethod
    def _print(text, code):
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
        raise ModuleExit(code)

    # Programs and files -------------------------------------------------------------

    def run_command(self, args, check_rc=False, data=None, binary_data=False, cwd=None,
                    environ_update=None, use_unsafe_shell=False, encoding="utf-8",
                    errors="surrogate_or_strict", expand_user_and_vars=True, **_ignored):
        """Runs a program the grant allows, without a shell: ``(rc, stdout, stderr)``."""
        if use_unsafe_shell:
            self.fail_json(msg="run_command: use_unsafe_shell is not available in a sandboxed module")
        if isinstance(args, (str, bytes)):
            args = shlex.split(args.decode() if isinstance(args, bytes) else args)
        argv = [str(a) for a in args if a is not None]
        if expand_user_and_vars:
            argv = [os.path.expanduser(os.path.expandvars(a)) for a in argv]
        stdin = None
        if data is not None:
            stdin = data if isinstance(data, bytes) else str(data).encode(encoding)
            if not binary_data:
                stdin += b"\n"
        env = [(str(k), str(v)) for k, v in (environ_update or {}).items()]
        try:
            out = process.run(process.Command(argv=argv, cwd=cwd, stdin=stdin, env=env))
        except Err as e:
            # As ansible-core fails on an OSError: its errno as rc (EACCES for a denial).
            errno = getattr(e.value, "errno", 0) or (13 if getattr(e.value, "denied", False) else 1)
            self.fail_json(rc=errno, msg=_host_message(e), cmd=" ".join(argv))
        rc = out.rc
        if encoding is None:
            stdout, stderr = out.stdout, out.stderr
        else:
            mode = "surrogateescape" if errors == "surrogate_or_strict" else errors
            stdout = out.stdout.decode(encoding, mode)
            stderr = out.stderr.decode(encoding, mode)
        if rc != 0 and check_rc:
            self.fail_json(cmd=" ".join(argv), rc=rc, stdout=stdout, stderr=stderr, msg=stderr.rstrip())
        return rc, stdout, stderr

    def get_bin_path(self, arg, required=False, opt_dirs=None):
        """The program's name: the shim finds it on the node's PATH when it runs, and
        only among the programs the grant allows (the sandbox cannot see PATH)."""
        return arg

    def atomic_move(self, src, dest, unsafe_writes=False, keep_dest_attrs=True):
        """Renames ``src`` over ``dest`` (same directory), giving it ``dest``'s mode and
        owner when ``dest`` exists."""
        if keep_dest_attrs:
            try:
                st = posix.stat(dest, True)
            except Err as e:
                self.fail_json(msg="Unable to read %s: %s" % (dest, _host_message(e)))
            if st is not None:
                try:
                    posix.chmod(src, st.mode)
                    posix.chown(src, st.uid, st.gid, True)
                except Err:
                    pass
        try:
            os.replace(src, dest)
        except OSError as e:
            self.fail_json(msg="Unable to make %s into %s: %s" % (src, dest, e))

    def tmpdir_path(self):
        """The node's temporary directory, when the grant opens it (``TMPDIR``)."""
        return os.environ.get("TMPDIR")

    def backup_local(self, fn):
        """Copies ``fn`` beside itself as Ansible names backups; returns the copy's path."""
        import time
        ext = time.strftime("%Y-%m-%d@%H:%M:%S~", time.localtime(time.time()))
        backup = "%s.%s.%s" % (fn, os.getpid(), ext)
        with open(fn, "rb") as src, open(backup, "wb") as dst:
            dst.write(src.read())
        return backup


class _SecretSet:
    """The module's extra secrets, added as to a set."""

    def __init__(self, items):
        self._items = items

    def add(self, value):
        if value not in self._items and str(value):
            self._items.append(value)

    def update(self, values):
        for v in values:
            self.add(v)
