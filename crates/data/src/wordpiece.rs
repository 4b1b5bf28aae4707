//! BERT's WordPiece tokenizer for uncased vocabularies, following Hugging Face `tokenizers`
//! (BertNormalizer, BertPreTokenizer, WordPiece, the `[CLS] A [SEP]` template) so that ids match
//! a shipped `tokenizer.json` such as all-MiniLM-L6-v2's.
//!
//! Unicode data: NFD from `unicode-normalization`, general categories from `finl_unicode`
//! (Unicode 18). Hugging Face uses older tables, so characters assigned or recategorised since
//! then may tokenise differently (rare: they are unknown to the vocabulary either way).

use std::collections::HashMap;
use std::path::Path;

use finl_unicode::categories::CharacterCategories;
use unicode_normalization::UnicodeNormalization;

use crate::error::{DataError, Result};

/// Words longer than this many characters become `[UNK]` (BERT's `max_input_chars_per_word`).
const MAX_WORD_CHARS: usize = 100;

/// Tokens matched verbatim in the raw text before normalisation (the `added_tokens` of BERT's
/// tokenizer.json), so that e.g. "[MASK]" in a sentence is the mask token.
const SPECIAL_TOKENS: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

/// A BERT WordPiece tokenizer over an uncased vocabulary (lower-cases and strips accents).
#[derive(Debug, Clone)]
pub struct WordPiece {
    vocab: HashMap<String, u32>,
    tokens: Vec<String>,
    special: Vec<(&'static str, u32)>,
    cls: u32,
    sep: u32,
    unk: u32,
    pad: u32,
}

/// Token ids of one text, `[CLS] ... [SEP]` then any padding, and the attention mask
/// (1 = token, 0 = padding); both have the same length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoding {
    /// Vocabulary ids.
    pub ids: Vec<u32>,
    /// 1 for real tokens, 0 for padding.
    pub attention_mask: Vec<u32>,
}

