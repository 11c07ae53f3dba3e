//! The `sequence` lookup (`with_sequence`): numbers from `start` to `end` (or `count`
//! of them) by `stride`, each formatted with `format`, as Ansible reads its options.

use serde_json::Value as Json;

use super::{LookupContext, LookupError, Options};

/// `sequence`: see [`sequence_of`].
pub(super) fn sequence(
    terms: &[Json],
    options: &Options,
    _ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    Ok(sequence_of(terms, options)?)
}

/// `with_sequence`: `start=1 end=5 stride=1 format=%d`, `count=N`, or the short forms
/// `[start-]end[/stride][:format]`; each item is the formatted text.
fn sequence_of(terms: &[Json], options: &Options) -> Result<Vec<Json>, String> {
    // Keyword options apply to every term, beneath what the term itself says; with
    // options and no term there is one empty term to apply them to.
    let blank = [Json::String(String::new())];
    let terms = if terms.is_empty() && !options.is_empty() {
        &blank[..]
    } else {
        terms
    };
    let mut out = Vec::new();
    for term in terms {
        let text = match term {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        };
        let mut fields = SequenceFields::default();
        for (k, v) in options {
            let v = match v {
                Json::String(s) => s.clone(),
                other => other.to_string(),
            };
            if !fields.set(k, &v)? {
                return Err(format!("unrecognized arguments to with_sequence: ['{k}']"));
            }
        }
        fields.parse(text.trim())?;
        out.extend(fields.generate()?);
    }
    Ok(out)
}

/// One sequence's settings, as `with_sequence` reads them.
struct SequenceFields {
    start: i64,
    end: Option<i64>,
    stride: i64,
    count: Option<i64>,
    format: String,
}

impl Default for SequenceFields {
    fn default() -> Self {
        SequenceFields {
            start: 1,
            end: None,
            stride: 1,
            count: None,
            format: "%d".into(),
        }
    }
}

