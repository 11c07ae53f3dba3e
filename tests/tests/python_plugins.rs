//! Python filter, test, lookup and action plugins — a playbook's `filter_plugins/`,
//! `test_plugins/`, `lookup_plugins/` and `action_plugins/`, a role's, a collection's in
//! the playbook's `collections/`, and ansible-core's own — run as ansible-playbook runs
//! them, compared with it line for line; a local filter, test or lookup of a name
//! sandball carries itself takes the place of sandball's, but for its
//! `ansible.builtin.` name.

use sandball_e2e::Sandbox;

const FILTERS: &str = r#"
def shout(value, times=1, suffix="!"):
    return (str(value).upper() + suffix) * times


def pairs(value):
    return sorted(value.items())


def boom(value):
    raise ValueError("boom on %r" % (value,))


def flatten(value, levels=None):
    return "local flatten of %d" % len(value)


class FilterModule(object):
    def filters(self):
        return {"shout": shout, "pairs": pairs, "boom": boom, "flatten": flatten}
"#;

const TESTS: &str = r#"
def multiple(value, base=2):
    return value % base == 0


def even(value):
    return value == 3


class TestModule(object):
    def tests(self):
        return {"multiple_of": multiple, "even": even}
"#;

const LOOKUP: &str = r#"
from ansible.plugins.lookup import LookupBase


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        return ["%s%s%s" % (kwargs.get("prefix", ""), t, variables["mark"]) for t in terms]
"#;

/// A lookup of a name sandball carries itself.
const ENV_LOOKUP: &str = r#"
from ansible.plugins.lookup import LookupBase


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        return ["local env of %s" % t for t in terms]
"#;

const ROLE_FILTERS: &str = r#"
class FilterModule(object):
    def filters(self):
        return {"role_twice": lambda v: [v, v]}
"#;

const COLLECTION_FILTERS: &str = r#"
class FilterModule(object):
    def filters(self):
        return {"wrap": lambda v, left="<", right=">": left + str(v) + right}
"#;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    mark: "?"
  roles:
    - doubler
  tasks:
    - name: playbook filters and tests
      debug:
        msg: "{{ 'hi' | shout }} {{ 'x' | shout(2, suffix='.') }} {{ {'b': 2, 'a': 1} | pairs }} {{ 4 is multiple_of }} {{ 9 is multiple_of 3 }} {{ 5 is not multiple_of(5) }}"
    - name: a lookup plugin, in a template and as a loop
      debug:
        msg: "{{ lookup('tag', 'a', 'b') }} {{ query('tag', 'c', prefix='>') }} {{ item }}"
      with_tag: [p]
    - name: a collection's filter by its full name, and ansible-core's own
      debug:
        msg: "{{ 3 | demo.tools.wrap }} {{ 3 | demo.tools.wrap(left='[', right=']') }} {{ [[1], [2, [3]]] | ansible.builtin.flatten }}"
    - name: local plugins take the place of sandball's own of their names
      debug:
        msg: "{{ [[1], [2]] | flatten }}, {{ [[1], [2]] | ansible.legacy.flatten }}, {{ [[1], [2]] | ansible.builtin.flatten }}, {{ [[[1]]] | map('flatten') | list }}, {{ 3 is even }} {{ 3 is ansible.builtin.even }} {{ [2, 3] | select('even') | list }}"
    - name: a local lookup takes the place of sandball's own of its name
      debug:
        msg: "{{ lookup('env', 'X') }}, {{ lookup('ansible.legacy.env', 'Y') }}, {{ lookup('ansible.builtin.env', 'SANDBALL_NOT_SET', default='builtin') }}, {{ item }}"
      with_env: [Z]
    - name: a collection's filter named in map
      debug:
        msg: "{{ [1, 2] | map('demo.tools.wrap') | list }}"
    - name: a failing filter
      debug:
        msg: "{{ 'x' | boom }}"
      ignore_errors: true
    - name: a filter nobody has
      debug:
        msg: "{{ 'x' | nosuch }}"
      ignore_errors: true
"#;

/// A playbook directory with plugins beside it, in a role and in a collection.
fn write_playbook(sb: &Sandbox) -> std::path::PathBuf {
    sb.write("filter_plugins/mine.py", FILTERS);
    sb.write("test_plugins/mine.py", TESTS);
    sb.write("lookup_plugins/tag.py", LOOKUP);
    sb.write("lookup_plugins/env.py", ENV_LOOKUP);
    sb.write(
        "roles/doubler/tasks/main.yml",
        "- debug: {msg: \"{{ 'r' | role_twice }}\"}\n",
    );
    sb.write("roles/doubler/filter_plugins/twice.py", ROLE_FILTERS);
    sb.write(
        "collections/ansible_collections/demo/tools/plugins/filter/wrap.py",
        COLLECTION_FILTERS,
    );
    sb.write(
        "collections/ansible_collections/demo/tools/galaxy.yml",
        "namespace: demo\nname: tools\nversion: 1.0.0\n",
    );
    sb.write("play.yml", PLAY)
}

