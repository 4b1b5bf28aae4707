//! The registry, parameter checking, and the simple strategies against direct computations.

use std::error::Error as _;

use burn::tensor::Tensor;
use hydra::{Keep, Merge, SelectConfig};
use pruning::{CRITERIA, PruningError, ScoreContext, UnitKind};

use crate::strategy;

use crate::{HEADS, LAYERS, calibration, edit, images, tiny, values};

const CTX: ScoreContext = ScoreContext { seed: 4, member: 0 };

/// Every registered criterion that scores heads: a unique, non-empty name that builds
/// (directly and by name) from an empty table into a criterion reporting that name, and a
/// one-line description.
#[test]
fn registry_lists_every_head_criterion() {
    let heads = CRITERIA
        .entries()
        .iter()
        .filter(|c| c.item.kinds.contains(&UnitKind::Head));
    assert!(heads.clone().count() >= 6);
    let mut seen = std::collections::HashSet::new();
    for s in heads {
        assert!(
            !s.name.is_empty() && !s.name.contains(char::is_whitespace),
            "{:?}",
            s.name
        );
        assert!(seen.insert(s.name), "`{}` is registered twice", s.name);
        assert_eq!((s.item.build)(&toml::Table::new()).unwrap().name(), s.name);
        assert_eq!(
            strategy(s.name, &toml::Table::new()).unwrap().name(),
            s.name
        );
        assert!(
            !s.about.trim().is_empty(),
            "`{}` has no description",
            s.name
        );
        assert!(!s.about.contains('\n'), "`{}`: about is one line", s.name);
    }
}

#[test]
fn unknown_names_and_parameters_are_errors_listing_the_valid_ones() {
    let err = strategy("fisher", &toml::Table::new()).err().unwrap();
    assert!(matches!(&err, PruningError::Unknown(u) if u.name == "fisher"));
    let text = err.to_string();
    assert!(text.contains("`fisher`"), "{text}");
    assert!(CRITERIA.names().iter().all(|s| text.contains(s)), "{text}");

    // The strategy is named by the error, the key by its source (serde's error).
    let table: toml::Table = "objective = \"loss\"\nsample = 10".parse().unwrap();
    let err = strategy("circuit", &table).err().unwrap();
    assert!(err.to_string().contains("\"circuit\""), "{err}");
    let text = err.source().expect("serde's error").to_string();
    assert!(
        text.contains(
            "unknown field `sample`, expected one of `objective`, `objectives`, `samples`, `n`"
        ),
        "{text}"
    );

    let table: toml::Table = "samples = 10".parse().unwrap();
    let err = strategy("taylor", &table).err().unwrap();
    let text = err.source().expect("serde's error").to_string();
    assert!(
        text.contains("unknown field `samples`, there are no fields"),
        "{text}"
    );
}

#[test]
fn magnitude_is_the_l1_norm_of_each_heads_weights() {
    let model = tiny(51);
    let scores = strategy("magnitude", &toml::Table::new())
        .unwrap()
        .scores(&model, &calibration(1, 1), &CTX)
        .unwrap()
        .0;
    for (l, block) in model.encoder().layer.iter().enumerate() {
        let a = &block.attention;
        let (d, dh) = (8, 2);
        let q = values(&a.query.weight.val());
        let k = values(&a.key.weight.val());
        let v = values(&a.value.weight.val());
        let o = values(&a.output.weight.val());
        for (h, &score) in scores[l].iter().enumerate() {
            let mut sum = 0.0f64;
            for i in 0..d {
                for j in h * dh..(h + 1) * dh {
                    // Q/K/V weights are [in = d, out = H·d_h]; output is [H·d_h, d].
                    let at = i * HEADS * dh + j;
                    sum += (q[at].abs() + k[at].abs() + v[at].abs()) as f64;
                    sum += o[j * d + i].abs() as f64;
                }
            }
            assert!(
                (score - sum).abs() < 1e-4 * sum,
                "({l}, {h}): {score} vs {sum}"
            );
        }
    }
}

