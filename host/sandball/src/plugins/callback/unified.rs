//! Unified diffs as ansible-core's callbacks print them: Python's `difflib` matching
//! (the longest matching block first, then the same on each side of it; in a text of
//! 200 lines or more, a line found in more than 1% of the new text plus one is matched
//! only next to a block found otherwise), its hunks and their `@@ -a,b +c,d @@` ranges.
//! Another diff algorithm (Myers') often finds other hunks for the same change, so a
//! `--diff` run would read differently from ansible-playbook's.

use std::collections::HashMap;

/// A run of lines: `a[a_start..a_end]` becomes `b[b_start..b_end]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Op {
    tag: Tag,
    a_start: usize,
    a_end: usize,
    b_start: usize,
    b_end: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    Equal,
    Replace,
    Delete,
    Insert,
}

/// Where `a` and `b` match, as `(a_start, b_start, len)` blocks in order, ending with
/// the empty block at `(a.len(), b.len())`.
fn matching_blocks<T: AsRef<str>>(a: &[T], b: &[T]) -> Vec<(usize, usize, usize)> {
    // Where each line of `b` is, leaving out the popular ones of a long text.
    let mut b_index: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, line) in b.iter().enumerate() {
        b_index.entry(line.as_ref()).or_default().push(j);
    }
    if b.len() >= 200 {
        let most = b.len() / 100 + 1;
        b_index.retain(|_, at| at.len() <= most);
    }
    let longest = |a_lo: usize, a_hi: usize, b_lo: usize, b_hi: usize| {
        let (mut best_i, mut best_j, mut best) = (a_lo, b_lo, 0);
        // The length of the match ending at each `j` of the line before.
        let mut ending: HashMap<usize, usize> = HashMap::new();
        for (i, line) in a.iter().enumerate().take(a_hi).skip(a_lo) {
            let mut next = HashMap::new();
            for &j in b_index.get(line.as_ref()).into_iter().flatten() {
                if j < b_lo {
                    continue;
                }
                if j >= b_hi {
                    break;
                }
                let k = j
                    .checked_sub(1)
                    .and_then(|p| ending.get(&p))
                    .copied()
                    .unwrap_or(0)
                    + 1;
                next.insert(j, k);
                if k > best {
                    (best_i, best_j, best) = (i + 1 - k, j + 1 - k, k);
                }
            }
            ending = next;
        }
        // Popular lines are matched only as they extend a block on either side.
        let same = |i: usize, j: usize| a[i].as_ref() == b[j].as_ref();
        while best_i > a_lo && best_j > b_lo && same(best_i - 1, best_j - 1) {
            (best_i, best_j, best) = (best_i - 1, best_j - 1, best + 1);
        }
        while best_i + best < a_hi && best_j + best < b_hi && same(best_i + best, best_j + best) {
            best += 1;
        }
        (best_i, best_j, best)
    };
    let mut blocks = Vec::new();
    let mut todo = vec![(0, a.len(), 0, b.len())];
    while let Some((a_lo, a_hi, b_lo, b_hi)) = todo.pop() {
        let (i, j, k) = longest(a_lo, a_hi, b_lo, b_hi);
        if k == 0 {
            continue;
        }
        blocks.push((i, j, k));
        if a_lo < i && b_lo < j {
            todo.push((a_lo, i, b_lo, j));
        }
        if i + k < a_hi && j + k < b_hi {
            todo.push((i + k, a_hi, j + k, b_hi));
        }
    }
    blocks.sort_unstable();
    // Adjacent blocks are one.
    let mut merged: Vec<(usize, usize, usize)> = Vec::new();
    for (i, j, k) in blocks {
        match merged.last_mut() {
            Some((pi, pj, pk)) if *pi + *pk == i && *pj + *pk == j => *pk += k,
            _ => merged.push((i, j, k)),
        }
    }
    merged.push((a.len(), b.len(), 0));
    merged
}

