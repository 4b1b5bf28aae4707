//! ClipBpe: ids equal to transformers 5's `CLIPTokenizer` on 1,300 texts over a vocabulary built
//! from CLIP's first 1,500 merges (fixtures from scripts/clip_tokenizer_fixtures.py, read both
//! from vocab.json + merges.txt and from the tokenizer.json transformers saved), the padded batch
//! and its pooling positions, and the merge order on a 10-merge vocabulary derived by hand.

use std::io::Read;
use std::path::{Path, PathBuf};

use data::{CLIP_CONTEXT_LENGTH, ClipBpe};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/clip_bpe")
}

fn reference() -> Value {
    let mut text = String::new();
    let file = std::fs::File::open(fixtures().join("cases.json.gz")).unwrap();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn ids(value: &Value) -> Vec<u32> {
    (value.as_array().unwrap().iter())
        .map(|id| u32::try_from(id.as_u64().unwrap()).unwrap())
        .collect()
}

fn spell(tokenizer: &ClipBpe, ids: &[u32]) -> Vec<String> {
    (ids.iter())
        .map(|&id| tokenizer.token(id).unwrap_or("?").to_string())
        .collect()
}

/// The ids of every fixture text, from both files transformers reads, against its own ids.
#[test]
fn ids_match_transformers() {
    let reference = reference();
    let cases = reference["cases"].as_array().unwrap();
    assert!(cases.len() >= 1000, "{} cases", cases.len());
    let from_files = ClipBpe::from_dir(&fixtures()).unwrap();
    let from_json = ClipBpe::from_dir(&fixtures().join("saved")).unwrap();
    assert_eq!(from_files.vocab_size(), 256 * 2 + 1500 + 2);
    assert_eq!(from_json.vocab_size(), from_files.vocab_size());
    let mut wrong = Vec::new();
    for case in cases {
        let [group, text, max_len, want] = case.as_array().unwrap().as_slice() else {
            panic!("case {case}")
        };
        let (text, want) = (text.as_str().unwrap(), ids(want));
        let max_len = max_len.as_u64().unwrap() as usize;
        for tokenizer in [&from_files, &from_json] {
            let got = tokenizer.encode(text, max_len).unwrap();
            assert_eq!(got.attention_mask, vec![1; got.ids.len()]);
            if got.ids != want {
                wrong.push(format!(
                    "{group} {text:?} (max {max_len}):\n got  {:?}\n want {:?}",
                    spell(tokenizer, &got.ids),
                    spell(tokenizer, &want)
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} differ:\n{}",
        wrong.len(),
        2 * cases.len(),
        wrong[..wrong.len().min(8)].join("\n")
    );
}

/// Ids that openai's CLIP vocabulary gives too ("a</w>" is 320, "photo</w>" 1125, "dog</w>"
/// 1929, "." 269): the fixture's vocabulary is its first 2,012 tokens and the two specials.
#[test]
fn ids_are_openais() {
    let tokenizer = ClipBpe::from_dir(&fixtures()).unwrap();
    let ids = tokenizer
        .encode("A photo of the dog.", CLIP_CONTEXT_LENGTH)
        .unwrap();
    let (bos, eos) = (tokenizer.bos_id(), tokenizer.eos_id());
    assert_eq!(ids.ids, [bos, 320, 1125, 539, 518, 1929, 269, eos]);
    assert_eq!((bos, eos, tokenizer.pad_id()), (2012, 2013, 2013));
}

#[test]
fn batch_matches_transformers() {
    let reference = reference();
    let batch = &reference["batch"];
    let texts: Vec<&str> = (batch["texts"].as_array().unwrap().iter())
        .map(|t| t.as_str().unwrap())
        .collect();
    let tokenizer = ClipBpe::from_dir(&fixtures()).unwrap();
    let got = tokenizer.encode_batch(&texts, CLIP_CONTEXT_LENGTH).unwrap();
    let rows =
        |key: &str| -> Vec<Vec<u32>> { batch[key].as_array().unwrap().iter().map(ids).collect() };
    assert_eq!(
        got.rows.iter().map(|r| r.ids.clone()).collect::<Vec<_>>(),
        rows("input_ids")
    );
    let masks = got
        .rows
        .iter()
        .map(|r| r.attention_mask.clone())
        .collect::<Vec<_>>();
    assert_eq!(masks, rows("attention_mask"));
    let positions = |key: &str| {
        ids(&batch[key])
            .into_iter()
            .map(|p| p as usize)
            .collect::<Vec<_>>()
    };
    assert_eq!(got.eos_positions, positions("first_eos"));
    assert_eq!(got.argmax_positions(), positions("argmax"));
    // The batch holds a row that reaches the context length and one with the end token inside
    // its text, where transformers pools (before the appended one).
    assert!(got.rows.iter().all(|r| r.ids.len() == CLIP_CONTEXT_LENGTH));
    assert!(
        got.eos_positions
            .iter()
            .zip(&got.rows)
            .any(|(&at, r)| at + 1 < r.attention_mask.iter().sum::<u32>() as usize)
    );
}

/// A folder whose tokenizer_config.json pads with `!` (LAION's checkpoints): transformers then
/// matches `!` in the text as that token.
#[test]
fn pad_token_from_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    for file in ["vocab.json", "merges.txt"] {
        std::fs::copy(fixtures().join(file), dir.path().join(file)).unwrap();
    }
    let config =
        json!({"pad_token": {"content": "!", "lstrip": false}, "eos_token": "<|endoftext|>"});
    std::fs::write(dir.path().join("tokenizer_config.json"), config.to_string()).unwrap();
    let from_config = ClipBpe::from_dir(dir.path()).unwrap();
    let from_call = ClipBpe::from_dir(&fixtures())
        .unwrap()
        .with_pad_token("!")
        .unwrap();
    assert_eq!(from_config.pad_id(), from_call.pad_id());
    let reference = reference();
    let cases = reference["bang"].as_array().unwrap();
    assert!(cases.len() >= 5);
    for case in cases {
        let (text, want) = (case[0].as_str().unwrap(), ids(&case[1]));
        for tokenizer in [&from_config, &from_call] {
            let got = tokenizer.encode(text, CLIP_CONTEXT_LENGTH).unwrap().ids;
            assert_eq!(got, want, "{text:?}");
        }
    }
    let batch = from_config.encode_batch(&["a", "a b c"], 77).unwrap();
    assert_eq!(batch.rows[0].ids[3..], [from_config.pad_id(); 2]);
}

/// A tokenizer folder with `tokens` (plus CLIP's specials) as vocab.json, ids in order, and
/// `merges.txt` as given (its `#version` line included).
fn tiny(tokens: &[&str], merges: &str) -> (tempfile::TempDir, Result<ClipBpe, data::DataError>) {
    let dir = tempfile::tempdir().unwrap();
    let vocab: serde_json::Map<String, Value> = (tokens.iter())
        .chain(&["<|startoftext|>", "<|endoftext|>"])
        .enumerate()
        .map(|(id, token)| (token.to_string(), json!(id)))
        .collect();
    std::fs::write(
        dir.path().join("vocab.json"),
        Value::from(vocab).to_string(),
    )
    .unwrap();
    std::fs::write(dir.path().join("merges.txt"), merges).unwrap();
    let tokenizer = ClipBpe::from_files(
        &dir.path().join("vocab.json"),
        &dir.path().join("merges.txt"),
    );
    (dir, tokenizer)
}

/// Ten merges whose results on a few words are worked out by hand below (transformers 5 gives
/// the same pieces).
const TEN_MERGES: &str = "#version: 0.2
a b
b c
ab c</w>
c d
a a
aa a</w>
d e</w>
cd e</w>
ab cd
abcd e</w>
";

const TEN_TOKENS: [&str; 20] = [
    "a",
    "b",
    "c",
    "d",
    "e",
    "a</w>",
    "b</w>",
    "c</w>",
    "d</w>",
    "e</w>",
    "ab",
    "bc",
    "abc</w>",
    "cd",
    "aa",
    "aaa</w>",
    "de</w>",
    "cde</w>",
    "abcd",
    "abcde</w>",
];

fn words(tokenizer: &ClipBpe, text: &str) -> Vec<String> {
    spell(tokenizer, &tokenizer.tokenize(text))
}

#[test]
fn merges_by_rank_on_a_hand_built_vocabulary() {
    let (_dir, tokenizer) = tiny(&TEN_TOKENS, TEN_MERGES);
    let t = tokenizer.unwrap();
    // a b c</w>: (a b) rank 0 -> ab c</w>; (ab c</w>) rank 2 -> one piece.
    assert_eq!(words(&t, "abc"), ["abc</w>"]);
    // b c d</w>: (b c) rank 1 -> bc d</w>, which no merge joins ("c d" is not "c d</w>").
    assert_eq!(words(&t, "bcd"), ["bc", "d</w>"]);
    // a b c d e</w>: rank 0 (a b), then rank 3 (c d), then rank 7 (cd e</w>) before rank 8
    // (ab cd) could apply: "abcde</w>" is in the vocabulary but never reached.
    assert_eq!(words(&t, "abcde"), ["ab", "cde</w>"]);
    // a a a</w>: the leftmost (a a) first -> aa a</w>, then rank 5.
    assert_eq!(words(&t, "aaa"), ["aaa</w>"]);
    // a a a a</w>: (a a) at 0 and at 1 tie; the leftmost wins -> aa a a</w>, and no merge
    // joins "aa a" or "a a</w>". Merging at 1 first would have given a aaa</w>.
    assert_eq!(words(&t, "aaaa"), ["aa", "a", "a</w>"]);
    // Lower-cased and cut into words before merging; `</w>` marks each word's last piece.
    assert_eq!(words(&t, "AB C"), ["a", "b</w>", "c</w>"]);
    // A byte the vocabulary lacks is the unknown token (`<|endoftext|>` by default).
    assert_eq!(words(&t, "ax"), ["a", "<|endoftext|>"]);
    // A pair listed twice takes its last rank: "a b" (rank 2) after "b c</w>" (rank 1), as
    // transformers gives.
    let tokens = ["a", "b", "c", "a</w>", "b</w>", "c</w>", "ab", "bc</w>"];
    let (_dir, twice) = tiny(&tokens, "#version: 0.2\na b\nb c</w>\na b\n");
    assert_eq!(words(&twice.unwrap(), "abc"), ["a", "bc</w>"]);
}

#[test]
fn truncation_keeps_the_end_token() {
    let (_dir, tokenizer) = tiny(&TEN_TOKENS, TEN_MERGES);
    let t = tokenizer.unwrap();
    let (bos, eos) = (t.bos_id(), t.eos_id());
    let a = t.id("a</w>").unwrap();
    assert_eq!(t.encode("a a a a", 4).unwrap().ids, [bos, a, a, eos]);
    assert_eq!(t.encode("a a a a", 2).unwrap().ids, [bos, eos]);
    assert_eq!(t.encode("", 77).unwrap().ids, [bos, eos]);
    assert!(t.encode("a", 1).unwrap_err().message.contains("at least 2"));
    let batch = t.encode_batch(&["a", "", "a a a"], 77).unwrap();
    assert_eq!(batch.rows[1].ids, [bos, eos, eos, eos, eos]);
    assert_eq!(batch.rows[1].attention_mask, [1, 1, 0, 0, 0]);
    assert_eq!(batch.eos_positions, [2, 1, 4]);
}

#[test]
fn bad_files_are_named_with_the_line() {
    let (dir, missing) = {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vocab.json");
        let err = ClipBpe::from_files(&path, &dir.path().join("merges.txt")).unwrap_err();
        (dir, err)
    };
    assert_eq!(
        missing.path.as_deref(),
        Some(dir.path().join("vocab.json").as_path())
    );
    let io = std::error::Error::source(&missing)
        .unwrap()
        .downcast_ref::<std::io::Error>()
        .unwrap();
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert!(std::error::Error::source(&missing).is_some());

    let merges = |text: &str| {
        let (dir, result) = tiny(&TEN_TOKENS, text);
        let err = result.unwrap_err();
        assert_eq!(err.path, Some(dir.path().join("merges.txt")), "{err}");
        err.message
    };
    let message = merges("#version: 0.2\na b\nabc\n");
    assert!(
        message.starts_with("line 3: \"abc\" is not a merge"),
        "{message}"
    );
    assert!(merges("#version: 0.2\na  b\n").starts_with("line 2:"));
    let message = merges("#version: 0.2\na b\nb z\n");
    assert!(
        message.starts_with("line 3: merge \"b z\" needs \"z\""),
        "{message}"
    );
    // The merged piece must be in the vocabulary too.
    let message = merges("#version: 0.2\nd e\n");
    assert!(
        message.starts_with("line 2: merge \"d e\" needs \"de\""),
        "{message}"
    );

    let (dir, _) = tiny(&TEN_TOKENS, TEN_MERGES);
    std::fs::write(dir.path().join("vocab.json"), "{\"a\": 0,\n \"b\": x}").unwrap();
    let err = ClipBpe::from_dir(dir.path()).unwrap_err();
    assert!(data::error_chain(&err).contains("line 2"), "{err}");
    assert!(
        std::error::Error::source(&err)
            .unwrap()
            .is::<serde_json::Error>()
    );
    std::fs::write(dir.path().join("vocab.json"), "{\"a\": 0, \"b\": 2}").unwrap();
    let err = ClipBpe::from_dir(dir.path()).unwrap_err();
    assert!(
        err.message.contains("expected ids 0..2 each used once"),
        "{err}"
    );
}

#[test]
fn bad_folders_and_configs_are_named() {
    let empty = tempfile::tempdir().unwrap();
    let err = ClipBpe::from_dir(empty.path()).unwrap_err();
    assert_eq!(err.path.as_deref(), Some(empty.path()));

    let (dir, _) = tiny(&TEN_TOKENS, TEN_MERGES);
    let config = dir.path().join("special_tokens_map.json");
    std::fs::write(&config, r#"{"pad_token": "<pad>"}"#).unwrap();
    let err = ClipBpe::from_dir(dir.path()).unwrap_err();
    assert_eq!(err.path.as_deref(), Some(config.as_path()));
    assert!(err.message.contains("pad_token \"<pad>\""), "{err}");
    std::fs::write(&config, r#"{"pad_token": 3}"#).unwrap();
    assert!(ClipBpe::from_dir(dir.path()).is_err());

    let json = dir.path().join("tokenizer.json");
    std::fs::write(&json, json!({"model": {"type": "WordPiece"}}).to_string()).unwrap();
    let err = ClipBpe::from_dir(dir.path()).unwrap_err();
    assert_eq!(err.path.as_deref(), Some(json.as_path()));
    assert!(err.message.contains("model.type"), "{err}");
    let model = json!({"model": {"type": "BPE", "end_of_word_suffix": "</w>",
        "vocab": {"a": 0, "b": 1, "<|startoftext|>": 2, "<|endoftext|>": 3}, "merges": [["a", "b"]]}});
    std::fs::write(&json, model.to_string()).unwrap();
    let err = ClipBpe::from_tokenizer_json(&json).unwrap_err();
    assert!(
        err.message
            .starts_with("model.merges[0]: merge \"a b\" needs \"ab\""),
        "{err}"
    );
}

/// Pieces of random texts: prompts, contractions in any case, digits, punctuation runs, accents
/// composed and not, final sigma, dotted İ, CJK (the extensions since Unicode 10 included),
/// scripts new in Unicode 16 (Todhri, Garay digits), emoji with joiners and skin tones, control,
/// format and private-use characters, and the special tokens in and out of words, in any case.
const POOL: &[&str] = &[
    "a photo of the dog. A PHOTO OF A {} it's IT'S we'LL i'M they'Ve don't ''s 'sa '",
    "0 7 42 2024 3.14 1,000 ½ ² Ⅻ ⅻ ١٢٣ ０１２ \u{10d40}\u{10d41} $5.99 50% x^2 ... !!! ?! -- __",
    "Café naïve cafe\u{301} A\u{30a} ΟΔΟΣ ΣΊΣΥΦΟΣ σς İstanbul Straße ẞ ǅ ﬁne K Å Москва",
    "中文 東京 日本語 テキスト 한국어 \u{2b820} \u{2ceb0} \u{30000} \u{31350} \u{2ebf0} \u{105c0}",
    "😀 👍🏽 ❤️ 👨‍👩‍👧 🇫🇷 \u{0} \u{7} \u{7f} \u{ad} \u{200b} \u{200d} \u{feff} \u{180e} \u{e000}",
    "<|startoftext|> <|endoftext|> <|ENDOFTEXT|> a<|endoftext|>b <|endoftext <<|endoftext|>>",
];

/// What goes between two pieces: nothing, spaces, and every kind of whitespace.
const GAPS: &[&str] = &[
    "", " ", " ", " ", "  ", "\t", "\n", "\r\n", "\u{b}", "\u{85}", "\u{a0}", "\u{2028}",
    "\u{3000}", "\u{202f}", "\u{2003}",
];

fn random_text(rng: &mut StdRng, pool: &[&str]) -> String {
    let mut text = String::new();
    for _ in 0..rng.random_range(0..16) {
        text.push_str(GAPS[rng.random_range(0..GAPS.len())]);
        if rng.random_range(0..8) == 0 {
            let n = rng.random_range(1..6);
            text.extend((0..n).filter_map(|_| char::from_u32(rng.random_range(0..0x11_0000))));
        } else {
            text.push_str(pool[rng.random_range(0..pool.len())]);
        }
    }
    text
}

/// Against the `tokenizers` crate (its pure-Rust regex engine) running the tokenizer.json that
/// transformers saved, on seeded random texts: a second reference, beside transformers' ids.
#[test]
fn ids_match_the_tokenizers_crate_on_random_texts() {
    let json = fixtures().join("saved/tokenizer.json");
    let theirs = tokenizers::Tokenizer::from_file(&json).unwrap();
    let ours = ClipBpe::from_tokenizer_json(&json).unwrap();
    let pool: Vec<&str> = POOL.iter().flat_map(|line| line.split(' ')).collect();
    let mut rng = StdRng::seed_from_u64(44);
    let mut wrong = Vec::new();
    for _ in 0..3000 {
        let text = random_text(&mut rng, &pool);
        let want = theirs
            .encode(text.as_str(), true)
            .unwrap()
            .get_ids()
            .to_vec();
        let got = ours.encode(&text, usize::MAX).unwrap().ids;
        if got != want {
            wrong.push(format!(
                "{text:?}:\n got  {:?}\n want {:?}",
                spell(&ours, &got),
                spell(&ours, &want)
            ));
        }
    }
    let first = wrong
        .iter()
        .take(10)
        .cloned()
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        wrong.is_empty(),
        "{} of 3000 texts differ:\n{first}",
        wrong.len()
    );
}
