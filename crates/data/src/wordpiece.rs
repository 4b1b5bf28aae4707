//! BERT's WordPiece tokenizer for uncased vocabularies, written here to give the ids of Hugging
//! Face's `tokenizers` crate configured as BERT's tokenizer.json configures it (BertNormalizer,
//! BertPreTokenizer, WordPiece, the special tokens matched in the raw text) over a `vocab.txt`,
//! so that ids match a shipped `tokenizer.json` such as all-MiniLM-L6-v2's. That crate cost about
//! 42 CPU seconds of a fresh release build with its regex stack; it stays a dev-dependency, and
//! the tests check this tokenizer against it on thousands of random texts.
//!
//! Encoding a text: split the raw text at the special tokens, normalise and split each stretch
//! between them into words (`normalize`), then cut every word into the longest vocabulary pieces
//! from the left (`WordPiece::push_pieces`).
//!
//! One known difference: NFD here follows current Unicode (`unicode-normalization`), where
//! `tokenizers` decomposes with Unicode 9 tables. The 21 characters that NFD decomposes only
//! since then (in Dives Akuru, Todhri, Tulu-Tigalari, Gurung Khema and Kirat Rai) give other
//! pieces here, which changes ids only for a vocabulary that holds those characters; BERT's
//! vocabularies predate them, so they are `[UNK]` either way.

mod normalize;

use std::collections::HashMap;
use std::path::Path;

use crate::error::{DataError, Result};
use crate::specials::{Piece, split_at_specials};
use crate::table_sizes::debug_sizes;

/// Words longer than this many characters become `[UNK]` (BERT's `max_input_chars_per_word`).
const MAX_WORD_CHARS: usize = 100;

/// Marks a piece that continues a word (not its first).
const CONTINUATION: &str = "##";

/// Tokens matched verbatim in the raw text before normalisation (the `added_tokens` of BERT's
/// tokenizer.json), so that e.g. "[MASK]" in a sentence is the mask token.
const SPECIAL_TOKENS: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

/// A BERT WordPiece tokenizer over an uncased vocabulary (lower-cases and strips accents).
#[derive(Clone)]
pub struct WordPiece {
    /// Piece -> id, for matching words. Keys are the vocabulary lines without trailing
    /// whitespace, and a later line wins over an earlier one that trims to the same key, as in
    /// `tokenizers`' reading of a `vocab.txt`.
    pieces: HashMap<String, u32>,
    /// The special tokens the vocabulary has, with their ids, matched in the raw text.
    specials: Vec<(&'static str, u32)>,
    tokens: Vec<String>,
    unk: u32,
    cls: u32,
    sep: u32,
    pad: u32,
}

impl std::fmt::Debug for WordPiece {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        debug_sizes(f, "WordPiece", &[("vocab_size", self.tokens.len())])
    }
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

impl Encoding {
    /// `start ids end`, `ids` cut so that the whole is at most `len` long (`len` >= 2, checked
    /// by the caller), with a mask of ones.
    pub(crate) fn framed(start: u32, ids: Vec<u32>, end: u32, len: usize) -> Self {
        let mut framed = vec![start];
        framed.extend(ids);
        framed.truncate(len - 1);
        framed.push(end);
        let attention_mask = vec![1; framed.len()];
        Self {
            ids: framed,
            attention_mask,
        }
    }

    /// Pads every row to the longest with `pad` (mask 0), ready to stack into a `[B, T]` batch.
    pub(crate) fn pad_to_longest(rows: &mut [Encoding], pad: u32) {
        let longest = rows.iter().map(|e| e.ids.len()).max().unwrap_or(0);
        for row in rows {
            row.ids.resize(longest, pad);
            row.attention_mask.resize(longest, 0);
        }
    }
}

impl WordPiece {
    /// Reads a `vocab.txt` (one token per line, the line number is the id). `[CLS]`, `[SEP]`,
    /// `[UNK]` and `[PAD]` must be present.
    pub fn from_vocab_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| DataError::caused(path, "cannot read the vocabulary", e))?;
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
        let (cls, sep, pad) = (required("[CLS]")?, required("[SEP]")?, required("[PAD]")?);
        required("[UNK]")?;
        let mut pieces = HashMap::with_capacity(tokens.len());
        for (id, token) in (0..).zip(&tokens) {
            pieces.insert(token.trim_end().to_string(), id);
        }
        // [UNK] and the special tokens take their ids from the pieces (the last line that trims
        // to them), as in `tokenizers`; a line equal to the token guarantees there is one.
        let unk = pieces["[UNK]"];
        let specials = (SPECIAL_TOKENS.iter())
            .filter(|name| vocab.contains_key(**name))
            .map(|name| (*name, pieces[*name]))
            .collect();
        Ok(Self {
            pieces,
            specials,
            tokens,
            unk,
            cls,
            sep,
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
        let mut pieces = Vec::new();
        self.push_text(text, &mut pieces);
        Ok(Encoding::framed(self.cls, pieces, self.sep, max_len))
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
        Encoding::pad_to_longest(&mut batch, self.pad);
        Ok(batch)
    }

    /// Appends the ids of a raw text: the special tokens found in it verbatim, and the pieces of
    /// the words of the stretches between them.
    fn push_text(&self, text: &str, ids: &mut Vec<u32>) {
        for piece in split_at_specials(text, &self.specials) {
            match piece {
                Piece::Text(stretch) => self.push_stretch(stretch, ids),
                Piece::Special(id) => ids.push(id),
            }
        }
    }

    /// Appends the pieces of a stretch of raw text holding no special token.
    fn push_stretch(&self, stretch: &str, ids: &mut Vec<u32>) {
        if stretch.is_empty() {
            return;
        }
        let normalized = normalize::normalize(stretch);
        for word in normalize::words(&normalized) {
            self.push_pieces(word, ids);
        }
    }

    /// Appends the pieces of one word, greedily longest first from the left, every piece after
    /// the first looked up with the `##` prefix. A word longer than [`MAX_WORD_CHARS`]
    /// characters, or one with a tail no piece matches, is a single `[UNK]`.
    fn push_pieces(&self, word: &str, ids: &mut Vec<u32>) {
        if word.chars().count() > MAX_WORD_CHARS {
            ids.push(self.unk);
            return;
        }
        let first = ids.len();
        let mut key = String::with_capacity(CONTINUATION.len() + word.len());
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len();
            let found = loop {
                key.clear();
                if start > 0 {
                    key.push_str(CONTINUATION);
                }
                key.push_str(&word[start..end]);
                if let Some(&id) = self.pieces.get(&key) {
                    break Some(id);
                }
                // One character shorter; none left means no piece starts here.
                match word[start..end].char_indices().next_back() {
                    Some((0, _)) | None => break None,
                    Some((last, _)) => end = start + last,
                }
            };
            let Some(id) = found else {
                ids.truncate(first);
                ids.push(self.unk);
                return;
            };
            ids.push(id);
            start = end;
        }
    }
}
