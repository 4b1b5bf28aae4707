//! WordPiece: ids equal to Hugging Face `tokenizers` on the shipped all-MiniLM-L6-v2
//! tokenizer.json (fixture from scripts/minilm_reference.py), equal to the `tokenizers` crate
//! configured as BERT's tokenizer.json configures it on seeded random texts, and the algorithm's
//! rules on a tiny vocabulary written here.

use std::io::Write;
use std::path::{Path, PathBuf};

use data::{Encoding, WordPiece};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use tokenizers::models::wordpiece::WordPiece as WordPieceModel;
use tokenizers::normalizers::BertNormalizer;
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
use tokenizers::{AddedToken, Tokenizer};

fn minilm_vocab() -> PathBuf {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/all-minilm-l6-v2/vocab.txt");
    assert!(
        path.exists(),
        "{} is missing: run `datasets/fetch all-minilm-l6-v2` first (CI fetches it)",
        path.display()
    );
    path
}

#[test]
fn ids_match_hugging_face_tokenizers() {
    let tokenizer = WordPiece::from_vocab_file(&minilm_vocab()).unwrap();
    assert_eq!(tokenizer.vocab_size(), 30522);
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/wordpiece_minilm.json");
    let fixture: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() >= 20, "{} cases", cases.len());
    for case in cases {
        let text = case["text"].as_str().unwrap();
        let max_len = case["max_len"].as_u64().map_or(usize::MAX, |n| n as usize);
        let want: Vec<u32> = case["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|id| id.as_u64().unwrap() as u32)
            .collect();
        let got = tokenizer.encode(text, max_len).unwrap();
        let pieces = |ids: &[u32]| -> Vec<String> {
            ids.iter()
                .map(|&id| tokenizer.token(id).unwrap_or("?").to_string())
                .collect()
        };
        assert_eq!(
            got.ids,
            want,
            "{text:?} (max_len {max_len}):\n got  {:?}\n want {:?}",
            pieces(&got.ids),
            pieces(&want)
        );
        assert_eq!(got.attention_mask, vec![1; want.len()]);
    }
}

/// A vocabulary file: ids are the line numbers (0 = [PAD], 1 = [UNK], 2 = [CLS], 3 = [SEP]).
fn tiny(extra: &[&str]) -> (tempfile::TempDir, WordPiece) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vocab.txt");
    let mut file = std::fs::File::create(&path).unwrap();
    for token in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .iter()
        .chain(extra)
    {
        writeln!(file, "{token}").unwrap();
    }
    let tokenizer = WordPiece::from_vocab_file(&path).unwrap();
    (dir, tokenizer)
}

fn pieces(tokenizer: &WordPiece, text: &str) -> Vec<String> {
    let ids = tokenizer.encode(text, 1000).unwrap().ids;
    ids[1..ids.len() - 1]
        .iter()
        .map(|&id| tokenizer.token(id).unwrap().to_string())
        .collect()
}

#[test]
fn greedy_longest_match_first() {
    let (_dir, t) = tiny(&["un", "una", "##aff", "##able", "##ffable", "aff", "##a"]);
    // "una" is the longest first piece, then "##ffable" beats "##aff" + "##able".
    assert_eq!(pieces(&t, "unaffable"), ["una", "##ffable"]);
    assert_eq!(pieces(&t, "affa"), ["aff", "##a"]);
    // A word whose tail has no piece is one [UNK], with no partial pieces left behind.
    assert_eq!(pieces(&t, "unax aff"), ["[UNK]", "aff"]);
}

#[test]
fn normalises_splits_and_limits_words() {
    let (_dir, t) = tiny(&["cafe", "naive", ",", "!", "x", "##x", "中", "文", "a", "b"]);
    assert_eq!(pieces(&t, "  CAFÉ,\tNaïve!\n"), ["cafe", ",", "naive", "!"]);
    assert_eq!(pieces(&t, "a中文b"), ["a", "中", "文", "b"]);
    // Control and format characters vanish; they do not split words.
    assert_eq!(pieces(&t, "c\u{200b}a\u{0}f\u{ad}e"), ["cafe"]);
    // Exactly 100 characters is still a word; 101 is [UNK].
    let word = |n: usize| "x".repeat(n);
    assert_eq!(pieces(&t, &word(100)).len(), 100);
    assert_eq!(pieces(&t, &format!("{} a", word(101))), ["[UNK]", "a"]);
}

#[test]
fn special_tokens_in_text_are_kept_verbatim() {
    let (_dir, t) = tiny(&["a", "b", "[", "]", "mask"]);
    assert_eq!(pieces(&t, "a[MASK]b"), ["a", "[MASK]", "b"]);
    // Only the exact (cased) spelling is special; "[mask]" is ordinary punctuation and a word.
    assert_eq!(pieces(&t, "[mask]"), ["[", "mask", "]"]);
}