#[test]
fn python_plugins_run_as_under_ansible_playbook() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    let pb = write_playbook(&sb);
    let work = sb.dir("work");
    let out = sb.play_with_core(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"msg\": \"HI! X.X. [['a', 1], ['b', 2]] True True False\"")
        .assert_stdout_has("\"msg\": \"a?,b? ['>c?'] p?\"")
        .assert_stdout_has("\"msg\": \"<3> [3] [1, 2, 3]\"")
        .assert_stdout_has("\"msg\": \"local flatten of 2, local flatten of 2, [1, 2], ['local flatten of 1'], True False [3]\"")
        .assert_stdout_has("\"msg\": \"local env of X, local env of Y, builtin, local env of Z\"")
        .assert_stdout_has("The filter plugin 'boom' failed: boom on 'x'")
        .assert_stdout_has("No filter named 'nosuch'");
    assert_eq!(out.host("alpha").ignored, 2, "{out}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs);
        for task in [
            "playbook filters and tests",
            "a lookup plugin, in a template and as a loop",
            "a collection's filter by its full name, and ansible-core's own",
            "local plugins take the place of sandball's own of their names",
            "a local lookup takes the place of sandball's own of its name",
            "a collection's filter named in map",
        ] {
            out.assert_same_results_as(&theirs, &[task]);
        }
    }
}

#[test]
fn a_loop_of_no_lookup_is_refused_as_ansible_refuses_it() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: {msg: \"{{ item }}\"}\n      with_nosuch: [1]\n",
    );
    let work = sb.dir("work");
    let out = sb.play_with_core(&pb, &work, &[]).run();
    out.assert_no_panic()
        .assert_code(4)
        .assert_stderr_has("'with_nosuch' is not a valid attribute for a Task");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        theirs.assert_code(4);
        assert!(
            theirs
                .stderr
                .contains("'with_nosuch' is not a valid attribute for a Task"),
            "{theirs}"
        );
    }
}

/// An action plugin that runs a module and a command through the task's target.
const ECHO_ACTION: &str = r#"
from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        path = self._task.args.get("path", "/")
        stat = self._execute_module("ansible.legacy.stat", dict(path=path), task_vars=task_vars)
        command = self._low_level_execute_command("printf '%s' " + self._task.args.get("word", "none"))
        result.update(
            args=self._task.args,
            exists=stat["stat"]["exists"],
            said=command["stdout"],
            rc=command["rc"],
            check=self._task.check_mode,
            mark=task_vars["mark"],
        )
        return result
"#;

/// Action plugins that fail, hide their result, and take the place of `debug`.
const OTHER_ACTIONS: &[(&str, &str)] = &[
    (
        "action_plugins/broken.py",
        "from ansible.plugins.action import ActionBase\n\n\nclass ActionModule(ActionBase):\n    def run(self, tmp=None, task_vars=None):\n        raise Exception(\"broken on purpose\")\n",
    ),
    (
        "action_plugins/secret.py",
        "from ansible.plugins.action import ActionBase\n\n\nclass ActionModule(ActionBase):\n    def run(self, tmp=None, task_vars=None):\n        return dict(changed=True, msg=\"SECRET-VALUE\", _ansible_no_log=\"yes please\")\n",
    ),
    (
        "action_plugins/debug.py",
        "from ansible.plugins.action import ActionBase\n\n\nclass ActionModule(ActionBase):\n    def run(self, tmp=None, task_vars=None):\n        return dict(msg=\"overridden \" + str(self._task.args.get(\"msg\")))\n",
    ),
    (
        "roles/acting/action_plugins/role_action.py",
        "from ansible.plugins.action import ActionBase\n\n\nclass ActionModule(ActionBase):\n    def run(self, tmp=None, task_vars=None):\n        return dict(changed=False, from_role=sorted(self._task.args))\n",
    ),
    (
        "action_plugins/background.py",
        "from ansible.plugins.action import ActionBase\n\n\nclass ActionModule(ActionBase):\n    _supports_async = True\n\n    def run(self, tmp=None, task_vars=None):\n        result = super().run(tmp, task_vars)\n        wrap = self._task.args.get(\"wrap\") and self._task.async_val\n        result.update(self._execute_module(\"ansible.legacy.command\", dict(_raw_params=\"echo in the background\"), task_vars=task_vars, wrap_async=wrap))\n        return result\n",
    ),
    (
        "roles/acting/tasks/main.yml",
        "- role_action: {b: 1, a: 2}\n",
    ),
    (
        "collections/ansible_collections/demo/tools/plugins/action/hello.py",
        "from ansible.plugins.action import ActionBase\n\n\nclass ActionModule(ActionBase):\n    def run(self, tmp=None, task_vars=None):\n        return dict(changed=False, hello=self._task.args.get(\"to\"))\n",
    ),
    (
        "collections/ansible_collections/demo/tools/galaxy.yml",
        "namespace: demo\nname: tools\nversion: 1.0.0\n",
    ),
];