#[test]
fn random_is_seeded_by_run_and_member() {
    let (model, data) = (tiny(52), calibration(1, 1));
    let random = strategy("random", &toml::Table::new()).unwrap();
    let a = random.scores(&model, &data, &CTX).unwrap();
    assert_eq!(a, random.scores(&model, &data, &CTX).unwrap());
    let member = ScoreContext { member: 1, ..CTX };
    assert_ne!(a, random.scores(&model, &data, &member).unwrap());
    assert_eq!((a.0.len(), a.0[0].len()), (LAYERS, HEADS));
    assert!(a.0.iter().flatten().all(|s| (0.0..1.0).contains(s)));
}

#[test]
fn activation_scores_scale_with_a_heads_values() {
    let model = tiny(53);
    let data = calibration(2, 3);
    let activation = strategy("activation", &toml::Table::new()).unwrap();
    let before = activation.scores(&model, &data, &CTX).unwrap().0;
    // Doubling head 1's value columns (and bias) in block 0 doubles its context there and
    // leaves the other heads of block 0 as they were.
    let mut scaled = model.clone();
    let value = &mut scaled.encoder_mut().layer[0].attention.value;
    let factor: Vec<f32> = (0..8).map(|c| if c / 2 == 1 { 2.0 } else { 1.0 }).collect();
    let factor = Tensor::<1>::from_floats(factor.as_slice(), &crate::device());
    edit(&mut value.weight, |w| w * factor.clone().unsqueeze::<2>());
    let bias = value.bias.as_mut().unwrap();
    *bias = burn::module::Param::from_tensor(bias.val() * factor);
    let after = activation.scores(&scaled, &data, &CTX).unwrap().0;
    for h in 0..HEADS {
        let expected = if h == 1 {
            2.0 * before[0][h]
        } else {
            before[0][h]
        };
        assert!(
            (after[0][h] - expected).abs() < 1e-5 * expected,
            "head {h}: {} vs {expected}",
            after[0][h]
        );
    }
    // A head with zero value weights and bias has a zero context.
    let mut silent = model.clone();
    let value = &mut silent.encoder_mut().layer[1].attention.value;
    edit(&mut value.weight, |w| w.mul_scalar(0.0));
    let bias = value.bias.as_mut().unwrap();
    *bias = burn::module::Param::from_tensor(bias.val().mul_scalar(0.0));
    let silent = activation.scores(&silent, &data, &CTX).unwrap().0;
    assert!(silent[1].iter().all(|&s| s == 0.0), "{silent:?}");
    assert!(before.iter().flatten().all(|&s| s > 0.0));
}

/// The `docs/extending.md` walk-through: a strategy named in an experiment's TOML is built from
/// the registry and drives the whole pipeline.
#[test]
fn activation_runs_from_toml() {
    let experiment: toml::Table = r#"
        [[method]]
        kind = "hydra"
        importance = "activation"
        members = 3
        keep = 2
        temperature = 0.5
    "#
    .parse()
    .unwrap();
    let method = experiment["method"].as_array().unwrap()[0]
        .as_table()
        .unwrap();
    let name = method["importance"].as_str().unwrap();
    let importance = strategy(name, &toml::Table::new()).unwrap();
    assert_eq!(importance.name(), "activation");
    let cfg = SelectConfig {
        members: method["members"].as_integer().unwrap() as usize,
        keep: Keep::PerBlock(method["keep"].as_integer().unwrap() as usize),
        temperature: method["temperature"].as_float().unwrap(),
        bootstrap: false,
    };
    let model = tiny(54);
    let plans =
        hydra::plan_members(&model, importance.criterion(), &calibration(1, 4), &cfg, 2).unwrap();
    let members: Vec<_> = plans
        .iter()
        .map(|p| pruning::prune_heads(&model, &p.kept.0).unwrap())
        .collect();
    let fused = hydra::fuse(&members, Merge::Average, 0).unwrap();
    assert_eq!(fused.forward(images(2, 55)).dims(), [3, 2, 3]);
}

