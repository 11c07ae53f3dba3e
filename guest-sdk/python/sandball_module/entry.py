"""The component's entry point (``wasi:cli/run``): reads the arguments, runs the
module's ``main`` and turns its end into the exit code."""

import json
import sys
import traceback

from componentize_py_types import Err
from sandball_module import basic


def run(main, manifest):
    """Runs ``main`` (the module's own) with the task's arguments from stdin, as one
    ``wasi:cli/run`` call; exit code 1 when it failed. ``manifest`` is the manifest's
    JSON text."""
    basic._state["manifest"] = manifest
    basic._state["stdin"] = sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
    try:
        main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if code != 0:
            raise Err(None)
        return
    except Exception as e:
        trace = traceback.format_exc()
        sys.stderr.write(trace)
        sys.stdout.write(json.dumps({"failed": True, "msg": "MODULE FAILURE: %s" % e, "exception": trace}) + "\n")
        sys.stdout.flush()
        raise Err(None)
    sys.stdout.write(json.dumps({"failed": True, "msg": "the module ended without exit_json or fail_json"}) + "\n")
    sys.stdout.flush()
    raise Err(None)
