# sandball-shim's Python fork server: one per interpreter and environment in a session.
# It runs legacy (Ansiballz) module scripts the way `python < script` would, each in a
# child process of its own (fork), so a run costs a fork instead of an interpreter
# start-up and the imports of ansible.module_utils.basic: those are done once, in this
# process, from the first payload that carried them, and so is every other module of
# ansible.module_utils and the standard library a run imported.
#
# Protocol on the descriptors the shim gave as stdin/stdout: a request is a 4-byte
# big-endian length and a JSON header {"script": N, "modlib": path or null} followed by
# N bytes of script; the answer is a 4-byte length and a JSON header {"rc": code,
# "stdout": N, "stderr": M} followed by N bytes of the run's stdout and M of its stderr.
import json
import os
import stat
import struct
import sys
import tempfile

PROTO_IN = os.dup(0)
PROTO_OUT = os.dup(1)
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)
# Nothing a preloaded import prints may reach the protocol.
os.dup2(2, 1)

# The payload directory the preloaded modules came from, once there is one.
PRELOADED = None


def read_exact(n):
    parts = []
    while n:
        b = os.read(PROTO_IN, min(n, 1 << 20))
        if not b:
            raise EOFError
        parts.append(b)
        n -= len(b)
    return b"".join(parts)


def write_all(data):
    view = memoryview(data)
    while view:
        view = view[os.write(PROTO_OUT, view):]


def private(path):
    # A directory (not a link) of this user's that nobody else may use (0700), as the
    # Ansiballz wrapper keeps its payloads.
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def preload(modlib, names):
    # Imports, from a payload directory a run has unpacked (and so checked), what every
    # Ansiballz module imports (basic) and what the run imported besides, of
    # ansible.module_utils and of the standard library; later children inherit it.
    # Anything that fails to import is left out.
    global PRELOADED
    if not modlib:
        return
    modlib = os.path.expanduser(modlib)
    if PRELOADED is None:
        if not private(modlib) or not private(os.path.dirname(modlib)):
            return
        sys.path.insert(0, modlib)
        try:
            import ansible.module_utils.basic  # noqa: F401
            PRELOADED = modlib
        except BaseException:
            forget()
            return
        finally:
            sys.path.remove(modlib)
    if modlib != PRELOADED:
        return
    stdlib = getattr(sys, "stdlib_module_names", ())
    for name in names:
        if name in sys.modules:
            continue
        if name.startswith("ansible.module_utils.") or name.split(".")[0] in stdlib:
            try:
                __import__(name)
            except BaseException:
                pass


def ours(name):
    return name == "ansible" or name.startswith("ansible.")


def forget():
    for name in [n for n in sys.modules if ours(n)]:
        del sys.modules[name]


def same_file(a, b):
    try:
        if os.stat(a).st_size != os.stat(b).st_size:
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


def adopt(modlib):
    # In a child: make the preloaded modules serve another payload of the same
    # ansible-core (their packages look in its directory first), or drop them when the
    # payload carries other versions of them.
    if PRELOADED is None:
        return
    modlib = os.path.expanduser(modlib) if modlib else None
    if modlib == PRELOADED:
        return
    basic = os.path.join("ansible", "module_utils", "basic.py")
    if modlib is None or not same_file(os.path.join(PRELOADED, basic), os.path.join(modlib, basic)):
        forget()
        return
    prefix = PRELOADED + os.sep
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None) or ""
        if f.startswith(prefix):
            other = os.path.join(modlib, f[len(prefix):])
            try:
                if os.stat(other).st_size != os.stat(f).st_size:
                    forget()
                    return
            except OSError:
                pass
    for name, mod in list(sys.modules.items()):
        paths = getattr(mod, "__path__", None)
        if ours(name) and paths is not None:
            for p in list(paths):
                if p.startswith(prefix):
                    mine = os.path.join(modlib, p[len(prefix):])
                    if os.path.isdir(mine) and mine not in paths:
                        paths.insert(0, mine)


def exit_code(e):
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(str(code) + "\n")
    except BaseException:
        pass
    return 1


def child(script, modlib, out, err, learned):
    # Runs in the forked child; never returns. The names of the modules the run
    # imported go to `learned`.
    code = 1
    before = set(sys.modules)
    try:
        os.close(PROTO_IN)
        os.close(PROTO_OUT)
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        adopt(modlib)
        import types
        main = types.ModuleType("__main__")
        main.__dict__["__builtins__"] = __builtins__
        sys.modules["__main__"] = main
        sys.argv = [""]
        try:
            exec(compile(script, "<stdin>", "exec"), main.__dict__)
            code = 0
        except SystemExit as e:
            code = exit_code(e)
        except BaseException:
            # As the interpreter reports it: from the script's own frames on.
            import traceback
            kind, value, tb = sys.exc_info()
            traceback.print_exception(kind, value, tb.tb_next)
            code = 1
        # What the interpreter does on its way out: wait for threads, run atexit.
        try:
            import threading
            threading._shutdown()
        except BaseException:
            pass
        try:
            import atexit
            atexit._run_exitfuncs()
        except BaseException:
            pass
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        try:
            learned.write("\n".join(set(sys.modules) - before).encode())
            learned.flush()
        except BaseException:
            pass
    finally:
        os._exit(code)


def run(script, modlib):
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    learned = tempfile.TemporaryFile()
    try:
        pid = os.fork()
        if pid == 0:
            child(script, modlib, out, err, learned)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            rc = -os.WTERMSIG(status)
        else:
            rc = os.WEXITSTATUS(status)
        for f in (out, err, learned):
            f.seek(0)
        names = learned.read().decode("utf-8", "replace").split("\n")
        return rc, out.read(), err.read(), names
    finally:
        out.close()
        err.close()
        learned.close()


def serve():
    while True:
        try:
            (n,) = struct.unpack(">I", read_exact(4))
        except EOFError:
            return
        req = json.loads(read_exact(n).decode("utf-8"))
        script = read_exact(req["script"])
        rc, stdout, stderr, names = run(script, req.get("modlib"))
        head = json.dumps({"rc": rc, "stdout": len(stdout), "stderr": len(stderr)}).encode()
        write_all(struct.pack(">I", len(head)) + head + stdout + stderr)
        if rc == 0:
            preload(req.get("modlib"), names)


serve()
