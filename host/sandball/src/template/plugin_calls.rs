//! Filters and tests that are Python plugins (a collection's `ns.coll.name`, a
//! playbook's `filter_plugins/`, ansible-core's own that sandball lacks).
//!
//! The engine knows only the filters and tests registered with it, so the rewrite pass
//! of `percent.rs` turns `value | name(args)` into `value | __sandball_filter("name",
//! args)` (and `value is name` into `value is __sandball_test("name")`) wherever
//! sandball has no filter or test of that name ([`native`]). These two hand the call
//! to `plugins::loader`, which runs the plugin in ansible-core; a name no plugin has
//! is the engine's own unknown-filter (or test) error. A plugin named as a string
//! (`map('ns.coll.f')`, `select('ns.coll.t')`, `selectattr('a', 'ns.coll.t')`…) goes
//! the same way ([`by_name`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, PoisonError};

use minijinja::value::{Kwargs, Rest, ValueOrKwargs};
use minijinja::{Environment, Error, ErrorKind, State, Value};

use crate::plugins::loader::{self, Kind, PluginError};
use crate::template::convert::{ensure_defined, from_json, to_json};
use crate::template::undefined::Plugins;
use crate::template::undefined::undefined_in;

/// The filter a rewritten filter call names.
pub(crate) const FILTER: &str = "__sandball_filter";
/// The test a rewritten test names.
pub(crate) const TEST: &str = "__sandball_test";

/// Registers [`FILTER`] and [`TEST`], and Jinja's `select`, `reject`, `selectattr`
/// and `rejectattr` taking tests that are plugins.
pub(crate) fn register(env: &mut Plugins<'_>) {
    env.taking_undefined().add_filter(FILTER, filter);
    env.taking_undefined().add_test(TEST, test);
    env.add_filter("select", select);
    env.add_filter("reject", reject);
    env.add_filter("selectattr", selectattr);
    env.add_filter("rejectattr", rejectattr);
}

/// Jinja's filter `$name` (`select`, `selectattr`…), its test possibly a plugin.
macro_rules! taking_a_test {
    ($name:ident $(, $attr:ident)?) => {
        fn $name(
            state: &mut State,
            value: Value,
            $($attr: Cow<'_, str>,)?
            test: Option<Cow<'_, str>>,
            args: Rest<ValueOrKwargs>,
        ) -> Result<Value, Error> {
            let (test, args) = by_name(Kind::Test, test, args);
            minijinja::filters::$name(state, value, $($attr,)? test, args).map(Value::from)
        }
    };
}

taking_a_test!(select);
taking_a_test!(reject);
taking_a_test!(selectattr, attr);
taking_a_test!(rejectattr, attr);

/// The filter (or test) a filter names by a string (`map('name', args…)`), and its
/// arguments: as given when sandball has that one, else [`FILTER`] (or [`TEST`]) with
/// the plugin's name as the first argument.
pub(crate) fn by_name(
    kind: Kind,
    name: Option<Cow<'_, str>>,
    args: Rest<ValueOrKwargs>,
) -> (Option<Cow<'_, str>>, Rest<ValueOrKwargs>) {
    let Some(name) = name else {
        return (None, args);
    };
    if native_name(kind, &name) {
        return (Some(name), args);
    }
    let mut all = vec![Value::from(name.as_ref()).into()];
    all.extend(args.0);
    (Some(Cow::Borrowed(dispatcher(kind))), Rest(all))
}

/// The dispatcher that calls a plugin of this kind.
pub(crate) fn dispatcher(kind: Kind) -> &'static str {
    match kind {
        Kind::Test => TEST,
        _ => FILTER,
    }
}

/// Whether sandball runs the filter (or test) named `name` as written itself
/// (whitespace around its dots allowed, a builtin prefix read as the short name): it
/// has one of that name, and for a short or `ansible.legacy.` name no local plugin
/// file defines it (that one takes the place of ansible-core's and sandball's, as in
/// ansible-core; an `ansible.builtin.` name is always the builtin one).
pub(crate) fn native_name(kind: Kind, name: &str) -> bool {
    let name: Cow<'_, str> = if name.contains(char::is_whitespace) {
        Cow::Owned(name.chars().filter(|c| !c.is_whitespace()).collect())
    } else {
        Cow::Borrowed(name)
    };
    if let Some(short) = name.strip_prefix(super::percent::BUILTIN) {
        return native(kind, short);
    }
    // A short or `ansible.legacy.` name is a local plugin's first.
    let short = name.strip_prefix(super::percent::LEGACY).unwrap_or(&name);
    native(kind, short) && !loader::defined_locally(kind, short)
}

