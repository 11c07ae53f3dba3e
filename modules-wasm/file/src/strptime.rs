//! Parsing a time the way Python's `time.strptime` followed by `time.mktime` does,
//! which is how Ansible's file module reads `modification_time` and `access_time`
//! with their `*_format` options (default `%Y%m%d%H%M.%S`).
//!
//! Supported directives: `%Y %y %m %d %H %I %M %S %f %j %p %b %B %h %a %A %%`.
//! Numbers take as many digits as fit the field, backtracking like Python's regular
//! expression does; whitespace in the format matches any run of whitespace;
//! letters match without regard to case. WASI gives a module no time zone, so the
//! time is read as UTC.

/// Month names, for `%b`/`%B`.
const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Day names, for `%a`/`%A` (accepted and ignored, as `mktime` ignores them).
const DAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// One piece of a format.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Piece {
    /// A number field: which one, fewest and most digits, smallest and largest value.
    Number(Field, usize, usize, u32, u32),
    /// `%b`/`%B`: a month name, full or abbreviated to three letters.
    MonthName,
    /// `%a`/`%A`: a day name, full or abbreviated.
    DayName,
    /// `%p`: AM or PM.
    AmPm,
    /// Whitespace in the format: one or more whitespace characters.
    Space,
    /// Any other character (matched without regard to case).
    Literal(char),
}

/// Which part of the time a number sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Year4,
    Year2,
    Month,
    Day,
    Hour24,
    Hour12,
    Minute,
    Second,
    Fraction,
    DayOfYear,
}

/// The fields read so far, with Python's defaults (1900-01-01 00:00:00).
#[derive(Debug, Clone, Copy)]
struct Parts {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    hour12: Option<u32>,
    pm: Option<bool>,
    minute: u32,
    second: u32,
    day_of_year: Option<u32>,
    month_or_day_given: bool,
}

impl Default for Parts {
    fn default() -> Self {
        Parts {
            year: 1900,
            month: 1,
            day: 1,
            hour: 0,
            hour12: None,
            pm: None,
            minute: 0,
            second: 0,
            day_of_year: None,
            month_or_day_given: false,
        }
    }
}

/// Seconds since the Unix epoch of `text` read with `format`; errors read like
/// Python's (`time data '…' does not match format '…'`).
pub fn strptime(text: &str, format: &str) -> Result<i64, String> {
    let pieces = compile(format)?;
    let chars: Vec<char> = text.chars().collect();
    let no_match = || format!("time data '{text}' does not match format '{format}'");
    let (parts, used) = match_pieces(&pieces, &chars, Parts::default()).ok_or_else(no_match)?;
    if used < chars.len() {
        let rest: String = chars[used..].iter().collect();
        return Err(format!("unconverted data remains: {rest}"));
    }
    to_epoch(parts)
}

/// Turns a format into pieces; an unknown directive is an error, as in Python.
fn compile(format: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            pieces.push(Piece::Space);
            continue;
        }
        if c != '%' {
            pieces.push(Piece::Literal(c));
            continue;
        }
        let Some(d) = chars.next() else {
            return Err(format!("stray % in format {format:?}"));
        };
        pieces.push(match d {
            'Y' => Piece::Number(Field::Year4, 4, 4, 0, 9999),
            'y' => Piece::Number(Field::Year2, 2, 2, 0, 99),
            'm' => Piece::Number(Field::Month, 1, 2, 1, 12),
            'd' => Piece::Number(Field::Day, 1, 2, 1, 31),
            'H' => Piece::Number(Field::Hour24, 1, 2, 0, 23),
            'I' => Piece::Number(Field::Hour12, 1, 2, 1, 12),
            'M' => Piece::Number(Field::Minute, 1, 2, 0, 59),
            'S' => Piece::Number(Field::Second, 1, 2, 0, 61),
            'f' => Piece::Number(Field::Fraction, 1, 6, 0, 999_999),
            'j' => Piece::Number(Field::DayOfYear, 1, 3, 1, 366),
            'b' | 'B' | 'h' => Piece::MonthName,
            'a' | 'A' => Piece::DayName,
            'p' => Piece::AmPm,
            '%' => Piece::Literal('%'),
            other => {
                return Err(format!("'{other}' is a bad directive in format '%{other}'"));
            }
        });
    }
    Ok(pieces)
}

/// Matches `pieces` against the start of `text`, trying longer numbers first and
/// shorter ones when the rest does not match. Returns the parts and characters used.
fn match_pieces(pieces: &[Piece], text: &[char], parts: Parts) -> Option<(Parts, usize)> {
    let Some((piece, rest)) = pieces.split_first() else {
        return Some((parts, 0));
    };
    let then = |parts: Parts, used: usize| {
        match_pieces(rest, &text[used..], parts).map(|(p, n)| (p, used + n))
    };
    match *piece {
        Piece::Number(field, min, max, lo, hi) => {
            let digits = text
                .iter()
                .take(max)
                .take_while(|c| c.is_ascii_digit())
                .count();
            (min..=digits).rev().find_map(|len| {
                let s: String = text[..len].iter().collect();
                let value: u32 = s.parse().ok()?;
                if !(lo..=hi).contains(&value) {
                    return None;
                }
                then(set(parts, field, value), len)
            })
        }
        Piece::MonthName => MONTHS.iter().enumerate().find_map(|(i, name)| {
            let len = name_prefix(text, name)?;
            let mut p = parts;
            p.month = i as u32 + 1;
            p.month_or_day_given = true;
            then(p, len)
        }),
        Piece::DayName => DAYS
            .iter()
            .find_map(|name| then(parts, name_prefix(text, name)?)),
        Piece::AmPm => ["am", "pm"].iter().find_map(|word| {
            let len = name_prefix_exact(text, word)?;
            let mut p = parts;
            p.pm = Some(*word == "pm");
            then(p, len)
        }),
        Piece::Space => {
            let n = text.iter().take_while(|c| c.is_whitespace()).count();
            if n == 0 { None } else { then(parts, n) }
        }
        Piece::Literal(c) => {
            let first = text.first()?;
            if first.to_lowercase().eq(c.to_lowercase()) {
                then(parts, 1)
            } else {
                None
            }
        }
    }
}

