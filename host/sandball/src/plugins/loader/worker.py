"""sandball's worker for Python filter, test and lookup plugins.

The controller starts this with the Python that has ansible-core and talks to it in
JSON lines: one request on stdin, one answer on stdout. ansible-core's own plugin
loader finds each plugin (ansible.builtin, the playbook's and roles' plugin
directories, collections) and its Templar evaluates the one call, so a plugin runs
as under ansible-playbook. Values cross as JSON; strings that arrive are data, never
templates.
"""

import json
import os
import sys


class Missing(Exception):
    """No plugin of that kind and name."""


def main():
    # Answers go to the original stdout; whatever a plugin prints goes to stderr.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    prefix = json.loads(sys.argv[1]) if len(sys.argv) > 1 else []
    try:
        from ansible.plugins.loader import (
            add_all_plugin_dirs,
            filter_loader,
            init_plugin_loader,
            lookup_loader,
            test_loader,
        )
    except ImportError as ex:
        for _ in sys.stdin:
            answers.write(json.dumps({"unavailable": f"{sys.executable} has no ansible-core: {ex}"}) + "\n")
            answers.flush()
        return

    init_plugin_loader(prefix)
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template

    loader = DataLoader()
    added = set()
    loaders = {"filter": filter_loader, "test": test_loader, "lookup": lookup_loader}

    def has(kind, name):
        try:
            return loaders[kind].get(name) is not None
        except Exception:
            return False

    def evaluate(expr, variables):
        templar = Templar(loader=loader, variables=variables)
        return templar.evaluate_expression(trust_as_template(expr))

    def call(req):
        kind, name = req["kind"], req["name"]
        if kind == "has":
            return has(req["plugin"], name)
        if not has(kind, name):
            raise Missing(name)
        variables = dict(req.get("variables") or {})
        variables.update(__v=req.get("value"), __a=req.get("args") or [], __k=req.get("kwargs") or {})
        if kind == "filter":
            return evaluate(f"__v | {name}(*__a, **__k)", variables)
        if kind == "test":
            return evaluate(f"__v is {name}(*__a, **__k)", variables)
        return evaluate(f"query('{name}', *__a, **__k)", variables)

    for line in sys.stdin:
        req = json.loads(line)
        for d in req.get("dirs") or []:
            if d not in added:
                added.add(d)
                if os.path.isdir(d):
                    add_all_plugin_dirs(d)
        try:
            answer = json.dumps({"ok": plain(call(req))}, allow_nan=False)
        except Missing as ex:
            answer = json.dumps({"missing": str(ex)})
        except Exception as ex:
            answer = json.dumps({"error": message(ex)})
        answers.write(answer + "\n")
        answers.flush()


def message(ex):
    """The exception's message, with its causes as ansible-core adds them."""
    text = str(ex) or type(ex).__name__
    cause = ex.__cause__
    while cause is not None:
        more = str(cause)
        if more and more not in text:
            text += f": {more}"
        cause = cause.__cause__
    return text


def plain(value):
    """A plugin's result as plain JSON data (lazy containers resolved, tags dropped)."""
    from collections.abc import Mapping, Set

    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if isinstance(value, Mapping):
        return {str(plain(k)): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, Set)):
        return [plain(v) for v in value]
    undefined = getattr(value, "_fail_with_undefined_error", None)
    if undefined is not None:
        undefined()
    return str(value)


if __name__ == "__main__":
    main()
