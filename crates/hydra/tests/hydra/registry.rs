//! The registry, parameter checking, and the simple strategies against direct computations.

use burn::tensor::Tensor;
use hydra::{HydraError, Keep, Merge, STRATEGIES, ScoreContext, SelectConfig, strategy};

use crate::{HEADS, LAYERS, calibration, edit, images, tiny, values};

const CTX: ScoreContext = ScoreContext { seed: 4, member: 0 };

/// Every registered strategy: a unique, non-empty name that builds (directly and by name) from
/// an empty table into a strategy reporting that name, a one-line description, and a mention in
/// the crate docs' list of strategies.
#[test]
fn registry_lists_every_strategy() {
    assert!(!STRATEGIES.is_empty());
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let crate_docs = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let mut seen = std::collections::HashSet::new();
    for s in STRATEGIES {
        assert!(
            !s.name.is_empty() && !s.name.contains(char::is_whitespace),
            "{:?}",
            s.name
        );
        assert!(seen.insert(s.name), "`{}` is registered twice", s.name);
        assert_eq!((s.build)(&toml::Table::new()).unwrap().name(), s.name);
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
        assert!(
            crate_docs.contains(&format!("`{}`", s.name)),
            "src/lib.rs's docs do not list `{}`",
            s.name
        );
    }
}

#[test]
fn unknown_names_and_parameters_are_errors_listing_the_valid_ones() {
    let err = strategy("fisher", &toml::Table::new()).err().unwrap();
    assert!(matches!(&err, HydraError::UnknownStrategy { name, .. } if name == "fisher"));
    let text = err.to_string();
    assert!(text.contains("\"fisher\""), "{text}");
    assert!(STRATEGIES.iter().all(|s| text.contains(s.name)), "{text}");

    let table: toml::Table = "objective = \"loss\"\nsample = 10".parse().unwrap();
    let text = strategy("circuit", &table).err().unwrap().to_string();
    assert!(text.contains("\"sample\""), "{text}");
    assert!(text.contains("objective, objectives, samples, n"), "{text}");

    let table: toml::Table = "samples = 10".parse().unwrap();
    let text = strategy("taylor", &table).err().unwrap().to_string();
    assert!(
        text.contains("\"samples\"") && text.contains("takes no parameters"),
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
        hydra::plan_members(&model, importance.as_ref(), &calibration(1, 4), &cfg, 2).unwrap();
    let members: Vec<_> = plans
        .iter()
        .map(|p| hydra::prune(&model, &p.kept).unwrap())
        .collect();
    let fused = hydra::fuse(&members, Merge::Average, 0).unwrap();
    assert_eq!(fused.forward(images(2, 55)).dims(), [3, 2, 3]);
}

#[test]
fn docs_show_the_activation_file_verbatim() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = std::fs::read_to_string(root.join("src/importance/activation.rs")).unwrap();
    let doc = std::fs::read_to_string(root.join("../../docs/extending.md")).unwrap();
    assert!(
        doc.contains(&format!("```rust\n{source}```")),
        "docs/extending.md must show src/importance/activation.rs as it is"
    );
}
