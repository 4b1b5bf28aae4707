//! ClipBpe: ids equal to transformers 5's `CLIPTokenizer` on 1,300 texts over a vocabulary built
//! from CLIP's first 1,500 merges (fixtures from scripts/clip_tokenizer_fixtures.py, read both
//! from vocab.json + merges.txt and from the tokenizer.json transformers saved), the padded batch
//! and its pooling positions, and the merge order on a 10-merge vocabulary derived by hand.

use std::io::Read;
use std::path::{Path, PathBuf};

use data::{CLIP_CONTEXT_LENGTH, ClipBpe};
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
