"""sandball's worker for Python plugins: filters, tests, lookups and action plugins.

The controller starts this with the Python that has ansible-core and talks to it in
JSON lines: one request on stdin, one answer on stdout. ansible-core's own plugin
loader finds each plugin (ansible.builtin, the playbook's and roles' plugin
directories, collections) and its Templar evaluates the one call, so a plugin runs
as under ansible-playbook. Values cross as JSON; strings that arrive are data, never
templates.

An action plugin's run may call back before its answer: each module it runs and each
command it sends over the connection is a `{"call": ...}` line out, answered by one
line in, so the controller runs them on the task's target as it runs any module.
"""

import json
import os
import sys


class Missing(Exception):
    """No plugin of that kind and name."""


class LoadFailed(Exception):
    """The plugin file of that name fails to load (ansible-core's words)."""


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
    actions = Actions(loader, answers)

    def has(kind, name):
        # As ansible-core's templating reads the loader: a KeyError is no filter or
        # test of that name (an unknown collection); any other exception, as for any
        # lookup, is a plugin that fails to load.
        try:
            return loaders[kind].get(name) is not None
        except Exception as ex:
            if isinstance(ex, KeyError) and kind != "lookup":
                return False
            raise LoadFailed(f"The {kind} plugin {name!r} failed to load: {message(ex)}") from None

    def local_names(kind):
        # The short names that plugin files outside ansible-core define: those take
        # the place of ansible-core's own of that name.
        plugins = loaders[kind]
        try:
            plugins._ensure_non_collection_wrappers()
            wrappers = plugins._cached_non_collection_wrappers
        except Exception:
            return []
        return sorted(
            name
            for name, wrapper in wrappers.items()
            if "." not in name and not getattr(wrapper, "ansible_name", "").startswith("ansible.builtin.")
        )

    def evaluate(expr, variables):
        templar = Templar(loader=loader, variables=variables)
        return templar.evaluate_expression(trust_as_template(expr))

    def call(req):
        kind, name = req["kind"], req["name"]
        if kind == "has":
            return has(req["plugin"], name)
        if kind == "local_names":
            return {k: local_names(k) for k in ("filter", "test")}
        if kind == "action_for":
            return actions.handler(name)
        if kind == "action_traits":
            return actions.traits(name)
        if kind == "defaults_name":
            return actions.defaults_name(name, req.get("as"))
        if kind == "action":
            return actions.run(req)
        if not has(kind, name):
            raise Missing(name)
        variables = dict(req.get("variables") or {})
        variables.update(__v=req.get("value"), __a=req.get("args") or [], __k=req.get("kwargs") or {})
        if kind == "filter":
            return evaluate(f"__v | {name}(*__a, **__k)", variables)
        if kind == "test":
            return evaluate(f"__v is {name}(*__a, **__k)", variables)
        if req.get("undefined"):
            return lookup_with_markers(name, variables, req["undefined"])
        return evaluate(f"query('{name}', *__a, **__k)", variables)

    def lookup_with_markers(name, variables, undefined):
        # The terms that were undefined are ansible-core's undefined markers: a plugin
        # that accepts them (`accept_args_markers`) receives them, others are not run
        # and give the first one back, as under ansible-playbook. The markers in the
        # results come back as their paths (the values there are null).
        from ansible._internal._templating._jinja_common import JinjaCallContext, Marker, UndefinedMarker
        from ansible._internal._templating._jinja_plugins import _DirectCall

        for place in undefined:
            *inner, last = place["path"]
            container = variables["__a"]
            for step in inner:
                container = container[step]
            container[last] = UndefinedMarker(name=place["name"], _no_template_source=True)
        found = []

        def capture(results):
            # Read where markers are allowed, before the expression's result is checked.
            with JinjaCallContext(accept_lazy_markers=True):
                found.append(marked(results, [], Marker))

        variables["__capture"] = _DirectCall.mark(capture)
        evaluate(f"__capture(query('{name}', *__a, **__k))", variables)
        value, paths = found[0]
        return {"results": value, "undefined": paths}

    while line := sys.stdin.readline():
        req = json.loads(line)
        for d in req.get("dirs") or []:
            if d not in added:
                added.add(d)
                if os.path.isdir(d):
                    add_all_plugin_dirs(d)
        try:
            answer = call(req)
            if req.get("undefined"):
                answer = {"ok": answer["results"], "undefined": answer["undefined"]}
            else:
                answer = {"ok": plain(answer)}
            answer = json.dumps(answer, allow_nan=False)
        except Missing as ex:
            answer = json.dumps({"missing": str(ex)})
        except Exception as ex:
            answer = json.dumps({"error": message(ex)})
        answers.write(answer + "\n")
        answers.flush()