/// Length of `name` (full) or its three-letter abbreviation at the start of `text`.
fn name_prefix(text: &[char], name: &str) -> Option<usize> {
    name_prefix_exact(text, name).or_else(|| name_prefix_exact(text, &name[..3]))
}

fn name_prefix_exact(text: &[char], word: &str) -> Option<usize> {
    let n = word.chars().count();
    if text.len() < n {
        return None;
    }
    let head: String = text[..n].iter().collect::<String>().to_lowercase();
    (head == word).then_some(n)
}

fn set(mut p: Parts, field: Field, value: u32) -> Parts {
    match field {
        Field::Year4 => p.year = i64::from(value),
        // Python's rule: 69–99 are 1969–1999, 00–68 are 2000–2068.
        Field::Year2 => p.year = i64::from(value) + if value >= 69 { 1900 } else { 2000 },
        Field::Month => {
            p.month = value;
            p.month_or_day_given = true;
        }
        Field::Day => {
            p.day = value;
            p.month_or_day_given = true;
        }
        Field::Hour24 => p.hour = value,
        Field::Hour12 => p.hour12 = Some(value),
        Field::Minute => p.minute = value,
        Field::Second => p.second = value,
        // `mktime` has whole seconds: fractions are read and dropped.
        Field::Fraction => {}
        Field::DayOfYear => p.day_of_year = Some(value),
    }
    p
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the given date (proleptic Gregorian).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn to_epoch(p: Parts) -> Result<i64, String> {
    let hour = match (p.hour12, p.pm) {
        (Some(h), Some(true)) => h % 12 + 12,
        (Some(h), _) => h % 12,
        (None, _) => p.hour,
    };
    let days = match p.day_of_year {
        Some(doy) if !p.month_or_day_given => {
            let year_len = if is_leap(p.year) { 366 } else { 365 };
            if doy > year_len {
                return Err(format!("day of year {doy} is out of range for {}", p.year));
            }
            days_from_civil(p.year, 1, 1) + i64::from(doy) - 1
        }
        _ => {
            if p.day > days_in_month(p.year, p.month) {
                return Err("day is out of range for month".to_string());
            }
            days_from_civil(p.year, p.month, p.day)
        }
    };
    Ok(days * 86_400 + i64::from(hour) * 3600 + i64::from(p.minute) * 60 + i64::from(p.second))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANSIBLE_DEFAULT: &str = "%Y%m%d%H%M.%S";

    #[test]
    fn reads_ansible_default_format() {
        // 2024-01-02 15:30:45 UTC
        assert_eq!(
            strptime("202401021530.45", ANSIBLE_DEFAULT),
            Ok(1_704_209_445)
        );
        assert_eq!(strptime("197001010000.00", ANSIBLE_DEFAULT), Ok(0));
    }

    #[test]
    fn numbers_take_the_longest_valid_field_like_python() {
        // %m cannot be 13, so it takes "1"; %d cannot be 33, so it takes "3".
        assert_eq!(
            strptime("2024133", "%Y%m%d"),
            Err("unconverted data remains: 3".to_string())
        );
        assert_eq!(strptime("2024-1-3", "%Y-%m-%d"), Ok(1_704_240_000));
        assert_eq!(strptime("24-2-29", "%y-%m-%d"), Ok(1_709_164_800));
        // A shorter number is tried when the rest would not match otherwise.
        assert_eq!(strptime("202411", "%Y%m1"), strptime("2024-01", "%Y-%m"));
    }

    #[test]
    fn reads_names_ampm_and_whitespace() {
        let a = strptime("Tue, 02 jan 2024  03:04:05 PM", "%a, %d %b %Y %I:%M:%S %p");
        assert_eq!(a, Ok(1_704_207_845));
        assert_eq!(strptime("12:00 am", "%I:%M %p"), strptime("00:00", "%H:%M"));
        assert_eq!(
            strptime("2024 032", "%Y %j"),
            strptime("2024-02-01", "%Y-%m-%d")
        );
    }

    #[test]
    fn defaults_to_1900_like_python() {
        assert_eq!(strptime("", ""), Ok(-2_208_988_800));
    }

    #[test]
    fn reports_errors_like_python() {
        assert_eq!(
            strptime("2024", ANSIBLE_DEFAULT),
            Err("time data '2024' does not match format '%Y%m%d%H%M.%S'".to_string())
        );
        assert_eq!(
            strptime("2024-01-02x", "%Y-%m-%d"),
            Err("unconverted data remains: x".to_string())
        );
        assert!(strptime("2023-02-29", "%Y-%m-%d").is_err());
        assert!(strptime("1", "%Q").unwrap_err().contains("bad directive"));
    }
}
