//! WordPiece: ids equal to Hugging Face `tokenizers` on the shipped all-MiniLM-L6-v2
//! tokenizer.json (fixture from scripts/minilm_reference.py), and the algorithm's rules on a
//! tiny vocabulary written here.

use std::io::Write;
use std::path::{Path, PathBuf};

use data::{Encoding, WordPiece};

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
    let err = t.encode("a", 1).unwrap_err().to_string();
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
        let err = WordPiece::from_vocab_file(&path).unwrap_err().to_string();
        assert!(
            err.contains(&path.display().to_string()) && err.contains(message),
            "{err}"
        );
    }
}
