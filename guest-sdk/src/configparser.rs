//! Values of INI files as Python's `configparser` gives them out: its basic `%`
//! interpolation (`%%` is `%`, `%(name)s` another option's value).

/// `value` with `%%` made `%` and each `%(name)s` made what `option` gives for the
/// lower-cased `name` (the caller looks it up, interpolated in turn, and says why it
/// cannot); a `%` followed by anything else is the error `syntax` makes of the text
/// from that `%` on.
pub fn interpolate<E>(
    value: &str,
    mut option: impl FnMut(&str) -> Result<String, E>,
    syntax: impl Fn(&str) -> E,
) -> Result<String, E> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        if let Some(after) = rest.strip_prefix("%%") {
            out.push('%');
            rest = after;
        } else if let Some((name, after)) = rest.strip_prefix("%(").and_then(|r| r.split_once(")s"))
        {
            out.push_str(&option(&name.to_lowercase())?);
            rest = after;
        } else {
            return Err(syntax(rest));
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_and_named_options() {
        let got = interpolate(
            "50%% of %(Total)s",
            |name| Ok::<_, String>(format!("<{name}>")),
            |rest| rest.to_string(),
        );
        assert_eq!(got.unwrap(), "50% of <total>");
        let bad = interpolate("5 % x", |_| Ok(String::new()), |rest| rest.to_string());
        assert_eq!(bad.unwrap_err(), "% x");
    }
}