impl SequenceFields {
    /// Sets one field from its text (numbers as Python reads integer literals:
    /// decimal, `0x`, `0o`, `0b`); false when there is no field of that name.
    fn set(&mut self, key: &str, value: &str) -> Result<bool, String> {
        let number = || {
            python_int(value.trim()).ok_or_else(|| {
                format!(
                    "Config '{key}' for 'sequence' lookup plugin from 'Direct' has an invalid value: Invalid value provided for 'integer': '{value}'"
                )
            })
        };
        match key {
            "start" => self.start = number()?,
            "end" => self.end = Some(number()?),
            "stride" => self.stride = number()?,
            "count" => self.count = Some(number()?),
            "format" => self.format = value.to_string(),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Reads a term: the short form `[start-]end[/stride][:format]`, else
    /// `key=value` words.
    fn parse(&mut self, text: &str) -> Result<(), String> {
        if text.is_empty() {
            return Ok(());
        }
        // The short form, when the term is not `key=value` words; a bad number in it
        // is named by the field it is for (`A-4/2`: start).
        if !text.contains('=') {
            let (range, format) = match text.split_once(':') {
                Some((range, format)) => (range, Some(format)),
                None => (text, None),
            };
            let (range, stride) = match range.split_once('/') {
                Some((r, s)) => (r, Some(s)),
                None => (range, None),
            };
            match range.split_once('-') {
                Some((a, b)) => {
                    self.set("start", a)?;
                    self.set("end", b)?;
                }
                None => {
                    self.set("end", range)?;
                }
            }
            if let Some(s) = stride {
                self.set("stride", s)?;
            }
            if let Some(f) = format {
                self.set("format", f)?;
            }
            return Ok(());
        }
        let mut unknown = Vec::new();
        for part in text.split_whitespace() {
            let Some((k, v)) = part.split_once('=') else {
                return Err(format!(
                    "unknown error parsing with_sequence arguments: '{text}'. Error was: {part:?} is not key=value"
                ));
            };
            if !self.set(k, v)? {
                unknown.push(format!("'{k}'"));
            }
        }
        if !unknown.is_empty() {
            return Err(format!(
                "unrecognized arguments to with_sequence: [{}]",
                unknown.join(", ")
            ));
        }
        Ok(())
    }

    /// The sequence, or the error Ansible gives for these settings.
    fn generate(self) -> Result<Vec<Json>, String> {
        let end = match (self.end, self.count) {
            (None, None) => return Err("must specify count or end in with_sequence".into()),
            (Some(_), Some(_)) => {
                return Err("can't specify both count and end in with_sequence".into());
            }
            (Some(e), None) => e,
            (None, Some(0)) => return Ok(Vec::new()),
            // Ansible's own arithmetic, kept for the sequences it gives.
            (None, Some(c)) => self.start + c * self.stride - 1,
        };
        if self.stride > 0 && end < self.start {
            return Err("to count backwards make stride negative".into());
        }
        if self.stride < 0 && end > self.start {
            return Err("to count forward don't make stride negative".into());
        }
        if self.stride == 0 {
            return Ok(Vec::new());
        }
        if self.format.matches('%').count() != 1 {
            return Err(format!("bad formatting string: {}", self.format));
        }
        let mut out = Vec::new();
        let mut i = self.start;
        while (self.stride > 0 && i <= end) || (self.stride < 0 && i >= end) {
            let formatted =
                crate::template::percent::printf(&self.format, &minijinja::Value::from(i))
                    .map_err(|_| {
                        let mut format = String::new();
                        sandball_pycompat::pyfmt::quote(&self.format, &mut format);
                        format!("problem formatting {format} with {i}")
                    })?;
            out.push(Json::String(formatted));
            i += self.stride;
        }
        Ok(out)
    }
}

/// An integer as Python's `int(text, 0)` reads it (and plain decimals with leading
/// zeros, as Ansible's integer option does).
fn python_int(text: &str) -> Option<i64> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let lower = body.to_ascii_lowercase();
    let value = if let Some(d) = lower.strip_prefix("0x") {
        i64::from_str_radix(d, 16).ok()?
    } else if let Some(d) = lower.strip_prefix("0o") {
        i64::from_str_radix(d, 8).ok()?
    } else if let Some(d) = lower.strip_prefix("0b") {
        i64::from_str_radix(d, 2).ok()?
    } else {
        lower.parse::<i64>().ok()?
    };
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn seq(terms: Json, options: Json) -> Result<Vec<Json>, String> {
        let terms = terms.as_array().cloned().unwrap_or_default();
        sequence_of(&terms, options.as_object().unwrap())
    }

    #[test]
    fn sequences_follow_ansibles_rules() {
        let ok = |terms: Json, options: Json, want: Json| {
            assert_eq!(json!(seq(terms.clone(), options).unwrap()), want, "{terms}");
        };
        ok(
            json!(["start=0x0f00 count=4 format=%04x"]),
            json!({}),
            json!(["0f00", "0f01", "0f02", "0f03"]),
        );
        ok(
            json!(["2-10/2"]),
            json!({}),
            json!(["2", "4", "6", "8", "10"]),
        );
        ok(
            json!(["4:host%02d"]),
            json!({}),
            json!(["host01", "host02", "host03", "host04"]),
        );
        ok(
            json!([]),
            json!({"count": 5, "start": 10}),
            json!(["10", "11", "12", "13", "14"]),
        );
        ok(
            json!(["count=5 start=0"]),
            json!({"stride": -1}),
            json!(["0", "-1", "-2", "-3", "-4", "-5", "-6"]),
        );
        ok(
            json!(["count=5 start=0", "count=5"]),
            json!({"start": 20}),
            json!(["0", "1", "2", "3", "4", "20", "21", "22", "23", "24"]),
        );
        ok(json!(["count=5 start=0"]), json!({"stride": 0}), json!([]));
        ok(json!([]), json!({}), json!([]));
        let err = |terms: Json| seq(terms, json!({})).unwrap_err();
        assert_eq!(
            err(json!(["start=4 end=1 stride=2"])),
            "to count backwards make stride negative"
        );
        assert_eq!(
            err(json!(["start=1 end=4 stride=-2"])),
            "to count forward don't make stride negative"
        );
        assert_eq!(
            err(json!(["start=1 end=4 format=d"])),
            "bad formatting string: d"
        );
        assert!(err(json!(["A-4/2"])).contains("Config 'start'"));
        assert_eq!(
            err(json!(["start=0 junk=3"])),
            "unrecognized arguments to with_sequence: ['junk']"
        );
    }
}
