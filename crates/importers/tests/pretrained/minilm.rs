//! all-MiniLM-L6-v2 from `datasets/all-minilm-l6-v2/` against the plain numpy forward of
//! scripts/minilm_reference.py (fixture tests/fixtures/minilm_reference.json), to 1e-4.

use backbone::BertConfig;

use crate::bert_checks::{self, fetched, fixture};

const NAME: &str = "all-minilm-l6-v2";

#[test]
fn hidden_states_and_embeddings_match_numpy() {
    let (config, model) = fetched(NAME);
    assert_eq!(format!("{config:?}"), format!("{:?}", BertConfig::new()));
    bert_checks::hidden_states_and_embeddings_match(&model, &fixture("minilm_reference.json"));
}

#[test]
fn paraphrases_are_closer_than_unrelated_sentences() {
    let (_, model) = fetched(NAME);
    let fixture = fixture("minilm_reference.json");
    bert_checks::paraphrases_are_closer_than_unrelated_sentences(&model, &fixture);
}

#[test]
fn bad_ids_are_rejected_not_panicked_on() {
    let (_, model) = fetched(NAME);
    let err = model
        .sentence_embeddings(&[vec![101, 30522, 102]])
        .unwrap_err();
    assert!(data::error_chain(&err).contains("ids[0] = 30522"), "{err}");
    let err = model
        .sentence_embeddings(&[vec![101, 102], vec![]])
        .unwrap_err();
    assert!(
        data::error_chain(&err).contains("ids[1].len() = 0"),
        "{err}"
    );
    let err = model.sentence_embeddings(&[vec![101; 513]]).unwrap_err();
    assert!(data::error_chain(&err).contains("1..=512 tokens"), "{err}");
    assert!(model.sentence_embeddings(&[]).unwrap().is_empty());
}
