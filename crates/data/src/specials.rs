//! Special tokens matched verbatim in the raw text, before any normalisation, as Hugging Face
//! `tokenizers` matches the added tokens marked `normalized: false`: the leftmost occurrence
//! first, the longest should two start at the same byte. Shared by [`crate::WordPiece`] and
//! [`crate::ClipBpe`].

/// A piece of raw text: a stretch between special tokens, or one special token's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece<'t> {
    /// Text holding no special token (empty between two adjacent ones).
    Text(&'t str),
    /// The id of a special token found in the text.
    Special(u32),
}

/// `text` cut at every special token of `specials` (spelling, id), in order: stretches of text
/// and special ids alternate, starting and ending with a stretch.
pub(crate) fn split_at_specials<'t, S: AsRef<str>>(
    text: &'t str,
    specials: &[(S, u32)],
) -> Vec<Piece<'t>> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some((at, len, id)) = next_special(rest, specials) {
        pieces.push(Piece::Text(&rest[..at]));
        pieces.push(Piece::Special(id));
        rest = &rest[at + len..];
    }
    pieces.push(Piece::Text(rest));
    pieces
}

/// The leftmost special token in `text` (the longest, should two start at the same byte): its
/// byte offset, its length in bytes and its id.
fn next_special<S: AsRef<str>>(text: &str, specials: &[(S, u32)]) -> Option<(usize, usize, u32)> {
    text.char_indices().find_map(|(at, _)| {
        (specials.iter())
            .map(|(name, id)| (name.as_ref(), *id))
            .filter(|(name, _)| !name.is_empty() && text[at..].starts_with(name))
            .max_by_key(|(name, _)| name.len())
            .map(|(name, id)| (at, name.len(), id))
    })
}