/// `confidence` against its definition computed on the host in f64 (block 0 of the ViT: the
/// peak of each query's softmax over the 5 tokens, averaged over every token), and a head whose
/// query is zero attends uniformly, so it scores exactly 1/(its sequence's real tokens): 1/5
/// on images, the number of sequences over the real tokens on padded text.
#[test]
fn confidence_is_the_mean_peak_attention_weight() {
    let confidence = strategy("confidence", &toml::Table::new()).unwrap();
    let model = tiny(56);
    let data = calibration(2, 3);
    let scores = confidence.scores(&model, &data, &CTX).unwrap().0;

    let block = &model.encoder().layer[0];
    let a = &block.attention;
    let dh = 8 / HEADS;
    let (wq, bq) = (
        values(&a.query.weight.val()),
        values(&a.query.bias.as_ref().unwrap().val()),
    );
    let (wk, bk) = (
        values(&a.key.weight.val()),
        values(&a.key.bias.as_ref().unwrap().val()),
    );
    let project = |x: &[f32], w: &[f32], b: &[f32], j: usize| -> f64 {
        (0..8)
            .map(|i| x[i] as f64 * w[i * 8 + j] as f64)
            .sum::<f64>()
            + b[j] as f64
    };
    let (mut expected, mut tokens) = (vec![0.0f64; HEADS], 0usize);
    for (input, _) in &data.batches {
        let x = values(
            &block
                .norm1
                .forward(model.embed(input, backbone::Mode::Deterministic)),
        );
        let rows: Vec<&[f32]> = x.chunks(8).collect(); // [B·5] rows of width 8
        for sample in rows.chunks(5) {
            for (h, peak) in expected.iter_mut().enumerate() {
                let cols = h * dh..(h + 1) * dh;
                let q: Vec<Vec<f64>> = (sample.iter())
                    .map(|r| cols.clone().map(|j| project(r, &wq, &bq, j)).collect())
                    .collect();
                let k: Vec<Vec<f64>> = (sample.iter())
                    .map(|r| cols.clone().map(|j| project(r, &wk, &bk, j)).collect())
                    .collect();
                for qi in &q {
                    let s: Vec<f64> = (k.iter())
                        .map(|kj| qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f64>())
                        .map(|v| v / (dh as f64).sqrt())
                        .collect();
                    let max = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let total: f64 = s.iter().map(|v| (v - max).exp()).sum();
                    *peak += 1.0 / total; // the peak weight: exp(0) / Σ exp(s - max)
                }
            }
            tokens += 5;
        }
    }
    for h in 0..HEADS {
        let want = expected[h] / tokens as f64;
        assert!(
            (scores[0][h] - want).abs() < 1e-5,
            "head {h}: {} vs {want}",
            scores[0][h]
        );
    }
    assert!(
        scores
            .iter()
            .flatten()
            .all(|&s| (0.2 - 1e-6..=1.0 + 1e-6).contains(&s))
    );

    // Head 2 of block 0 with a zero query: uniform attention.
    let blind = |mut model: backbone::Classifier| {
        let query = &mut model.encoder_mut().layer[0].attention.query;
        let keep: Vec<f32> = (0..8)
            .map(|c| if c / dh == 2 { 0.0 } else { 1.0 })
            .collect();
        let keep = Tensor::<1>::from_floats(keep.as_slice(), &crate::device());
        edit(&mut query.weight, |w| w * keep.clone().unsqueeze::<2>());
        let bias = query.bias.as_mut().unwrap();
        *bias = burn::module::Param::from_tensor(bias.val() * keep);
        model
    };
    let images = confidence.scores(&blind(model), &data, &CTX).unwrap().0;
    assert!((images[0][2] - 0.2).abs() < 1e-6, "{}", images[0][2]);
    let text = crate::text_calibration(2, 5);
    let padded = confidence
        .scores(&blind(crate::tiny_bert(57)), &text, &CTX)
        .unwrap()
        .0;
    // Sequence i of a batch has 6 - i % 4 real tokens: 6 + 5 + 4 + 3 + 6 = 24 in 5 sequences.
    assert!((padded[0][2] - 5.0 / 24.0).abs() < 1e-6, "{}", padded[0][2]);
}
