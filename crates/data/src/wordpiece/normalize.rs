//! BERT's BasicTokenizer as Hugging Face `tokenizers` runs it: the `BertNormalizer` (clean the
//! text, space out CJK ideographs, strip accents, lower-case) then the `BertPreTokenizer` (split on
//! whitespace, isolate punctuation).
//!
//! The categories come from `unicode_categories`, the tables `tokenizers` itself uses, so that
//! characters whose category changed in later Unicode versions are treated as it treats them.

use unicode_categories::UnicodeCategories;
use unicode_normalization::UnicodeNormalization;

/// The normalised text of one stretch of raw text (between special tokens), in the order of
/// `BertNormalizer(clean_text, handle_chinese_chars, strip_accents, lowercase)`:
///
/// 1. drop NUL, U+FFFD and control characters (Cc, Cf, Co; not tab, newline, carriage return),
///    and turn every remaining whitespace character into a space;
/// 2. put a space on either side of every CJK ideograph, so that each becomes a word;
/// 3. decompose (NFD) and drop the nonspacing marks (Mn): the accents;
/// 4. lower-case character by character (`char::to_lowercase`, so a final capital sigma becomes
///    `σ`, not the `ς` of `str::to_lowercase`).
pub(super) fn normalize(text: &str) -> String {
    let mut spaced = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if is_whitespace(c) {
            spaced.push(' ');
        } else if is_cjk_ideograph(c) {
            spaced.extend([' ', c, ' ']);
        } else {
            spaced.push(c);
        }
    }
    let mut normalized = String::with_capacity(spaced.len());
    for c in spaced.nfd().filter(|c| !c.is_mark_nonspacing()) {
        normalized.extend(c.to_lowercase());
    }
    normalized
}

/// The words of a normalised text, in order: split on whitespace (dropped), then every
/// punctuation character on its own.
pub(super) fn words(normalized: &str) -> Vec<&str> {
    let mut words = Vec::new();
    for chunk in normalized.split(char::is_whitespace) {
        let mut start = 0;
        for (at, c) in chunk.char_indices() {
            if is_punctuation(c) {
                if start < at {
                    words.push(&chunk[start..at]);
                }
                let end = at + c.len_utf8();
                words.push(&chunk[at..end]);
                start = end;
            }
        }
        if start < chunk.len() {
            words.push(&chunk[start..]);
        }
    }
    words
}

/// Whitespace: Rust's `char::is_whitespace` (the Unicode White_Space property, which includes tab,
/// newline and carriage return).
fn is_whitespace(c: char) -> bool {
    c.is_whitespace()
}

/// Control characters, removed by the cleaning: the "Other" categories Cc, Cf and Co (the table
/// holds no Cn, so unassigned code points stay), except tab, newline and carriage return, which
/// are whitespace.
fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && c.is_other()
}

/// Punctuation: every ASCII punctuation character (`$`, `+`, `<`, `=`, `>`, `^`, `` ` ``, `|`,
/// `~` included, though Unicode files them as symbols) and every P* category.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || c.is_punctuation()
}

/// The CJK Unified Ideographs blocks BERT spaces out (its `_is_chinese_char`): the main block,
/// extensions A to E, and the compatibility ideographs with their supplement. Hangul, kana and
/// the later extensions are not among them. Extension E starts at U+2B920 here, as in
/// `tokenizers`, where BERT's Python starts it at U+2B820: the ids follow `tokenizers`.
fn is_cjk_ideograph(c: char) -> bool {
    matches!(
        u32::from(c),
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}