#[test]
fn truncation_and_batch_padding() {
    let (_dir, t) = tiny(&["a", "b", "c"]);
    let e = t.encode("a b c a b", 4).unwrap();
    assert_eq!(e.ids, [2, 5, 6, 3]); // [CLS] a b [SEP]
    assert_eq!(t.encode("a b", 2).unwrap().ids, [2, 3]);
    let batch = t.encode_batch(&["a", "a b c", ""], 16).unwrap();
    assert_eq!(
        batch,
        vec![
            Encoding {
                ids: vec![2, 5, 3, 0, 0],
                attention_mask: vec![1, 1, 1, 0, 0]
            },
            Encoding {
                ids: vec![2, 5, 6, 7, 3],
                attention_mask: vec![1; 5]
            },
            Encoding {
                ids: vec![2, 3, 0, 0, 0],
                attention_mask: vec![1, 1, 0, 0, 0]
            },
        ]
    );
    let err = t
        .encode("a", 1)
        .map_err(|e| data::error_chain(&e))
        .unwrap_err();
    assert!(
        err.contains("max_len = 1") && err.contains("at least 2"),
        "{err}"
    );
}

#[test]
fn bad_vocabularies_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let cases = [
        (
            write("no_cls.txt", "[PAD]\n[UNK]\n[SEP]\n"),
            "no [CLS] token",
        ),
        (
            write("dup.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nword\nword\n"),
            "line 6: token \"word\" repeats line 5",
        ),
        (
            write("empty.txt", "[PAD]\n\n[UNK]\n[CLS]\n[SEP]\n"),
            "line 2: empty token",
        ),
        (dir.path().join("absent.txt"), "cannot read the vocabulary"),
    ];
    for (path, message) in cases {
        let err = WordPiece::from_vocab_file(&path)
            .map_err(|e| data::error_chain(&e))
            .unwrap_err();
        assert!(
            err.contains(&path.display().to_string()) && err.contains(message),
            "{err}"
        );
    }
}

/// The `tokenizers` crate as `WordPiece` was built on it before it was written in the crate:
/// BertNormalizer(clean_text, handle_chinese_chars, strip_accents as lowercase, lowercase),
/// BertPreTokenizer, WordPiece with `##` and `[UNK]` up to 100 characters a word, and the
/// special tokens the vocabulary has added as special (matched verbatim, not normalised).
/// `encode` gives `[CLS] ids [SEP]` as `WordPiece::encode` does.
struct HuggingFace {
    tokenizer: Tokenizer,
    cls: u32,
    sep: u32,
}

impl HuggingFace {
    fn new(vocab: &Path) -> Self {
        let model = WordPieceModel::from_file(vocab.to_str().unwrap())
            .unk_token("[UNK]".into())
            .continuing_subword_prefix("##".into())
            .max_input_chars_per_word(100)
            .build()
            .unwrap();
        let mut tokenizer = Tokenizer::new(model);
        tokenizer
            .with_normalizer(Some(BertNormalizer::new(true, true, None, true)))
            .with_pre_tokenizer(Some(BertPreTokenizer));
        let lines: Vec<String> = std::fs::read_to_string(vocab)
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        let special: Vec<AddedToken> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
            .into_iter()
            .filter(|name| lines.iter().any(|t| t == name))
            .map(|name| AddedToken::from(name, true))
            .collect();
        tokenizer.add_special_tokens(&special);
        let id = |name: &str| lines.iter().position(|t| t == name).unwrap() as u32;
        let (cls, sep) = (id("[CLS]"), id("[SEP]"));
        Self {
            tokenizer,
            cls,
            sep,
        }
    }

    fn encode(&self, text: &str, max_len: usize) -> Vec<u32> {
        let mut ids = vec![self.cls];
        ids.extend(self.tokenizer.encode(text, false).unwrap().get_ids());
        ids.truncate(max_len - 1);
        ids.push(self.sep);
        ids
    }
}

/// Pieces of random texts, separated by single spaces: ASCII words and punctuation, accented
/// Latin (composed and not), Greek and Cyrillic (final sigma), CJK (the blocks at BERT's range
/// edges included), control, format, private-use and unassigned characters, zero-width and
/// combining marks, emoji, the special tokens in and out of words, and characters that NFD
/// decomposes only since Unicode 13.
const POOL: &[&str] = &[
    "the The HELLO hello unaffable running don't x a b word cafe naive mask MASK 123 3.14",
    "e-mail foo_bar C++ #tag @user https://example.org/a?b=1&c=2",
    "! , . ? ' \" ( ) [ ] { } - ... $ + < = > ^ ` | ~ \\ / % & * : ; « » — … 。 ： 「 」",
    "Café naïve façade Ångström résumé ÉCOLE Straße ẞ İstanbul ǅ ﬁne Łódź ÀÉÎÕÜ",
    "cafe\u{301} A\u{30a} ΟΔΟΣ Ελληνικά ΣΊΣΥΦΟΣ σς Русский ЁЖИК ǰ",
    "中文 我爱自然语言处理 日本語 テキスト 한국어 \u{f900} \u{2b81f} \u{2b820} \u{2b91f}",
    "\u{2b920} \u{20000} \u{30000} \u{0} \u{7} \u{1b} \u{7f} \u{85} \u{b} \u{c} \u{1c} \u{1f}",
    "\u{fffd} \u{e000} \u{f0000} \u{378} \u{61c} \u{200b} \u{200c} \u{200d} \u{2060} \u{feff}",
    "\u{ad} \u{301} \u{308} \u{20dd} \u{903} \u{e33} \u{fe0f} \u{16121} \u{11938} \u{113c5}",
    "😀 👍🏽 ❤️ 🥰 👨‍👩‍👧 🇫🇷 🫠 [PAD] [UNK] [CLS] [SEP] [MASK] x[MASK]y [mask] [CLS CLS]",
    "[[MASK]] [MASK][MASK] a[UNK] [SEP]a",
];

