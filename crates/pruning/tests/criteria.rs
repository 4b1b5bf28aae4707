//! The shared harness every registered criterion runs through, for every unit kind it claims:
//! one finite score per unit, the same scores from the same seed, different members' scores
//! where the criterion varies by member, and a planted useless unit ranked last unless the
//! criterion draws its scores at random. A criterion is tested by being registered.

mod common;

use backbone::{Classifier, Mode};
use burn::module::Param;
use burn::tensor::Tensor;
use pruning::{CRITERIA, ScoreContext, UnitKind, score};

use common::{data, tiny};

/// Criteria that score the signed harm of removing a unit: a unit whose removal helps scores
/// below a useless one, so on a random model the planted unit need not be last. `circuit`'s own
/// planted test (one head carrying all the signal) is in crates/hydra/tests/hydra/circuit.rs,
/// `learnable`'s below.
const SIGNED_HARM: &[&str] = &["circuit", "learnable"];

/// Sets to 0 the `len` rows (`dim` 0) or columns (`dim` 1) of `param` from `from`.
fn zero(param: &mut Param<Tensor<2>>, dim: usize, from: usize, len: usize) {
    let t = param.val();
    let mut mask = Tensor::<2>::ones(t.dims(), &t.device());
    let mut shape = t.dims();
    shape[dim] = len;
    mask = mask.slice_assign(range(shape, dim, from), Tensor::zeros(shape, &t.device()));
    *param = Param::from_tensor(t * mask);
}

fn zero_bias(bias: &mut Option<Param<Tensor<1>>>, from: usize, len: usize) {
    if let Some(b) = bias {
        let t = b.val();
        let t = t
            .clone()
            .slice_assign(from..from + len, Tensor::zeros([len], &t.device()));
        *b = Param::from_tensor(t);
    }
}

fn range(shape: [usize; 2], dim: usize, from: usize) -> [std::ops::Range<usize>; 2] {
    let mut r = [0..shape[0], 0..shape[1]];
    r[dim] = from..from + shape[dim];
    r
}

/// `model` with unit `u` of `kind` in block `l` made useless: everything it owns (and, for a
/// GELU, the MLP it shapes) set to 0, so removing it changes nothing.
fn plant(mut model: Classifier, kind: UnitKind, l: usize, u: usize) -> Classifier {
    let block = &mut model.encoder_mut().layer[l];
    let [d, hidden] = block.mlp.fc1.weight.dims();
    let a = &mut block.attention;
    let dh = a.query.weight.dims()[1] / a.n_heads;
    let mlp = &mut block.mlp;
    match kind {
        UnitKind::Head => {
            for p in [&mut a.query, &mut a.key, &mut a.value] {
                zero(&mut p.weight, 1, u * dh, dh);
                zero_bias(&mut p.bias, u * dh, dh);
            }
            zero(&mut a.output.weight, 0, u * dh, dh);
        }
        UnitKind::Neuron => {
            zero(&mut mlp.fc1.weight, 1, u, 1);
            zero_bias(&mut mlp.fc1.bias, u, 1);
            zero(&mut mlp.fc2.weight, 0, u, 1);
        }
        UnitKind::Attention | UnitKind::Block => {
            let width = a.query.weight.dims()[1];
            for p in [&mut a.query, &mut a.key, &mut a.value] {
                zero(&mut p.weight, 1, 0, width);
                zero_bias(&mut p.bias, 0, width);
            }
            zero(&mut a.output.weight, 0, 0, width);
            zero_bias(&mut a.output.bias, 0, d);
            if kind == UnitKind::Block {
                return plant(model, UnitKind::Mlp, l, 0);
            }
        }
        UnitKind::Mlp | UnitKind::Gelu => {
            zero(&mut mlp.fc1.weight, 1, 0, hidden);
            zero_bias(&mut mlp.fc1.bias, 0, hidden);
            zero(&mut mlp.fc2.weight, 0, 0, hidden);
            zero_bias(&mut mlp.fc2.bias, 0, d);
        }
    }
    model
}

#[test]
fn every_registered_criterion_passes_the_harness() {
    let model = tiny(11);
    let data = data(&model, 12);
    let ctx = ScoreContext { seed: 5, member: 0 };
    for entry in CRITERIA.entries() {
        let built = (entry.item.build)(&toml::Table::new()).expect(entry.name);
        let criterion = built.as_ref();
        assert_eq!(criterion.name(), entry.name);
        assert_eq!(criterion.kinds(), entry.item.kinds);
        for &kind in entry.item.kinds {
            let what = format!("{} on {kind} units", entry.name);
            let scores = score(criterion, &model, kind, &data, &ctx).expect(&what);
            assert_eq!(
                scores,
                score(criterion, &model, kind, &data, &ctx).unwrap(),
                "{what}: not deterministic"
            );
            if criterion.varies_by_member() {
                let other = ScoreContext { member: 1, ..ctx };
                let theirs = score(criterion, &model, kind, &data, &other).unwrap();
                assert_ne!(scores, theirs, "{what}: the same for every member");
            }
            if criterion.random() || SIGNED_HARM.contains(&entry.name) {
                continue;
            }
            let (l, u) = (1, kind.per_block(&model)[1] - 1);
            let planted = plant(model.clone(), kind, l, u);
            let scores = score(criterion, &planted, kind, &data, &ctx).unwrap();
            let lowest = scores
                .0
                .iter()
                .flatten()
                .copied()
                .fold(f64::INFINITY, f64::min);
            let others = (scores.0.iter().enumerate())
                .flat_map(|(b, row)| row.iter().enumerate().map(move |(i, s)| ((b, i), *s)))
                .filter(|&(at, _)| at != (l, u));
            assert_eq!(
                scores.0[l][u], lowest,
                "{what}: the planted unit is not last: {scores:?}"
            );
            for (at, s) in others {
                assert!(
                    s > lowest,
                    "{what}: {at:?} ties the planted unit: {scores:?}"
                );
            }
        }
    }
}

