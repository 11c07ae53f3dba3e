//! Jinja's stateful global helpers that minijinja does not have: `joiner(sep)` (a
//! callable giving nothing the first time, then `sep`) and `cycler(*items)` (an
//! object whose `next()` goes round the items, with `current` and `reset()`), as
//! Jinja2 defines them.

use crate::template::undefined::Plugins;
use minijinja::value::{Object, Value};
use minijinja::{Error, ErrorKind, State};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Adds `joiner` and `cycler`.
pub(crate) fn register(plugins: &mut Plugins<'_>) {
    plugins.add_function("joiner", joiner);
    plugins.add_function("cycler", cycler);
}

/// `joiner(sep=', ')`.
fn joiner(sep: Option<String>) -> Value {
    let sep = sep.unwrap_or_else(|| ", ".to_string());
    let used = AtomicBool::new(false);
    Value::from_function(move || -> String {
        if used.swap(true, Ordering::SeqCst) {
            sep.clone()
        } else {
            String::new()
        }
    })
}

/// `cycler(*items)`.
fn cycler(items: minijinja::value::Rest<Value>) -> Result<Value, Error> {
    if items.is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "at least one item has to be provided",
        ));
    }
    Ok(Value::from_object(Cycler {
        items: items.0,
        position: AtomicUsize::new(0),
    }))
}

#[derive(Debug)]
struct Cycler {
    items: Vec<Value>,
    position: AtomicUsize,
}

impl Cycler {
    fn current(&self) -> Value {
        self.items[self.position.load(Ordering::SeqCst) % self.items.len()].clone()
    }
}

impl Object for Cycler {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        (key.as_str() == Some("current")).then(|| self.current())
    }

    fn call_method(
        self: &Arc<Self>,
        _state: &mut State<'_, '_>,
        method: &str,
        _args: &[Value],
    ) -> Result<Value, Error> {
        match method {
            "next" => {
                let at = self.position.fetch_add(1, Ordering::SeqCst);
                Ok(self.items[at % self.items.len()].clone())
            }
            "reset" => {
                self.position.store(0, Ordering::SeqCst);
                Ok(Value::from(()))
            }
            _ => Err(Error::from(ErrorKind::UnknownMethod)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joiner_and_cycler_behave_as_jinjas() {
        let mut env = minijinja::Environment::new();
        register(&mut Plugins::new(&mut env));
        let render = |t: &str| env.render_str(t, ()).unwrap();
        assert_eq!(
            render("{% set pipe = joiner('|') %}x{{ pipe() }}a{{ pipe() }}b{{ pipe() }}x"),
            "xa|b|x"
        );
        assert_eq!(
            render("{% set j = joiner() %}{% for i in [1, 2, 3] %}{{ j() }}{{ i }}{% endfor %}"),
            "1, 2, 3"
        );
        assert_eq!(
            render(
                "{% set c = cycler('odd', 'even') %}{{ c.current }} {{ c.next() }} {{ c.next() }} {{ c.next() }} {{ c.current }}{% set _ = c.reset() %} {{ c.current }}"
            ),
            "odd odd even odd even odd"
        );
        assert!(env.render_str("{{ cycler() }}", ()).is_err());
    }
}