class Actions:
    """Action plugins, run as ansible-core's task executor runs them, with their module
    runs and connection commands sent back to the controller."""

    def __init__(self, loader, answers):
        self.loader = loader
        self.answers = answers
        self.patched = False

    def handler(self, name):
        """The action plugin ansible-core would run for a task whose action is `name`,
        or None (the module alone)."""
        from ansible.plugins.loader import action_loader, module_loader

        try:
            module = module_loader.find_plugin_with_context(name)
            if module.resolved and module.action_plugin:
                return module.action_plugin
            if action_loader.has_plugin(name):
                return name
        except Exception:
            pass
        return None

    def defaults_name(self, name, role):
        """The full name under which `module_defaults` know action `name`, redirects
        followed, or None. For an entry of `module_defaults` or of an action group:
        its module, unless that names no action plugin and an action of that name
        exists, else its action; a deprecated name is shown as such for an entry of
        `module_defaults` only. For a task's action: its module when the module names
        its action plugin, else its action, else its module."""
        from ansible.plugins.loader import action_loader, module_loader

        quiet = role != "entry"
        module = module_loader.find_plugin_with_context(name, ignore_deprecated=quiet)
        if role != "action":
            found = module
            if module.resolved and not module.action_plugin:
                action = action_loader.find_plugin_with_context(name, ignore_deprecated=quiet)
                if action.resolved:
                    found = action
            elif not module.resolved:
                found = action_loader.find_plugin_with_context(name, ignore_deprecated=quiet)
        elif module.resolved and module.action_plugin:
            found = module
        else:
            found = action_loader.find_plugin_with_context(name, ignore_deprecated=quiet)
            if not found.resolved:
                found = module
        return found.resolved_fqcn if found.resolved else None

    def traits(self, handler):
        """What action plugin `handler`'s class says of itself: whether it takes words
        that are not key=value arguments, and whether it can run in the background."""
        from ansible.plugins.loader import action_loader

        plugin = action_loader.get(handler, class_only=True)
        return {
            "raw_params": bool(getattr(plugin, "supports_raw_params", False)),
            "async": bool(getattr(plugin, "_supports_async", False)),
        }

    def call(self, what, **fields):
        """Asks the controller for `what` and waits for its answer."""
        self.answers.write(json.dumps(dict(call=what, **fields), allow_nan=False) + "\n")
        self.answers.flush()
        line = sys.stdin.readline()
        if not line:
            raise SystemExit(0)
        return json.loads(line)

    def patch(self):
        """Routes ActionBase's module runs to the controller (once)."""
        if self.patched:
            return
        self.patched = True
        from ansible.plugins.action import ActionBase

        actions = self

        def _execute_module(self, module_name=None, module_args=None, tmp=None, task_vars=None,
                            persist_files=False, delete_remote_tmp=None, wrap_async=False,
                            ignore_unknown_opts=False):
            if module_name is None:
                module_name = self._task.action
            if module_args is None:
                module_args = self._task.args
            answer = actions.call("module", name=module_name, args=plain(module_args),
                                  wrap_async=bool(wrap_async))
            return answer.get("result") or {}

        ActionBase._execute_module = _execute_module

    def run(self, req):
        """Runs action plugin `req["handler"]` for a task of action `req["name"]`."""
        from ansible._internal._errors import _error_utils
        from ansible.errors import AnsibleTaskError
        from ansible.playbook.play_context import PlayContext
        from ansible.playbook.task import Task
        from ansible.plugins.loader import action_loader
        from ansible.template import Templar

        self.patch()
        spec = req.get("task") or {}
        task = Task()
        task.action = req["name"]
        task.args = dict(req.get("args") or {})
        context = PlayContext()
        task.check_mode = context.check_mode = bool(spec.get("check_mode"))
        task.diff = context.diff = bool(spec.get("diff"))
        task.async_val = int(spec.get("async_val") or 0)
        task.poll = int(spec.get("poll") or 0)
        variables = dict(req.get("variables") or {})
        handler = action_loader.get(
            req.get("handler") or req["name"],
            task=task,
            connection=Connection(self, variables.get("ansible_shell_type")),
            play_context=context,
            loader=self.loader,
            templar=Templar(loader=self.loader, variables=variables),
            shared_loader_obj=None,
        )
        if handler is None:
            raise Missing(req["name"])
        try:
            try:
                result = handler.run(task_vars=variables)
            finally:
                handler.cleanup()
        except Exception as ex:
            # As the task executor words it: "Task failed: " and the plugin's message.
            try:
                raise AnsibleTaskError() from ex
            except AnsibleTaskError as task_error:
                result = _error_utils.result_dict_from_exception(task_error, accept_result_contribution=True)
            if "exception" in result:
                import traceback

                result["exception"] = "".join(traceback.format_exception(ex))
        result.setdefault("changed", False)
        return result