const ACTION_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    mark: "?"
  roles:
    - acting
  tasks:
    - name: a module and a command through the target
      echo: {path: /etc, word: hello}
      register: echoed
    - name: in check mode
      echo: {path: /no/such/path}
      check_mode: true
    - name: a collection's action by its full name
      demo.tools.hello: {to: world}
    - name: a local debug takes the place of ansible-core's
      debug: {msg: hi}
    - name: ansible.builtin.debug is still ansible-core's
      ansible.builtin.debug: {msg: hi}
    - name: an action that raises
      broken:
      ignore_errors: true
    - name: an action that hides its result
      secret:
      register: hidden
    - name: words an action does not take
      echo: some words
      ignore_errors: true
    - name: what was registered
      ansible.builtin.debug: {msg: "{{ echoed.said }} {{ hidden.msg }}"}
    - name: async, which an action whose class does not say it supports it refuses
      echo: {path: /etc}
      async: 10
      poll: 1
      ignore_errors: true
    - name: async, a module run the plugin wraps
      background: {wrap: true}
      async: 10
      poll: 1
      register: job
    - name: async, but no module run the plugin wraps
      background: {wrap: false}
      async: 10
      poll: 1
      ignore_errors: true
    - name: the job's result
      ansible.builtin.debug: {msg: "{{ job.stdout }} {{ job.finished }}"}
"#;

#[test]
fn python_action_plugins_run_as_under_ansible_playbook() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    sb.write("action_plugins/echo.py", ECHO_ACTION);
    for (path, text) in OTHER_ACTIONS {
        sb.write(path, text);
    }
    let pb = sb.write("play.yml", ACTION_PLAY);
    let work = sb.dir("work");
    let out = sb.play_with_core(&pb, &work, &["-v"]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"said\": \"hello\"")
        .assert_stdout_has("\"from_role\": [")
        .assert_stdout_has("\"hello\": \"world\"")
        .assert_stdout_has("\"msg\": \"overridden hi\"")
        .assert_stdout_has("Task failed: broken on purpose")
        .assert_stdout_has("Action 'echo' does not support raw params.")
        .assert_stdout_has("\"msg\": \"hello SECRET-VALUE\"")
        .assert_stdout_has("This action (echo) does not support async.")
        .assert_stdout_has("ASYNC FAILED on alpha: jid=None")
        .assert_stdout_has("No job id was returned by the async task")
        .assert_stdout_has("\"msg\": \"in the background True\"");
    assert_eq!(
        out.stdout.matches("SECRET-VALUE").count(),
        1,
        "the hidden result is shown: {out}"
    );
    assert_eq!(out.host("alpha").ignored, 4, "{out}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &["-v"]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs);
        out.assert_same_results_as(
            &theirs,
            &[
                "a module and a command through the target",
                "in check mode",
                "a collection's action by its full name",
                "a local debug takes the place of ansible-core's",
                "ansible.builtin.debug is still ansible-core's",
                "an action that raises",
                "an action that hides its result",
                "words an action does not take",
                "what was registered",
                "async, which an action whose class does not say it supports it refuses",
                "async, but no module run the plugin wraps",
                "the job's result",
            ],
        );
    }
}

#[test]
fn an_action_plugins_connection_has_the_shell_ansible_shell_type_names_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    sb.write(
        "action_plugins/shell_family.py",
        "from ansible.plugins.action import ActionBase\n\n\nclass ActionModule(ActionBase):\n    def run(self, tmp=None, task_vars=None):\n        result = super().run(tmp, task_vars)\n        result['shell'] = self._connection._shell.SHELL_FAMILY\n        return result\n",
    );
    let pb = sb.write(
        "play.yml",
        r#"- hosts: all
  gather_facts: false
  tasks:
    - name: the default shell
      shell_family:
    - name: a shell named by a templated variable
      shell_family:
      vars:
        ansible_shell_type: "{{ 'power' ~ 'shell' }}"
"#,
    );
    let work = sb.dir("work");
    let out = sb.play_with_core(&pb, &work, &["-v"]).run();
    out.assert_no_panic().assert_code(0);
    assert!(
        out.task_lines("the default shell")
            .iter()
            .any(|l| l.contains("\"shell\": \"sh\"")),
        "{out}"
    );
    assert!(
        out.task_lines("a shell named by a templated variable")
            .iter()
            .any(|l| l.contains("\"shell\": \"powershell\"")),
        "{out}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &["-v"]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs);
        out.assert_same_results_as(
            &theirs,
            &["the default shell", "a shell named by a templated variable"],
        );
    }
}
