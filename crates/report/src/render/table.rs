//! Markdown table helpers shared by every section of the report.

use std::fmt::Write;

use super::groups::Group;

/// A header row: `first`, then `rest`.
pub(super) fn header_with<'a>(first: &'a str, rest: impl Iterator<Item = &'a str>) -> Vec<String> {
    std::iter::once(first)
        .chain(rest)
        .map(String::from)
        .collect()
}

/// One markdown row per method: its name, then the given cells.
pub(super) fn method_rows(
    groups: &[Group],
    cells: impl Fn(&Group) -> Vec<String>,
) -> Vec<Vec<String>> {
    groups
        .iter()
        .map(|g| std::iter::once(md_text(g.name)).chain(cells(g)).collect())
        .collect()
}

/// Escapes the one character that would break a table cell.
pub(super) fn md_text(s: &str) -> String {
    s.replace('|', "\\|")
}

/// A GitHub-flavoured table; the first `text_cols` columns are left-aligned, the rest (numbers)
/// right-aligned (both said in the rule, so the HTML page aligns them too).
pub(super) fn md_table(
    out: &mut String,
    header: &[String],
    rows: &[Vec<String>],
    text_cols: usize,
) {
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let rule: Vec<&str> = (0..header.len())
        .map(|i| if i < text_cols { ":---" } else { "---:" })
        .collect();
    let _ = writeln!(out, "|{}|", rule.join("|"));
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out.push('\n');
}