class Connection:
    """The task's connection as an action plugin sees it: its commands run on the
    controller's connection to the target, as the task's become user; its shell is
    the one `ansible_shell_type` names, else `sh`, as ansible-core picks it."""

    transport = "sandball"
    become = None
    allow_executable = True
    has_pipelining = True
    supports_persistence = False
    force_persistence = False
    _connected = True

    def __init__(self, actions, shell_type=None):
        from ansible.plugins.loader import shell_loader

        self._actions = actions
        self._shell = shell_loader.get(shell_type or "sh")
        if self._shell is None:
            from ansible.errors import AnsibleError

            raise AnsibleError(f"Invalid shell type specified ({shell_type}), or the plugin for that shell type is missing.")

    def get_option(self, name):
        raise KeyError(name)

    def set_option(self, name, value):
        pass

    def exec_command(self, cmd, in_data=None, sudoable=True):
        import base64

        if isinstance(in_data, str):
            in_data = in_data.encode("utf-8", "surrogateescape")
        answer = self._actions.call(
            "exec",
            cmd=cmd,
            stdin=base64.b64encode(in_data).decode() if in_data is not None else None,
        )
        if "error" in answer:
            from ansible.errors import AnsibleConnectionFailure

            raise AnsibleConnectionFailure(answer["error"])
        return (
            answer.get("rc", 0),
            base64.b64decode(answer.get("stdout") or ""),
            base64.b64decode(answer.get("stderr") or ""),
        )

    def put_file(self, in_path, out_path):
        import shlex

        with open(in_path, "rb") as f:
            data = f.read()
        rc, _, err = self.exec_command("cat > " + shlex.quote(out_path), in_data=data)
        if rc != 0:
            from ansible.errors import AnsibleError

            raise AnsibleError(f"failed to transfer file to {out_path}: {err.decode(errors='replace')}")

    def fetch_file(self, in_path, out_path):
        import shlex

        rc, out, err = self.exec_command("cat " + shlex.quote(in_path))
        if rc != 0:
            from ansible.errors import AnsibleError

            raise AnsibleError(f"failed to fetch {in_path}: {err.decode(errors='replace')}")
        with open(out_path, "wb") as f:
            f.write(out)

    def reset(self):
        pass

    def close(self):
        pass


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


def marked(value, path, marker):
    """`value` as plain JSON data with null where a `marker` instance sits, and the paths
    (list indexes, mapping keys) of those places."""
    from collections.abc import Mapping, Set

    if isinstance(value, marker):
        return None, [path]
    if isinstance(value, Mapping):
        out, paths = {}, []
        for k, v in value.items():
            out[str(plain(k))], more = marked(v, path + [str(plain(k))], marker)
            paths += more
        return out, paths
    if isinstance(value, (list, tuple, Set)):
        out, paths = [], []
        for i, v in enumerate(value):
            item, more = marked(v, path + [i], marker)
            out.append(item)
            paths += more
        return out, paths
    return plain(value), []


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