/// What goes between two pieces: nothing, spaces, and every kind of whitespace.
const GAPS: &[&str] = &[
    "", " ", " ", " ", "  ", "\t", "\n", "\r\n", "\u{a0}", "\u{3000}", "\u{2028}", "\u{2029}",
    "\u{1680}", "\u{202f}", "\u{2003}",
];

/// One piece: mostly from the pool, sometimes a run of random code points from a few blocks or
/// from anywhere, sometimes a word around the 100-character limit (Hangul syllables decompose
/// into two or three jamo each, so 34 of them is a 102-character word).
fn random_piece(rng: &mut StdRng, pool: &[&str]) -> String {
    match rng.random_range(0..10) {
        0 => {
            let blocks = [
                (0, 0x250),
                (0x300, 0x530),
                (0x2000, 0x2070),
                (0x3000, 0x3100),
                (0x4e00, 0x4e40),
                (0xac00, 0xac20),
                (0x1f300, 0x1fb00),
                (0, 0x11_0000),
            ];
            let (low, high) = blocks[rng.random_range(0..blocks.len())];
            let n = rng.random_range(1..6);
            (0..n)
                .filter_map(|_| char::from_u32(rng.random_range(low..high)))
                .collect()
        }
        1 => {
            let units = ["x", "é", "한", "ab", "una", "中", "σ"];
            let unit = units[rng.random_range(0..units.len())];
            unit.repeat(rng.random_range(30..106))
        }
        _ => pool[rng.random_range(0..pool.len())].to_string(),
    }
}

fn random_text(rng: &mut StdRng, pool: &[&str]) -> String {
    let mut text = String::new();
    for _ in 0..rng.random_range(0..12) {
        text.push_str(GAPS[rng.random_range(0..GAPS.len())]);
        text.push_str(&random_piece(rng, pool));
    }
    text
}

/// Encodes `n` seeded random texts with both, at several `max_len`, and returns every text on
/// which the ids differ (with both id lists).
fn disagreements(vocab: &Path, seed: u64, n: usize) -> Vec<String> {
    let ours = WordPiece::from_vocab_file(vocab).unwrap();
    let theirs = HuggingFace::new(vocab);
    let pool: Vec<&str> = POOL.iter().flat_map(|line| line.split(' ')).collect();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut found = Vec::new();
    for _ in 0..n {
        let text = random_text(&mut rng, &pool);
        let max_len = [2, 3, 5, 8, 16, 64, 512, usize::MAX][rng.random_range(0..8)];
        let (got, want) = (
            ours.encode(&text, max_len).unwrap().ids,
            theirs.encode(&text, max_len),
        );
        if got != want {
            found.push(format!(
                "{text:?} (max_len {max_len}):\n got  {got:?}\n want {want:?}"
            ));
        }
    }
    found
}

#[test]
fn ids_match_the_tokenizers_crate_on_random_texts() {
    let real = disagreements(&minilm_vocab(), 1, 4000);
    // A vocabulary without [MASK] (so "[MASK]" is ordinary text), with lines that end in
    // whitespace (`tokenizers` trims them, and a later line wins over an earlier one that trims
    // to the same token), final and medial sigma, and jamo for decomposed Hangul.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vocab.txt");
    let mut lines = vec![
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "word ", "the\t", "the", "!", ",",
    ];
    lines.extend([
        "[", "]", ".", "mask", "cafe", "naive", "un", "##aff", "##able", "una", "中",
    ]);
    lines.extend([
        "文", "σ", "ς", "##σ", "##ς", "ο", "##δ", "##ο", "ᄒ", "##ᅡ", "##ᆫ", "e", "##e",
    ]);
    lines.extend([
        "x", "##x", "a", "##b", "ab", "i", "##̇", "ﬁ", "##ne", "😀", "ǆ", "##ss",
    ]);
    std::fs::write(&path, lines.join("\n")).unwrap();
    let tiny = disagreements(&path, 2, 4000);
    let all: Vec<&String> = real.iter().chain(&tiny).collect();
    assert!(
        all.is_empty(),
        "{} of 8000 texts differ:\n{}",
        all.len(),
        all.iter()
            .take(20)
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
