//! CLIP's byte-level BPE tokenizer, written here to give the ids of transformers 5's
//! `CLIPTokenizer` (backed by Hugging Face `tokenizers`: the `CLIPTokenizerFast` of transformers
//! 4) for CLIP's text tower: class names and prompt templates become token ids. Checked against
//! transformers on 1,313 texts (scripts/clip_tokenizer_fixtures.py) and against the `tokenizers`
//! crate on 3,000 seeded random ones (tests/clip_bpe.rs).
//!
//! Encoding a text: split the raw text at the special tokens (matched verbatim: the start, end,
//! unknown and padding tokens), normalise each stretch between them and cut it into words by
//! CLIP's pattern (`text`), write each word's UTF-8 bytes as GPT-2's byte characters and merge
//! them by rank with `</w>` on the last (`ClipBpe::push_word`). The ids are
//! `<|startoftext|> ... <|endoftext|>`, cut to the context length keeping the end token.
//!
//! Where transformers 4's pure-Python `CLIPTokenizer` (the slow one, without ftfy; transformers
//! 5 dropped it) gave other ids, these follow the fast one. The slow one removed every C*
//! character but tab, newline and carriage return (zero-width spaces, the joiners in emoji,
//! U+180E, soft hyphens, vertical tab and NEL, private-use and unassigned code points), spaced
//! out CJK ideographs (one word each), lower-cased with Python's `str.lower` (a final sigma `ς`)
//! and matched `<|ENDOFTEXT|>` in any case as the special token. Out of the fixture's 1,313 texts
//! it differs on 341, none of them one of the 580 prompts.
//!
//! One known difference from `tokenizers`: NFC here follows current Unicode
//! (`unicode-normalization`), where `tokenizers` composes with older tables. Every code point
//! alone normalises as there (tested on all of them), but the sequences that compose only since
//! Unicode 13 (a vowel sign pair in Dives Akuru, Tulu-Tigalari, Gurung Khema or Kirat Rai) are
//! one character here and two there, which changes ids only in those scripts.

mod load;
mod tables;
mod text;

use std::collections::HashMap;
use std::path::Path;

use crate::error::{DataError, Result};
use crate::specials::{Piece, split_at_specials};
use crate::table_sizes::debug_sizes;
use crate::wordpiece::Encoding;

/// CLIP's context length: the text tower has 77 positions.
pub const CLIP_CONTEXT_LENGTH: usize = 77;

/// The end-of-word suffix CLIP's vocabulary spells the last piece of a word with.
const END_OF_WORD: &str = "</w>";

/// transformers' default special tokens for CLIP, in the order of `load::ROLES` (start, end,
/// unknown, padding): openai's checkpoints pad with `<|endoftext|>`, LAION's with `!`.
const DEFAULT_SPECIALS: [&str; 4] = [
    "<|startoftext|>",
    "<|endoftext|>",
    "<|endoftext|>",
    "<|endoftext|>",
];

/// A merge's rank (lower merges first) and the id of the merged piece.
#[derive(Debug, Clone, Copy)]
struct Merge {
    rank: u32,
    id: u32,
}

/// CLIP's tokenizer: byte-level BPE over a `vocab.json` and `merges.txt` (or a `tokenizer.json`).
#[derive(Clone)]
pub struct ClipBpe {
    vocab: HashMap<String, u32>,
    /// Id -> token (ids are dense, checked when reading).
    tokens: Vec<String>,
    /// (left id, right id) -> the merge.
    merges: HashMap<(u32, u32), Merge>,
    /// The id of each byte's character alone, and with `</w>` (the last of a word); `None`
    /// where the vocabulary lacks it, which gives the unknown token.
    byte_ids: [Option<u32>; 256],
    end_ids: [Option<u32>; 256],
    /// Start, end, unknown and padding tokens (spelling, id), as `DEFAULT_SPECIALS`; all four
    /// are matched in the raw text, as transformers registers them.
    specials: [(String, u32); 4],
}

impl std::fmt::Debug for ClipBpe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sizes = [
            ("vocab_size", self.tokens.len()),
            ("merges", self.merges.len()),
        ];
        debug_sizes(f, "ClipBpe", &sizes)
    }
}

/// A batch of encodings padded to a common length, and where CLIP's text tower pools each row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClipBatch {
    /// One encoding per text, padded with the padding token (mask 0) to the longest.
    pub rows: Vec<Encoding>,
    /// Per row, the position of its first end token (`<|endoftext|>`): where transformers'
    /// `CLIPTextTransformer` pools when the config's `eos_token_id` is the end token's id.
    /// openai's configs say `eos_token_id` = 2, for which transformers pools at the largest id
    /// instead ([`ClipBatch::argmax_positions`]); in CLIP's vocabularies the end token has the
    /// largest id, so both give these positions.
    pub eos_positions: Vec<usize>,
}

