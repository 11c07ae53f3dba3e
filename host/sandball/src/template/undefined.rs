//! Undefined values through filters, tests and functions, as ansible-core 2.19 passes
//! them: a plugin given an undefined argument is not run, its result is that undefined
//! value, so that a later `default` can replace it (`{{ nope | lower | default('x') }}`
//! is `x`) and `is defined` can test it; printing it, or using it in an operation, is
//! still the error naming the variable. A test given one fails with that error.
//!
//! [`Plugins`] registers every filter, test and function of the environment this way,
//! minijinja's own included; the few that take undefined values themselves (`default`,
//! `mandatory`, `ternary`, `type_debug`, the `defined` tests, `lookup`'s `env`…) are
//! registered as they are. An undefined value a filter meets inside a list or mapping
//! it was given (`[1, nope] | join`), or puts in the list it makes (`[nope] | list`),
//! is its result too, as ansible-core's lazy containers give it.

use std::borrow::Cow;

use indexmap::IndexMap;
use minijinja::functions::Function;
use minijinja::value::{FunctionArgs, FunctionResult, Kwargs, Rest, ValueOrKwargs};
use minijinja::{Environment, Error, ErrorKind, State, Value};

use crate::template::convert::ensure_defined;

/// How deep into the lists and mappings a filter was given an undefined value is looked
/// for when the filter failed on one.
const DEPTH: usize = 4;

/// Registers filters, tests and functions on an environment with Ansible's handling of
/// undefined arguments (see the module's doc).
pub(crate) struct Plugins<'e> {
    env: &'e mut Environment<'static>,
}

