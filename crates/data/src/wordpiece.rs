//! BERT's WordPiece tokenizer for uncased vocabularies: Hugging Face's `tokenizers` crate
//! (BertNormalizer, BertPreTokenizer, WordPiece, the special tokens matched in the raw text) over
//! a `vocab.txt`, so that ids match a shipped `tokenizer.json` such as all-MiniLM-L6-v2's.
//!
//! The crate is built without its default features (the Oniguruma C library and the C++
//! suffix-array trainer), with `fancy-regex`, so it needs no C toolchain.

use std::collections::HashMap;
use std::path::Path;

use tokenizers::models::wordpiece::WordPiece as WordPieceModel;
use tokenizers::normalizers::BertNormalizer;
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
use tokenizers::{AddedToken, Tokenizer};

use crate::error::{DataError, Result};

/// Words longer than this many characters become `[UNK]` (BERT's `max_input_chars_per_word`).
const MAX_WORD_CHARS: usize = 100;

/// Tokens matched verbatim in the raw text before normalisation (the `added_tokens` of BERT's
/// tokenizer.json), so that e.g. "[MASK]" in a sentence is the mask token.
const SPECIAL_TOKENS: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

/// A BERT WordPiece tokenizer over an uncased vocabulary (lower-cases and strips accents).
#[derive(Clone)]
pub struct WordPiece {
    tokenizer: Tokenizer,
    tokens: Vec<String>,
    cls: u32,
    sep: u32,
    pad: u32,
}

impl std::fmt::Debug for WordPiece {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WordPiece")
            .field("vocab_size", &self.tokens.len())
            .finish_non_exhaustive()
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
        let (cls, sep, pad) = (required("[CLS]")?, required("[SEP]")?, required("[PAD]")?);
        // The model's own: required, but not kept here.
        required("[UNK]")?;
        // The file checked above is read again by the crate (into its own map type).
        let utf8 = path.to_str().ok_or_else(|| {
            DataError::file(
                path,
                "the path is not valid UTF-8, which the tokenizer needs",
            )
        })?;
        let model = WordPieceModel::from_file(utf8)
            .unk_token("[UNK]".into())
            .continuing_subword_prefix("##".into())
            .max_input_chars_per_word(MAX_WORD_CHARS)
            .build()
            .map_err(|e| DataError::file(path, format!("not a WordPiece vocabulary: {e}")))?;
        let mut tokenizer = Tokenizer::new(model);
        // clean_text, handle_chinese_chars, strip_accents (None: as lowercase), lowercase.
        tokenizer
            .with_normalizer(Some(BertNormalizer::new(true, true, None, true)))
            .with_pre_tokenizer(Some(BertPreTokenizer));
        let special: Vec<AddedToken> = (SPECIAL_TOKENS.iter())
            .filter(|name| tokens.iter().any(|t| t == *name))
            .map(|name| AddedToken::from(*name, true))
            .collect();
        tokenizer.add_special_tokens(&special);
        Ok(Self {
            tokenizer,
            tokens,
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
        let pieces = (self.tokenizer.encode(text, false))
            .map_err(|e| DataError::invalid(format!("tokenizing {text:?}: {e}")))?;
        let mut ids = vec![self.cls];
        ids.extend(pieces.get_ids());
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
}
