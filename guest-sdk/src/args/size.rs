//! Human-readable sizes for the `bytes` and `bits` argument types: `1k`, `10MB`,
//! `1.5G`, `512`, and for bits `1Mb`. Units are powers of 1024; a unit of two letters
//! must end in `B` for bytes or `b` for bits, and `byte`/`bit` may be spelled out.

/// Converts a size to a number of bytes (or bits when `bits` is true).
pub fn human_to_number(text: &str, bits: bool) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let unit = unit.trim_start();
    let invalid = || format!("can't interpret following string: {text}");
    if number.is_empty() || !unit.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err(invalid());
    }
    let value: f64 = number.parse().map_err(|_| invalid())?;
    let multiplier: f64 = match unit.chars().next().map(|c| c.to_ascii_uppercase()) {
        None | Some('B') => 1.0,
        Some('K') => 2f64.powi(10),
        Some('M') => 2f64.powi(20),
        Some('G') => 2f64.powi(30),
        Some('T') => 2f64.powi(40),
        Some('P') => 2f64.powi(50),
        Some('E') => 2f64.powi(60),
        Some('Z') => 2f64.powi(70),
        Some('Y') => 2f64.powi(80),
        Some(_) => {
            return Err(format!(
                "failed to convert {text}: the unit is not one of B, K, M, G, T, P, E, Z, Y"
            ));
        }
    };
    if unit.len() > 1 {
        let (class, word) = if bits { ('b', "bit") } else { ('B', "byte") };
        let spelled = unit.to_ascii_lowercase().contains(word);
        if !spelled && (unit.len() > 2 || !unit[1..].starts_with(class)) {
            let range = unit[..1].to_ascii_uppercase();
            let expect = if range == "B" {
                format!("{class} or {word}")
            } else {
                format!("{range}{class} or {range}")
            };
            return Err(format!(
                "failed to convert {text}: not a valid size string (expect {expect})"
            ));
        }
    }
    let result = (value * multiplier).round_ties_even();
    if result >= 2f64.powi(64) {
        return Err(format!("failed to convert {text}: the size is too large"));
    }
    Ok(result as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_with_and_without_units() {
        assert_eq!(human_to_number("512", false), Ok(512));
        assert_eq!(human_to_number("1k", false), Ok(1024));
        assert_eq!(human_to_number("1K", false), Ok(1024));
        assert_eq!(human_to_number("10MB", false), Ok(10 << 20));
        assert_eq!(human_to_number("1.5G", false), Ok(3 << 29));
        assert_eq!(human_to_number(" 2 KB ", false), Ok(2048));
        assert_eq!(human_to_number("1B", false), Ok(1));
        assert_eq!(human_to_number("3 bytes", false), Ok(3));
        assert_eq!(human_to_number("2.5", false), Ok(2));
    }

    #[test]
    fn bits_need_a_lowercase_b() {
        assert_eq!(human_to_number("1Mb", true), Ok(1 << 20));
        assert_eq!(human_to_number("8 bits", true), Ok(8));
        assert!(
            human_to_number("1MB", true)
                .unwrap_err()
                .contains("expect Mb or M")
        );
        assert!(
            human_to_number("1Mb", false)
                .unwrap_err()
                .contains("expect MB or M")
        );
    }

    #[test]
    fn rejects_nonsense() {
        assert!(human_to_number("", false).is_err());
        assert!(human_to_number("k", false).is_err());
        assert!(human_to_number("1Q", false).is_err());
        assert!(human_to_number("1.2.3", false).is_err());
        assert!(human_to_number("-1", false).is_err());
        assert!(human_to_number("1Y", false).is_err());
    }
}