/// Whether sandball has a filter (or test) of this name itself; asked once per name.
fn native(kind: Kind, name: &str) -> bool {
    static NATIVE: LazyLock<Environment<'static>> =
        LazyLock::new(super::environment::native_environment);
    // The answers so far: filters, tests.
    static KNOWN: [LazyLock<Mutex<HashMap<String, bool>>>; 2] = [
        LazyLock::new(Default::default),
        LazyLock::new(Default::default),
    ];
    let known = &KNOWN[usize::from(kind == Kind::Test)];
    if let Some(has) = known
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(name)
    {
        return *has;
    }
    // The engine looks a filter (or test) up when it applies it: applying it to `0`
    // fails as unknown exactly when there is none.
    let (probe, unknown) = match kind {
        Kind::Test => (format!("{{{{ 0 is {name} }}}}"), ErrorKind::UnknownTest),
        _ => (format!("{{{{ 0 | {name} }}}}"), ErrorKind::UnknownFilter),
    };
    let has = NATIVE
        .render_str(&probe, ())
        .map_or_else(|e| e.kind() != unknown, |_| true);
    known
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(name.to_string(), has);
    has
}

/// `value | __sandball_filter("name", args…)`: the plugin's result; an undefined
/// argument is the result (see `template/undefined.rs`).
fn filter(value: Value, name: String, args: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    if let Some(undefined) = undefined_argument(Kind::Filter, &name, &value, &args, &kwargs)? {
        return Ok(undefined);
    }
    call(Kind::Filter, &value, &name, &args, &kwargs).map(|v| from_json(&v))
}

/// `value is __sandball_test("name", args…)`: the plugin's answer; an undefined argument
/// is the undefined error.
fn test(
    state: &State,
    value: Value,
    name: String,
    args: Rest<Value>,
    kwargs: Kwargs,
) -> Result<bool, Error> {
    if let Some(undefined) = undefined_argument(Kind::Test, &name, &value, &args, &kwargs)? {
        ensure_defined(state, &undefined)?;
    }
    call(Kind::Test, &value, &name, &args, &kwargs).map(|v| v.as_bool().unwrap_or(false))
}

/// The first undefined value among a plugin's arguments, once it is known that there is
/// such a plugin: a name no plugin has is the unknown filter (or test) all the same.
fn undefined_argument(
    kind: Kind,
    name: &str,
    value: &Value,
    args: &[Value],
    kwargs: &Kwargs,
) -> Result<Option<Value>, Error> {
    let found = if value.is_undefined() {
        Some(value.clone())
    } else {
        undefined_in(args, kwargs)
    };
    match found {
        Some(_)
            if matches!(
                loader::has(kind, name),
                Ok(false) | Err(PluginError::Missing { .. })
            ) =>
        {
            Err(unknown(kind, name))
        }
        found => Ok(found),
    }
}

/// The engine's error for a filter (or test) that no plugin is.
fn unknown(kind: Kind, name: &str) -> Error {
    let (what, unknown) = match kind {
        Kind::Test => ("test", ErrorKind::UnknownTest),
        _ => ("filter", ErrorKind::UnknownFilter),
    };
    Error::new(unknown, format!("{what} {name} is unknown"))
}

/// Runs the plugin on JSON forms of the value and arguments.
fn call(
    kind: Kind,
    value: &Value,
    name: &str,
    args: &[Value],
    kwargs: &Kwargs,
) -> Result<serde_json::Value, Error> {
    let positional = args.iter().map(to_json).collect::<Result<Vec<_>, _>>()?;
    let mut named = serde_json::Map::new();
    for key in kwargs.args() {
        named.insert(key.to_string(), to_json(&kwargs.get::<Value>(key)?)?);
    }
    loader::call(kind, name, &to_json(value)?, &positional, &named).map_err(|e| match e {
        PluginError::Missing { .. } => {
            tracing::debug!("{e}");
            unknown(kind, name)
        }
        PluginError::Failed(message) => Error::new(ErrorKind::InvalidOperation, message),
    })
}
