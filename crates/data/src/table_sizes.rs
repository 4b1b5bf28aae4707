//! How the tokenizers print: their name and the sizes of their tables, never the tables
//! themselves (tens of thousands of entries). Shared by [`crate::WordPiece`] and
//! [`crate::ClipBpe`].

use std::fmt::{Formatter, Result};

/// `name { table: size, .. }` for each (table, size).
pub(crate) fn debug_sizes(f: &mut Formatter<'_>, name: &str, sizes: &[(&str, usize)]) -> Result {
    let mut out = f.debug_struct(name);
    for (table, size) in sizes {
        out.field(table, size);
    }
    out.finish_non_exhaustive()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Tokenizer;

    impl std::fmt::Debug for Tokenizer {
        fn fmt(&self, f: &mut Formatter<'_>) -> Result {
            debug_sizes(f, "Tokenizer", &[("vocab_size", 49408), ("merges", 2)])
        }
    }

    #[test]
    fn sizes_print_in_place_of_the_tables() {
        assert_eq!(
            format!("{Tokenizer:?}"),
            "Tokenizer { vocab_size: 49408, merges: 2, .. }"
        );
    }
}