impl WordPiece {
    /// Reads a `vocab.txt` (one token per line, the line number is the id). `[CLS]`, `[SEP]`,
    /// `[UNK]` and `[PAD]` must be present.
    pub fn from_vocab_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| DataError::file(path, format!("cannot read the vocabulary: {e}")))?;
        let mut vocab = HashMap::new();
        let mut tokens = Vec::new();
        for (line, token) in text.lines().enumerate() {
            if token.is_empty() {
                return Err(DataError::file(
                    path,
                    format!(
                        "line {}: empty token; expected one token per line",
                        line + 1
                    ),
                ));
            }
            let id =
                u32::try_from(line).map_err(|_| DataError::file(path, "more than 2^32 tokens"))?;
            if let Some(first) = vocab.insert(token.to_string(), id) {
                return Err(DataError::file(
                    path,
                    format!(
                        "line {}: token {token:?} repeats line {}; expected unique tokens",
                        line + 1,
                        first + 1
                    ),
                ));
            }
            tokens.push(token.to_string());
        }
        let required = |name: &str| {
            vocab.get(name).copied().ok_or_else(|| {
                DataError::file(
                    path,
                    format!("no {name} token; expected a BERT vocabulary with [CLS], [SEP], [UNK], [PAD]"),
                )
            })
        };
        let (cls, sep, unk, pad) = (
            required("[CLS]")?,
            required("[SEP]")?,
            required("[UNK]")?,
            required("[PAD]")?,
        );
        let special = SPECIAL_TOKENS
            .iter()
            .filter_map(|&name| vocab.get(name).map(|&id| (name, id)))
            .collect();
        Ok(Self {
            vocab,
            tokens,
            special,
            cls,
            sep,
            unk,
            pad,
        })
    }

    /// Number of tokens in the vocabulary.
    pub fn vocab_size(&self) -> usize {
        self.tokens.len()
    }

    /// The token string of an id, if the id is in the vocabulary.
    pub fn token(&self, id: u32) -> Option<&str> {
        self.tokens.get(id as usize).map(String::as_str)
    }

    /// `[CLS] pieces [SEP]`, keeping the first `max_len - 2` pieces (no padding: the mask is
    /// all ones). `max_len` must be at least 2.
    pub fn encode(&self, text: &str, max_len: usize) -> Result<Encoding> {
        if max_len < 2 {
            return Err(DataError::invalid(format!(
                "max_len = {max_len}: expected at least 2 (room for [CLS] and [SEP])"
            )));
        }
        let mut ids = vec![self.cls];
        self.tokenize(text, &mut ids);
        ids.truncate(max_len - 1);
        ids.push(self.sep);
        let attention_mask = vec![1; ids.len()];
        Ok(Encoding {
            ids,
            attention_mask,
        })
    }

    /// Encodes every text like [`encode`](Self::encode), then pads all to the longest with
    /// `[PAD]` (mask 0), ready to stack into a `[B, T]` batch.
    pub fn encode_batch<S: AsRef<str>>(
        &self,
        texts: &[S],
        max_len: usize,
    ) -> Result<Vec<Encoding>> {
        let mut batch = texts
            .iter()
            .map(|t| self.encode(t.as_ref(), max_len))
            .collect::<Result<Vec<_>>>()?;
        let longest = batch.iter().map(|e| e.ids.len()).max().unwrap_or(0);
        for e in &mut batch {
            e.ids.resize(longest, self.pad);
            e.attention_mask.resize(longest, 0);
        }
        Ok(batch)
    }

    /// Appends the word-piece ids of `text` (no `[CLS]`/`[SEP]`): special tokens are cut out
    /// of the raw text first, the rest is normalised and split into words.
    fn tokenize(&self, text: &str, out: &mut Vec<u32>) {
        let mut rest = text;
        // Leftmost match, the longest on ties, as Hugging Face matches added tokens.
        while let Some((at, name, id)) = self
            .special
            .iter()
            .filter_map(|&(name, id)| rest.find(name).map(|at| (at, name, id)))
            .min_by_key(|&(at, name, _)| (at, std::cmp::Reverse(name.len())))
        {
            self.tokenize_plain(&rest[..at], out);
            out.push(id);
            rest = &rest[at + name.len()..];
        }
        self.tokenize_plain(rest, out);
    }

    fn tokenize_plain(&self, text: &str, out: &mut Vec<u32>) {
        let normalized = normalize(text);
        for word in normalized.split(char::is_whitespace) {
            for piece in split_punctuation(word) {
                self.word_pieces(piece, out);
            }
        }
    }

    /// Greedy longest-match-first split of one word into vocabulary pieces (`##` marks a
    /// continuation); the whole word is `[UNK]` if any part has no match or it is too long.
    fn word_pieces(&self, word: &str, out: &mut Vec<u32>) {
        if word.chars().count() > MAX_WORD_CHARS {
            out.push(self.unk);
            return;
        }
        let first = out.len();
        let mut candidate = String::new();
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len();
            let id = loop {
                candidate.clear();
                if start > 0 {
                    candidate.push_str("##");
                }
                candidate.push_str(&word[start..end]);
                if let Some(&id) = self.vocab.get(&candidate) {
                    break Some(id);
                }
                // Shrink by one character (not byte) from the right.
                match word[start..end].char_indices().next_back() {
                    Some((last, _)) if last > 0 => end = start + last,
                    _ => break None,
                }
            };
            match id {
                Some(id) => {
                    out.push(id);
                    start = end;
                }
                None => {
                    out.truncate(first);
                    out.push(self.unk);
                    return;
                }
            }
        }
    }
}

/// BertNormalizer: drop NUL, U+FFFD and control/format/private-use characters, map whitespace
/// to spaces, put spaces around CJK ideographs, strip accents (NFD, drop non-spacing marks),
/// lower-case.
fn normalize(text: &str) -> String {
    let mut cleaned = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if c.is_whitespace() {
            cleaned.push(' ');
        } else if is_cjk(c) {
            cleaned.extend([' ', c, ' ']);
        } else {
            cleaned.push(c);
        }
    }
    cleaned
        .nfd()
        .filter(|c| !c.is_mark_nonspacing())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Hugging Face's control test: categories Cc, Cf and Co, except tab, newline and carriage
/// return (whitespace). Unassigned code points are kept.
fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && (c.is_control() || c.is_format() || c.is_private_use())
}

/// The CJK ideograph blocks BERT splits into single characters (Hugging Face's ranges, which
/// start Extension E at U+2B920 where Google's BERT starts it at U+2B820).
fn is_cjk(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x2_0000..=0x2_A6DF
            | 0x2_A700..=0x2_B73F
            | 0x2_B740..=0x2_B81F
            | 0x2_B920..=0x2_CEAF
            | 0xF900..=0xFAFF
            | 0x2_F800..=0x2_FA1F
    )
}

/// ASCII symbols (as BERT counts them) and Unicode punctuation (P*).
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || c.is_punctuation()
}

/// Splits a whitespace-free word so that every punctuation character is its own piece.
fn split_punctuation(word: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for (at, c) in word.char_indices() {
        if is_punctuation(c) {
            if start < at {
                pieces.push(&word[start..at]);
            }
            let end = at + c.len_utf8();
            pieces.push(&word[at..end]);
            start = end;
        }
    }
    if start < word.len() {
        pieces.push(&word[start..]);
    }
    pieces
}