impl ClipBatch {
    /// Per row, the position of its largest id (the first, should it occur twice): transformers'
    /// pooling for configs with the legacy `eos_token_id` = 2.
    pub fn argmax_positions(&self) -> Vec<usize> {
        (self.rows.iter())
            .map(|row| {
                (row.ids.iter().enumerate())
                    .max_by_key(|&(at, id)| (id, std::cmp::Reverse(at)))
                    .map_or(0, |(at, _)| at)
            })
            .collect()
    }
}

impl ClipBpe {
    /// Reads a `vocab.json` (token -> id) and a `merges.txt` as CLIP's Hugging Face checkpoints
    /// hold them, with transformers' default special tokens (`<|startoftext|>`, and
    /// `<|endoftext|>` as end, unknown and padding token).
    pub fn from_files(vocab: &Path, merges: &Path) -> Result<Self> {
        Self::build(load::read_vocab_merges(vocab, merges)?)
    }

    /// Reads the BPE model of a `tokenizer.json` (what transformers 5's `save_pretrained`
    /// writes), with the default special tokens.
    pub fn from_tokenizer_json(path: &Path) -> Result<Self> {
        Self::build(load::read_tokenizer_json(path)?)
    }

    /// Reads a tokenizer folder as transformers does: `tokenizer.json` if present, else
    /// `vocab.json` and `merges.txt`; then the special tokens that `tokenizer_config.json` and
    /// `special_tokens_map.json` name, where present (LAION's checkpoints pad with `!`).
    pub fn from_dir(dir: &Path) -> Result<Self> {
        let json = dir.join("tokenizer.json");
        let mut tokenizer = if json.is_file() {
            Self::from_tokenizer_json(&json)?
        } else if dir.join("vocab.json").is_file() {
            Self::from_files(&dir.join("vocab.json"), &dir.join("merges.txt"))?
        } else {
            let message = "no tokenizer.json, nor vocab.json and merges.txt: expected a CLIP tokenizer folder";
            return Err(DataError::file(dir, message));
        };
        for (role, name, path) in load::read_special_names(dir)? {
            tokenizer = tokenizer.with_special(role, &name, &path)?;
        }
        Ok(tokenizer)
    }

    /// The same tokenizer padding with `token`, which must be in the vocabulary. Like
    /// transformers, it is then matched in the raw text too (with `!`, every `!` is that id).
    pub fn with_pad_token(self, token: &str) -> Result<Self> {
        let Some(&id) = self.vocab.get(token) else {
            return Err(DataError::invalid(format!(
                "pad token {token:?} is not in the vocabulary"
            )));
        };
        let mut tokenizer = self;
        tokenizer.specials[3] = (token.to_string(), id);
        Ok(tokenizer)
    }

    fn with_special(mut self, role: &str, name: &str, path: &Path) -> Result<Self> {
        let Some(&id) = self.vocab.get(name) else {
            let message = format!("{role} {name:?} is not in the vocabulary");
            return Err(DataError::file(path, message));
        };
        if let Some(at) = load::ROLES.iter().position(|r| *r == role) {
            self.specials[at] = (name.to_string(), id);
        }
        Ok(self)
    }