/// A method of [`Plugins`] registering with the environment's `$register` a plugin
/// whose calls go through `$call` (which sees the undefined arguments first).
macro_rules! registration {
    ($(#[$doc:meta])* $method:ident, $register:ident, $call:ident) => {
        $(#[$doc])*
        pub(crate) fn $method<N, F, Rv, Args>(&mut self, name: N, f: F)
        where
            N: Into<Cow<'static, str>>,
            F: Function<Rv, Args>,
            Rv: FunctionResult,
            Args: for<'a> FunctionArgs<'a>,
        {
            let inner = Value::from_function(f);
            self.env.$register(
                name,
                move |state: &mut State<'_, '_>, args: Rest<ValueOrKwargs>| {
                    $call(&inner, state, &args.into_values())
                },
            );
        }
    };
}

impl<'e> Plugins<'e> {
    /// Registers minijinja's own filters, tests and functions again, passing undefined
    /// values on; Jinja's `defined` and `undefined` tests stay as they are.
    pub(crate) fn new(env: &'e mut Environment<'static>) -> Plugins<'e> {
        let mut plugins = Plugins { env };
        plugins.builtins();
        plugins
    }

    registration!(
        /// A filter that passes an undefined argument on instead of running.
        add_filter,
        add_filter,
        filter_call
    );

    registration!(
        /// A test that fails with the undefined error when given an undefined argument.
        add_test,
        add_test,
        test_call
    );

    registration!(
        /// A global function that passes an undefined argument on instead of running.
        add_function,
        add_function,
        filter_call
    );

    /// The environment itself, for the plugins that are given undefined arguments and
    /// decide what they mean (`default`, `mandatory`, `lookup`…).
    pub(crate) fn taking_undefined(&mut self) -> &mut Environment<'static> {
        self.env
    }

    /// minijinja's filters, tests and `range`/`dict`, registered again through
    /// [`Plugins::add_filter`] and [`Plugins::add_test`] (those sandball has its own of
    /// are replaced by them later).
    fn builtins(&mut self) {
        use minijinja::{filters as f, functions as g, tests as t};
        self.add_filter("safe", f::safe);
        self.add_filter("escape", f::escape);
        self.add_filter("e", f::escape);
        self.add_filter("lower", f::lower);
        self.add_filter("upper", f::upper);
        self.add_filter("title", f::title);
        self.add_filter("capitalize", f::capitalize);
        self.add_filter("replace", f::replace);
        self.add_filter("length", f::length);
        self.add_filter("count", f::length);
        self.add_filter("dictsort", f::dictsort);
        self.add_filter("items", f::items);
        self.add_filter("reverse", f::reverse);
        self.add_filter("trim", f::trim);
        self.add_filter("join", f::join);
        self.add_filter("split", f::split);
        self.add_filter("lines", f::lines);
        self.add_filter("round", f::round);
        self.add_filter("abs", f::abs);
        self.add_filter("attr", f::attr);
        self.add_filter("first", f::first);
        self.add_filter("last", f::last);
        self.add_filter("min", f::min);
        self.add_filter("max", f::max);
        self.add_filter("sort", f::sort);
        self.add_filter("list", f::list);
        self.add_filter("batch", f::batch);
        self.add_filter("slice", f::slice);
        self.add_filter("sum", f::sum);
        self.add_filter("indent", f::indent);
        self.add_filter("map", f::map);
        self.add_filter("groupby", f::groupby);
        self.add_filter("unique", f::unique);
        self.add_filter("chain", f::chain);
        self.add_filter("zip", f::zip);
        self.add_filter("pprint", f::pprint);
        self.add_filter("tojson", f::tojson);
        self.add_filter("urlencode", f::urlencode);
        self.add_test("none", t::is_none);
        self.add_test("safe", t::is_safe);
        self.add_test("escaped", t::is_safe);
        self.add_test("boolean", t::is_boolean);
        self.add_test("odd", t::is_odd);
        self.add_test("even", t::is_even);
        self.add_test("divisibleby", t::is_divisibleby);
        self.add_test("number", t::is_number);
        self.add_test("integer", t::is_integer);
        self.add_test("int", t::is_integer);
        self.add_test("float", t::is_float);
        self.add_test("string", t::is_string);
        self.add_test("iterable", t::is_iterable);
        self.add_test("mapping", t::is_mapping);
        self.add_test("startingwith", t::is_startingwith);
        self.add_test("endingwith", t::is_endingwith);
        self.add_test("lower", t::is_lower);
        self.add_test("upper", t::is_upper);
        self.add_test("sameas", t::is_sameas);
        for name in ["eq", "equalto", "=="] {
            self.add_test(name, t::is_eq);
        }
        for name in ["ne", "!="] {
            self.add_test(name, t::is_ne);
        }
        for name in ["lt", "lessthan", "<"] {
            self.add_test(name, t::is_lt);
        }
        for name in ["le", "<="] {
            self.add_test(name, t::is_le);
        }
        for name in ["gt", "greaterthan", ">"] {
            self.add_test(name, t::is_gt);
        }
        for name in ["ge", ">="] {
            self.add_test(name, t::is_ge);
        }
        self.add_test("in", t::is_in);
        self.add_test("true", t::is_true);
        self.add_test("false", t::is_false);
        self.add_test("filter", t::is_filter);
        self.add_test("test", t::is_test);
        self.add_function("range", g::range);
        self.add_function("dict", g::dict);
    }
}

/// Calls a filter (or function) with `args`, Ansible's way (see the module's doc).
fn filter_call(inner: &Value, state: &mut State<'_, '_>, args: &[Value]) -> Result<Value, Error> {
    if let Some(undefined) = first_undefined(args) {
        return Ok(undefined);
    }
    match inner.call(state, args) {
        Ok(result) => Ok(nested_undefined(&result, DEPTH).unwrap_or(result)),
        Err(err) if err.kind() == ErrorKind::UndefinedError => args
            .iter()
            .find_map(|arg| nested_undefined(arg, DEPTH))
            .ok_or(err),
        Err(err) => Err(err),
    }
}

/// Calls a test with `args`: an undefined one is the undefined error.
fn test_call(inner: &Value, state: &mut State<'_, '_>, args: &[Value]) -> Result<Value, Error> {
    if let Some(undefined) = first_undefined(args) {
        ensure_defined(state, &undefined)?;
    }
    inner.call(state, args)
}