#[test]
fn learnable_moves_a_planted_unit_by_the_sparsity_pressure_alone() {
    let model = tiny(11);
    let data = data(&model, 12);
    let ctx = ScoreContext { seed: 5, member: 0 };
    let params: toml::Table =
        toml::from_str("steps = 5\nlr = 0.5\nsparsity = 0.1\ninit = 0.2").unwrap();
    let criterion = pruning::criterion("learnable", &params).unwrap();
    for kind in UnitKind::ALL {
        let (l, u) = (1, kind.per_block(&model)[1] - 1);
        let planted = plant(model.clone(), kind, l, u);
        let scores = score(criterion.as_ref(), &planted, kind, &data, &ctx).unwrap();
        // Its output is zero, so the loss does not feel its gate: θ = init − steps·lr·λ.
        let alone = 0.2 - 5.0 * 0.5 * 0.1;
        let got = scores.0[l][u];
        // (f32 gradients: λ = 0.1 is not exact in f32.)
        assert!((got - alone).abs() < 1e-6, "{kind}: {got} vs {alone}");
        // Every other unit's output reaches the loss: it moved otherwise.
        let moved = (scores.0.iter().enumerate())
            .flat_map(|(b, row)| row.iter().enumerate().map(move |(i, s)| ((b, i), *s)))
            .filter(|&(at, s)| at != (l, u) && (s - alone).abs() > 1e-6)
            .count();
        let units: usize = kind.per_block(&model).iter().sum();
        assert_eq!(moved, units - 1, "{kind}: {scores:?}");
    }
    let bad: toml::Table = toml::from_str("sparsity = -1.0").unwrap();
    let e = pruning::criterion("learnable", &bad)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("learnable sparsity") && e.contains("-1"), "{e}");
}

#[test]
fn unsupported_kinds_and_unknown_names_are_refused_naming_what_is_allowed() {
    let err = pruning::criterion_for("confidence", &toml::Table::new(), UnitKind::Neuron)
        .err()
        .unwrap()
        .to_string();
    assert_eq!(
        err,
        "criterion \"confidence\" does not score neuron units: it scores head"
    );
    let err = pruning::criterion("fisher", &toml::Table::new())
        .err()
        .unwrap()
        .to_string();
    assert!(CRITERIA.names().iter().all(|n| err.contains(n)), "{err}");
    let kind: Result<UnitKind, _> = UnitKind::try_from("layer".to_string());
    let err = kind.unwrap_err().to_string();
    assert!(
        ["head", "neuron", "block", "gelu"]
            .iter()
            .all(|k| err.contains(k)),
        "{err}"
    );
}

/// `wanda` on block 0's heads against its definition computed on the host in f64: with the
/// output projection zeroed (its rows' part is then 0, and block 0's input is unchanged), head
/// h scores `Σ_i Σ_(c in h) (|Wq| + |Wk| + |Wv|)[i, c]·rms_i`, rms over block 0's normalised input.
#[test]
fn wanda_weighs_each_weight_by_the_rms_of_its_input_feature() {
    let mut model = tiny(21);
    let data = data(&model, 22);
    let output = &mut model.encoder_mut().layer[0].attention.output;
    zero(&mut output.weight, 0, 0, 8);
    let wanda = pruning::criterion("wanda", &toml::Table::new()).unwrap();
    let ctx = ScoreContext { seed: 0, member: 0 };
    let scores = score(wanda.as_ref(), &model, UnitKind::Head, &data, &ctx).unwrap();

    let block = &model.encoder().layer[0];
    let (mut squares, mut tokens) = (vec![0.0f64; 8], 0usize);
    for (input, _) in &data.batches {
        let x = block.norm1.forward(model.embed(input, Mode::Deterministic));
        for row in host(x).chunks(8) {
            squares.iter_mut().zip(row).for_each(|(s, v)| *s += v * v);
            tokens += 1;
        }
    }
    let rms: Vec<f64> = squares.iter().map(|s| (s / tokens as f64).sqrt()).collect();
    let a = &block.attention;
    let weights = [&a.query, &a.key, &a.value].map(|p| host(p.weight.val()));
    for h in 0..4 {
        let mut want = 0.0;
        for (i, r) in rms.iter().enumerate() {
            for c in 2 * h..2 * h + 2 {
                want += weights.iter().map(|w| w[i * 8 + c].abs()).sum::<f64>() * r;
            }
        }
        let got = scores.0[0][h];
        assert!(
            (got - want).abs() < 1e-4 * want,
            "head {h}: {got} vs {want}"
        );
    }
}

fn host<const D: usize>(t: Tensor<D>) -> Vec<f64> {
    t.into_data().convert::<f64>().try_to_vec::<f64>().unwrap()
}

#[test]
fn docs_show_the_wanda_file_verbatim() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = std::fs::read_to_string(root.join("src/criteria/wanda.rs")).unwrap();
    let doc = std::fs::read_to_string(root.join("../../docs/extending.md")).unwrap();
    assert!(
        doc.contains(&format!("```rust\n{source}```")),
        "docs/extending.md must show crates/pruning/src/criteria/wanda.rs as it is"
    );
}