    /// Checks the vocabulary (ids dense and unique, the default specials present) and turns
    /// the merges into id pairs, each piece and each result looked up in the vocabulary.
    fn build(source: load::Source) -> Result<Self> {
        let load::Source {
            vocab,
            vocab_path,
            merges: merge_lines,
            merges_path,
        } = source;
        let mut tokens = vec![None; vocab.len()];
        for (token, &id) in &vocab {
            match tokens.get_mut(id as usize) {
                Some(slot @ None) => *slot = Some(token.clone()),
                _ => {
                    let message = format!(
                        "token {token:?} has id {id}; expected ids 0..{} each used once",
                        vocab.len()
                    );
                    return Err(DataError::file(&vocab_path, message));
                }
            }
        }
        let tokens: Vec<String> = tokens.into_iter().flatten().collect();
        let lookup = |piece: &str, at: &str, merge: &load::Merge| {
            vocab.get(piece).copied().ok_or_else(|| {
                let message = format!(
                    "{at}: merge {:?} needs {piece:?}, which is not in the vocabulary {}",
                    format!("{} {}", merge.left, merge.right),
                    vocab_path.display()
                );
                DataError::file(&merges_path, message)
            })
        };
        let mut merges = HashMap::with_capacity(merge_lines.len());
        for (rank, merge) in (0..).zip(&merge_lines) {
            let left = lookup(&merge.left, &merge.at, merge)?;
            let right = lookup(&merge.right, &merge.at, merge)?;
            let id = lookup(&format!("{}{}", merge.left, merge.right), &merge.at, merge)?;
            // A pair listed twice takes its last rank, as `tokenizers` builds its map.
            merges.insert((left, right), Merge { rank, id });
        }
        let chars = text::byte_chars();
        let byte_ids = chars.map(|c| vocab.get(c.to_string().as_str()).copied());
        let end_ids = chars.map(|c| vocab.get(&format!("{c}{END_OF_WORD}")).copied());
        let specials = DEFAULT_SPECIALS
            .map(|name| vocab.get(name).map(|&id| (name.to_string(), id)))
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .and_then(|found| <[(String, u32); 4]>::try_from(found).ok())
            .ok_or_else(|| {
                let message = "expected CLIP's special tokens <|startoftext|> and <|endoftext|>";
                DataError::file(&vocab_path, message)
            })?;
        Ok(Self {
            vocab,
            tokens,
            merges,
            byte_ids,
            end_ids,
            specials,
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

    /// The id of a token string, if it is in the vocabulary.
    pub fn id(&self, token: &str) -> Option<u32> {
        self.vocab.get(token).copied()
    }

    /// The start token's id (`<|startoftext|>`).
    pub fn bos_id(&self) -> u32 {
        self.specials[0].1
    }

    /// The end token's id (`<|endoftext|>`), where the text tower pools.
    pub fn eos_id(&self) -> u32 {
        self.specials[1].1
    }

    /// The padding token's id.
    pub fn pad_id(&self) -> u32 {
        self.specials[3].1
    }

    /// The ids of a text alone: no start or end token, no truncation.
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        for piece in split_at_specials(text, &self.specials) {
            match piece {
                Piece::Special(id) => ids.push(id),
                Piece::Text(stretch) => {
                    for word in text::words(&text::normalize(stretch)) {
                        self.push_word(word, &mut ids);
                    }
                }
            }
        }
        ids
    }

    /// `<|startoftext|> ids <|endoftext|>`, keeping the first `context_length - 2` ids of the
    /// text (transformers' `truncation=True, max_length=context_length`); no padding, so the
    /// mask is all ones. `context_length` must be at least 2.
    pub fn encode(&self, text: &str, context_length: usize) -> Result<Encoding> {
        if context_length < 2 {
            return Err(DataError::invalid(format!(
                "context length {context_length}: expected at least 2 (the start and end tokens)"
            )));
        }
        let ids = self.tokenize(text);
        Ok(Encoding::framed(
            self.bos_id(),
            ids,
            self.eos_id(),
            context_length,
        ))
    }

    /// Encodes every text like [`encode`](Self::encode), then pads all to the longest with the
    /// padding token (mask 0), ready to stack into a `[B, T]` batch, with each row's pooling
    /// position.
    pub fn encode_batch<S: AsRef<str>>(
        &self,
        texts: &[S],
        context_length: usize,
    ) -> Result<ClipBatch> {
        let mut rows = (texts.iter())
            .map(|t| self.encode(t.as_ref(), context_length))
            .collect::<Result<Vec<_>>>()?;
        let eos_positions = (rows.iter())
            .map(|row| row.ids.iter().position(|&id| id == self.eos_id()))
            .map(|at| at.unwrap_or(0))
            .collect();
        Encoding::pad_to_longest(&mut rows, self.pad_id());
        Ok(ClipBatch {
            rows,
            eos_positions,
        })
    }

    /// Appends the ids of one word: a symbol per UTF-8 byte (its GPT-2 character, the last
    /// with `</w>`; the unknown token where the vocabulary lacks one), then, while any
    /// adjacent pair has a merge, the pair of lowest rank merged, the leftmost on a tie (the
    /// order `tokenizers`' priority queue takes).
    fn push_word(&self, word: &str, ids: &mut Vec<u32>) {
        let unk = self.specials[2].1;
        let bytes = word.as_bytes();
        let mut symbols: Vec<u32> = (bytes.iter().enumerate())
            .map(|(at, &b)| {
                let table = if at + 1 == bytes.len() {
                    &self.end_ids
                } else {
                    &self.byte_ids
                };
                table[usize::from(b)].unwrap_or(unk)
            })
            .collect();
        loop {
            let best = (symbols.windows(2).enumerate())
                .filter_map(|(at, pair)| {
                    self.merges
                        .get(&(pair[0], pair[1]))
                        .map(|m| (m.rank, at, m.id))
                })
                .min();
            let Some((_, at, id)) = best else { break };
            symbols[at] = id;
            symbols.remove(at + 1);
        }
        ids.extend(symbols);
    }
}
