//! Git's version as `git --version` prints it, compared as Python's `LooseVersion`
//! compares the numbers that start it (`2.39.5`, `2.45.2.windows.1`).

use std::cmp::Ordering;
use std::fmt;

/// A version: its leading numbers, and the text it came from.
#[derive(Clone, Debug)]
pub struct GitVersion {
    numbers: Vec<u64>,
    text: String,
}

impl GitVersion {
    /// Reads the numbers before the first part that is not one.
    pub fn parse(text: &str) -> GitVersion {
        let numbers = text
            .trim()
            .split('.')
            .map_while(|part| part.parse::<u64>().ok())
            .collect();
        GitVersion {
            numbers,
            text: text.trim().to_string(),
        }
    }
}

impl PartialEq for GitVersion {
    fn eq(&self, other: &Self) -> bool {
        self.numbers == other.numbers
    }
}

impl PartialOrd for GitVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.numbers.cmp(&other.numbers))
    }
}

impl fmt::Display for GitVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::GitVersion;

    #[test]
    fn versions_compare_by_their_numbers() {
        let v = |t| GitVersion::parse(t);
        assert!(v("2.39.5") > v("1.9.1"));
        assert!(v("1.9") < v("1.9.1"));
        assert!(v("1.7.9.5") < v("1.7.10"));
        assert!(v("2.45.2.windows.1") >= v("1.9"));
        assert_eq!(v("2.39.5\n").to_string(), "2.39.5");
    }
}