/// The first undefined argument, keyword arguments' values included.
pub(crate) fn first_undefined(args: &[Value]) -> Option<Value> {
    args.iter().find_map(|arg| {
        if arg.is_undefined() {
            return Some(arg.clone());
        }
        if !arg.is_kwargs() {
            return None;
        }
        arg.try_iter()
            .ok()?
            .filter_map(|key| arg.get_item(&key).ok())
            .find(Value::is_undefined)
    })
}

thread_local! {
    /// The hint of the last `undef(hint)` called on this thread.
    static HINT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// `undef(hint)`'s undefined value. The hint cannot travel with minijinja's undefined
/// values: it is kept for the variable being rendered ([`take_hint`]), whose use is
/// then the error the hint words.
pub(crate) fn hinted(hint: String) -> Value {
    HINT.with(|h| *h.borrow_mut() = Some(hint));
    Value::UNDEFINED
}

/// The hint of the last `undef(hint)` called on this thread, which is then forgotten.
pub(crate) fn take_hint() -> Option<String> {
    HINT.with(|h| h.borrow_mut().take())
}

/// The first undefined value among a call's positional arguments, then its keyword
/// arguments (for the plugins that take them apart themselves).
pub(crate) fn undefined_in(args: &[Value], kwargs: &Kwargs) -> Option<Value> {
    args.iter().find(|v| v.is_undefined()).cloned().or_else(|| {
        kwargs
            .args()
            .filter_map(|key| kwargs.peek::<Value>(key).ok())
            .find(Value::is_undefined)
    })
}

/// An undefined value inside the lists and mappings a template made (never inside a
/// variable's lazy view), down to `depth` levels.
fn nested_undefined(value: &Value, depth: usize) -> Option<Value> {
    if value.is_undefined() {
        return Some(value.clone());
    }
    let depth = depth.checked_sub(1)?;
    if let Some(items) = value.downcast_object_ref::<Vec<Value>>() {
        return items.iter().find_map(|v| nested_undefined(v, depth));
    }
    if value.is_kwargs() {
        return first_undefined(std::slice::from_ref(value));
    }
    let map = value.downcast_object_ref::<IndexMap<Value, Value>>()?;
    map.values().find_map(|v| nested_undefined(v, depth))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::template::filters::testing::eval_with;
    use crate::template::{Templar, Vars};

    fn vars() -> Vars {
        let mut vars = Vars::new();
        vars.set_trusted("d", json!({"k": {"sub": "v"}}));
        vars.set_trusted("l", json!([1, 2]));
        vars.set_trusted("indirect", json!("{{ missing }}"));
        vars.set_trusted("hinted", json!("{{ undef('set it') }}"));
        vars.set_trusted("unhinted", json!("{{ undef() }}"));
        vars
    }

    /// The error of evaluating `expr`.
    fn error(expr: &str) -> String {
        match Templar::new().evaluate(expr, &vars()) {
            Ok(value) => panic!("{expr} gave {value}"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn filters_and_functions_pass_undefined_values_on_to_default() {
        let v = vars();
        for expr in [
            "nope | lower | default('x')",
            "nope | int | to_json | length | default('x')",
            "indirect | lower | default('x')",
            "nope.a.b | lower | default('x')",
            "d.nope | lower | default('x')",
            "'k' | extract(nope) | default('x')",
            "('k' | extract(nope)).sub | default('x')",
            "('z' | extract(d)).sub | default('x')",
            "'k' | extract(d, ['nope', 'deeper']) | default('x')",
            "'x' | replace('x', nope) | default('x')",
            "d | combine({'a': nope}) | default('x')",
            "[1, nope] | join(',') | default('x')",
            "[nope, 1] | list | default('x')",
            "{'a': nope} | dict2items | default('x')",
            "range(nope) | default('x')",
            "dict(a=nope) | default('x')",
            "lookup('env', nope) | default('x')",
            "query('items', nope) | default('x')",
            "nope.upper() | default('x')",
            "nope | default(nope2) | default('x')",
            "true | ternary(nope, 1) | default('x')",
            "hinted | default('x')",
            "lookup('env', 'SANDBALL_UNSET_VARIABLE', default=undef()) | default('x')",
            // What only passes an undefined value on gives it to `default`.
            "(1 and nope.a) | default('x')",
            "(0 or nope.a) | default('x')",
            "(nope.a if true else 1) | default('x')",
            "(1 if false else nope.a) | default('x')",
            "[nope.a][0] | default('x')",
            "nope.a[0].b | default('x')",
        ] {
            assert_eq!(eval_with(expr, &v), json!("x"), "{expr}");
        }
        assert_eq!(eval_with("nope | lower is defined", &v), json!(false));
        assert_eq!(eval_with("nope.x | lower is undefined", &v), json!(true));
        assert_eq!(eval_with("false | ternary(nope, 1)", &v), json!(1));
        assert_eq!(eval_with("[nope, 1] | length", &v), json!(2));
        assert_eq!(
            eval_with("[nope, 1] | select('defined') | list", &v),
            json!([1])
        );
        assert_eq!(eval_with("nope | default(None)", &v), json!(null));
        assert_eq!(eval_with("nope | type_debug", &v), json!("UndefinedMarker"));
    }

    #[test]
    fn using_an_undefined_value_is_still_an_error() {
        for expr in [
            "nope | lower",
            "nope | lower | upper",
            "(nope ~ 'a') | default('x')",
            "(nope == 1) | default('x')",
            "nope is string",
            "(nope | lower) is string",
            "[1, nope] | join(',')",
            "'a' if nope else 'b'",
            "[nope] | default('x')",
            // An operation given an undefined value is the error, even where
            // attributes chain under `default` or `is defined`.
            "(nope.a ~ 'x') | default('y')",
            "('x' ~ nope.a) | default('y')",
            "(nope.a + 1) | default(3)",
            "(-nope.a) | default(3)",
            "(nope.a == 1) | default(3)",
            "(nope.a < 1 < 2) | default(3)",
            "(1 in nope.a) | default(3)",
            "(nope.a not in [1]) | default(3)",
            "(not nope.a) | default(3)",
            "(nope.a and 1) | default(3)",
            "('a' if nope.a else 'b') | default(3)",
            "(nope.a ~ 'x') is defined",
            "[nope.a ~ 'x'] | default(3)",
            "(nope.a | lower ~ 'x') | default(3)",
            "((nope.a ~ 'x') | default('y')) ~ 'z'",
            "(nope + 1) | default(3)",
            "(1 - nope) | default(3)",
            "(-nope) | default(3)",
        ] {
            let err = error(expr);
            assert!(err.starts_with("'nope' is undefined"), "{expr}: {err}");
        }
        for (expr, attribute) in [
            (
                "(d.nope + 1) | default(5)",
                "object of type 'dict' has no attribute 'nope'",
            ),
            (
                "(d['nope'] * 2) | default(5)",
                "object of type 'dict' has no attribute 'nope'",
            ),
            (
                "(d.k.sub.x ~ 'y') | default(5)",
                "object of type 'str' has no attribute 'x'",
            ),
        ] {
            let err = error(expr);
            assert!(err.starts_with(attribute), "{expr}: {err}");
        }
        for source in [
            "{% if nope.a %}y{% endif %}{{ nope2 | default('') }}",
            "{% for i in nope.a %}{{ i }}{% endfor %}{{ nope2 | default('') }}",
        ] {
            let err = Templar::new().render(source, &vars()).unwrap_err();
            assert!(
                err.to_string().starts_with("'nope' is undefined"),
                "{source}: {err}"
            );
        }
        assert_eq!(error("hinted"), "set it (in template \"hinted\")");
        let err = Templar::new()
            .template(&json!("{{ unhinted }}"), &vars())
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("Mandatory variable has not been overridden"),
            "{err}"
        );
        let err = error("nope | lower | mandatory");
        assert!(
            err.contains("Mandatory variable 'nope' not defined."),
            "{err}"
        );
    }
}