/// The edits turning `a` into `b`, matches included.
fn opcodes<T: AsRef<str>>(a: &[T], b: &[T]) -> Vec<Op> {
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::new();
    for (ai, bj, size) in matching_blocks(a, b) {
        let tag = match (i < ai, j < bj) {
            (true, true) => Some(Tag::Replace),
            (true, false) => Some(Tag::Delete),
            (false, true) => Some(Tag::Insert),
            (false, false) => None,
        };
        if let Some(tag) = tag {
            ops.push(Op {
                tag,
                a_start: i,
                a_end: ai,
                b_start: j,
                b_end: bj,
            });
        }
        (i, j) = (ai + size, bj + size);
        if size > 0 {
            ops.push(Op {
                tag: Tag::Equal,
                a_start: ai,
                a_end: i,
                b_start: bj,
                b_end: j,
            });
        }
    }
    ops
}

/// The edits cut into hunks with `context` lines of matches around each change.
fn hunks(mut ops: Vec<Op>, context: usize) -> Vec<Vec<Op>> {
    if ops.is_empty() {
        return Vec::new();
    }
    if let Some(first) = ops.first_mut().filter(|o| o.tag == Tag::Equal) {
        first.a_start = first.a_start.max(first.a_end.saturating_sub(context));
        first.b_start = first.b_start.max(first.b_end.saturating_sub(context));
    }
    if let Some(last) = ops.last_mut().filter(|o| o.tag == Tag::Equal) {
        last.a_end = last.a_end.min(last.a_start + context);
        last.b_end = last.b_end.min(last.b_start + context);
    }
    let mut groups = Vec::new();
    let mut group = Vec::new();
    for mut op in ops {
        if op.tag == Tag::Equal && op.a_end - op.a_start > 2 * context {
            group.push(Op {
                a_end: op.a_end.min(op.a_start + context),
                b_end: op.b_end.min(op.b_start + context),
                ..op
            });
            groups.push(std::mem::take(&mut group));
            op.a_start = op.a_start.max(op.a_end.saturating_sub(context));
            op.b_start = op.b_start.max(op.b_end.saturating_sub(context));
        }
        group.push(op);
    }
    if !(group.is_empty() || group.len() == 1 && group[0].tag == Tag::Equal) {
        groups.push(group);
    }
    groups
}

/// A hunk's range as the unified format writes it: `start,len`, `start` alone for one
/// line, the line before for none.
fn range(start: usize, end: usize) -> String {
    match end - start {
        1 => format!("{}", start + 1),
        0 => format!("{start},0"),
        n => format!("{},{n}", start + 1),
    }
}

/// The unified diff of the lines `a` and `b` (each with its end), as Python's
/// `difflib.unified_diff` writes it with no dates: empty when nothing differs.
pub fn unified_diff<T: AsRef<str>>(
    a: &[T],
    b: &[T],
    from: &str,
    to: &str,
    context: usize,
) -> String {
    let groups = hunks(opcodes(a, b), context);
    if groups.is_empty() {
        return String::new();
    }
    let mut out = format!("--- {from}\n+++ {to}\n");
    for group in groups {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(first.a_start, last.a_end),
            range(first.b_start, last.b_end)
        ));
        for op in &group {
            let mut lines = |mark: char, lines: &[T]| {
                for line in lines {
                    out.push(mark);
                    out.push_str(line.as_ref());
                }
            };
            let (old, new) = (&a[op.a_start..op.a_end], &b[op.b_start..op.b_end]);
            match op.tag {
                Tag::Equal => lines(' ', old),
                Tag::Delete => lines('-', old),
                Tag::Insert => lines('+', new),
                Tag::Replace => {
                    lines('-', old);
                    lines('+', new);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandball_pycompat::pyops::splitlines_keepends;

    fn diff(a: &str, b: &str) -> String {
        unified_diff(
            &splitlines_keepends(a),
            &splitlines_keepends(b),
            "a",
            "b",
            3,
        )
    }

    #[test]
    fn splits_lines_where_python_does() {
        assert_eq!(
            splitlines_keepends("a\nb\r\nc\rd\x0ce\u{2028}f"),
            ["a\n", "b\r\n", "c\r", "d\x0c", "e\u{2028}", "f"]
        );
        assert!(splitlines_keepends("").is_empty());
        assert_eq!(splitlines_keepends("x\n\n"), ["x\n", "\n"]);
    }

    #[test]
    fn nothing_for_equal_texts() {
        assert_eq!(diff("a\nb\n", "a\nb\n"), "");
        assert_eq!(diff("", ""), "");
    }

    #[test]
    fn ranges_and_context_as_difflib_writes_them() {
        // Each expected text is Python 3's difflib.unified_diff(a, b, 'a', 'b', n=3).
        assert_eq!(diff("", "x\n"), "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n");
        assert_eq!(
            diff("x\ny\n", ""),
            "--- a\n+++ b\n@@ -1,2 +0,0 @@\n-x\n-y\n"
        );
        let a: String = (1..=12).map(|n| format!("{n}\n")).collect();
        let b = a.replace("\n2\n", "\ntwo\n").replace("11\n", "eleven\n");
        assert_eq!(
            diff(&a, &b),
            "--- a\n+++ b\n@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n\
             @@ -8,5 +8,5 @@\n 8\n 9\n 10\n-11\n+eleven\n 12\n"
        );
        // Changes six lines apart share a hunk.
        let b = a.replace("\n2\n", "\ntwo\n").replace("9\n", "nine\n");
        assert!(diff(&a, &b).starts_with("--- a\n+++ b\n@@ -1,12 +1,12 @@\n"));
    }

    #[test]
    fn matches_the_longest_block_first_as_difflib_does() {
        // A header moved down: difflib keeps the long body and moves the three header
        // lines, where a shortest edit script would move the body instead.
        let head = "# one\n# two\n#\n";
        let body = "#\n# body\n#\n";
        let before = format!("{head}{body}x\n");
        let after = format!("#\n# managed\n#\n{head}{body}x\n");
        assert_eq!(
            diff(&before, &after),
            "--- a\n+++ b\n@@ -1,3 +1,6 @@\n+#\n+# managed\n+#\n # one\n # two\n #\n"
        );
        // Python's difflib.SequenceMatcher(None, 'qabxcd', 'abycdf').get_opcodes().
        let chars = |s: &'static str| s.split("").filter(|c| !c.is_empty()).collect::<Vec<_>>();
        let ops: Vec<(Tag, usize, usize, usize, usize)> =
            opcodes(&chars("qabxcd"), &chars("abycdf"))
                .iter()
                .map(|o| (o.tag, o.a_start, o.a_end, o.b_start, o.b_end))
                .collect();
        assert_eq!(
            ops,
            [
                (Tag::Delete, 0, 1, 0, 0),
                (Tag::Equal, 1, 3, 0, 2),
                (Tag::Replace, 3, 4, 2, 3),
                (Tag::Equal, 4, 6, 3, 5),
                (Tag::Insert, 6, 6, 5, 6),
            ]
        );
    }

    #[test]
    fn popular_lines_of_long_texts_only_extend_blocks() {
        // 210 lines, two in three blank: a blank line is popular in the new text (more
        // than 1% of it plus one), so blank lines match only beside a block found
        // through the other lines, and three lines go where difflib without that
        // rule (or a shortest edit) would take them from elsewhere.
        let a: Vec<String> = (0..210)
            .map(|n| {
                if n % 3 == 0 {
                    format!("{n}\n")
                } else {
                    "\n".into()
                }
            })
            .collect();
        let mut b = a.clone();
        b.insert(100, "new\n".into());
        b.drain(5..8);
        let python = "--- a\n+++ b\n@@ -4,9 +4,6 @@\n 3\n \n \n-6\n-\n-\n 9\n \n \n\
                      @@ -98,6 +95,7 @@\n \n \n 99\n+new\n \n \n 102\n";
        assert_eq!(unified_diff(&a, &b, "a", "b", 3), python);
    }
}
