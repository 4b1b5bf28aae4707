//! HetDPT+: width pruning in the same pipeline. Heads are scored on the unpruned model by a
//! head criterion of the pruning seam ([`pruning::CRITERIA`]) and the top `keep` per block are
//! kept (`pruning::prune_heads`); after the depth merge, the MLPs that keep their GELU lose hidden
//! channels ranked by magnitude, `‖W1[:, j]‖·‖W2[j, :]‖`.

use backbone::{Classifier, Mlp, VisionTransformer};
use burn::module::Param;
use burn::nn::Linear;
use burn::tensor::{Device, Int, Tensor, TensorData};
use hydra::{HeadSet, Keep, SelectConfig, plan_members};
use pruning::{UnitKind, criterion_for, prune_heads};
use serde::Serialize;
use train::ImageData;

use crate::calibration::calibration;
use crate::config::{HeadWidth, WidthConfig};
use crate::error::HetDptError;
use crate::pruned::{PrunedMlp, PrunedViT, Removal, merge};

/// What width pruning kept.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WidthReport {
    /// The head criterion's scores `[L][H]` on the unpruned model and the heads kept per block
    /// (absent when heads were not pruned).
    pub head_scores: Option<Vec<Vec<f64>>>,
    pub heads_kept: Option<HeadSet>,
    pub mlp_keep: f64,
    /// Hidden channels per block (`None` where the GELU was removed and the MLP merged).
    pub mlp_channels: Vec<Option<usize>>,
}

/// Heads (when configured) on `base`, then the depth merge with `removal`, then MLP channels.
pub(crate) fn apply(
    base: &VisionTransformer,
    removal: &Removal,
    cfg: &WidthConfig,
    calibration: ImageData<'_>,
    device: &Device,
    seed: u64,
) -> Result<(PrunedViT, WidthReport), HetDptError> {
    let (model, head_scores, heads_kept) = match &cfg.heads {
        Some(heads) => {
            let (scores, kept) = choose_heads(base, heads, calibration, device, seed)?;
            let narrowed = match prune_heads(&Classifier::Vit(base.clone()), &kept.0) {
                Ok(Classifier::Vit(v)) => v,
                Ok(_) => unreachable!("pruning keeps the model's kind"),
                Err(e) => return Err(HetDptError::hydra("HetDPT+ head pruning", e.into())),
            };
            (merge(&narrowed, removal)?, Some(scores), Some(kept))
        }
        None => (merge(base, removal)?, None, None),
    };
    let (model, mlp_channels) = prune_mlp_channels(model, cfg.mlp_keep)?;
    let report = WidthReport {
        head_scores,
        heads_kept,
        mlp_keep: cfg.mlp_keep,
        mlp_channels,
    };
    Ok((model, report))
}

/// Scores `base`'s heads on a seeded calibration subset and keeps the top `keep` per block.
fn choose_heads(
    base: &VisionTransformer,
    cfg: &HeadWidth,
    data: ImageData<'_>,
    device: &Device,
    seed: u64,
) -> Result<(Vec<Vec<f64>>, HeadSet), HetDptError> {
    let fail = |e| HetDptError::hydra("HetDPT+ heads", e);
    let strategy =
        (criterion_for(&cfg.strategy, &cfg.params, UnitKind::Head)).map_err(|e| fail(e.into()))?;
    let calibration = calibration(
        data,
        cfg.calibration_images,
        seed,
        device,
        "HetDPT+ calibration subset",
    )?;
    let select = SelectConfig {
        members: 1,
        keep: Keep::PerBlock(cfg.keep),
        temperature: 0.0,
        bootstrap: false,
    };
    let base = Classifier::Vit(base.clone());
    let mut plans =
        plan_members(&base, strategy.as_ref(), &calibration, &select, seed).map_err(fail)?;
    let plan = plans.pop().expect("one member was asked for");
    Ok((plan.scores.0, plan.kept))
}

/// Keeps `round(keep·F)` (at least 1) hidden channels of every GELU MLP, those with the largest
/// `‖W1[:, j]‖·‖W2[j, :]‖` (a channel's weight into and out of the hidden layer), in their
/// original order; returns the channels left per block.
pub(crate) fn prune_mlp_channels(
    mut model: PrunedViT,
    keep: f64,
) -> Result<(PrunedViT, Vec<Option<usize>>), HetDptError> {
    let mut channels = Vec::with_capacity(model.blocks.len());
    for block in &mut model.blocks {
        channels.push(match &mut block.mlp {
            PrunedMlp::Gelu(mlp) => {
                if keep < 1.0 {
                    *mlp = narrow_mlp(mlp, keep)?;
                }
                Some(mlp.fc1.weight.val().dims()[1])
            }
            PrunedMlp::Merged(_) => None,
        });
    }
    Ok((model, channels))
}

fn narrow_mlp(mlp: &Mlp, keep: f64) -> Result<Mlp, HetDptError> {
    let w1 = mlp.fc1.weight.val(); // [D, F]
    let w2 = mlp.fc2.weight.val(); // [F, D]
    let hidden = w1.dims()[1];
    let score = w1
        .clone()
        .powf_scalar(2.0)
        .sum_dim(0)
        .squeeze_dim::<1>(0)
        .sqrt()
        * w2.clone()
            .powf_scalar(2.0)
            .sum_dim(1)
            .squeeze_dim::<1>(1)
            .sqrt();
    let score: Vec<f32> =
        score
            .into_data()
            .try_to_vec::<f32>()
            .map_err(|source| HetDptError::Tensor {
                what: "MLP weights",
                source,
            })?;
    let k = ((keep * hidden as f64).round() as usize).clamp(1, hidden);
    let mut ranked: Vec<usize> = (0..hidden).collect();
    // Stable sort: equal scores keep the lower channel.
    ranked.sort_by(|&a, &b| score[b].total_cmp(&score[a]));
    let mut kept: Vec<i64> = ranked[..k].iter().map(|&j| j as i64).collect();
    kept.sort_unstable();
    let idx = Tensor::<1, Int>::from_data(TensorData::new(kept, [k]), &w1.device());
    let select = |l: &Linear, dim: usize, bias: bool| Linear {
        weight: Param::from_tensor(l.weight.val().select(dim, idx.clone())),
        bias: l.bias.as_ref().map(|b| {
            let b = b.val();
            Param::from_tensor(if bias { b.select(0, idx.clone()) } else { b })
        }),
    };
    Ok(Mlp {
        fc1: select(&mlp.fc1, 1, true),
        fc2: select(&mlp.fc2, 0, false),
        activation: mlp.activation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{max_rel_diff, quadrants, serial, tiny_vit};
    use backbone::{BlockShape, Mode};
    use burn::module::Module;
    use burn::tensor::Distribution;
    use data::Normalization;

    #[test]
    fn silent_channels_go_first_and_change_nothing() {
        let _rng = serial();
        let device = Device::flex();
        let (cfg, mut base) = tiny_vit(&device, 31);
        // Silence the even hidden channels (zero rows of W2) of every block: they cannot matter.
        let f = cfg.d_mlp;
        let mask: Vec<f32> = (0..f).map(|j| (j % 2) as f32).collect();
        let mask = Tensor::<1>::from_data(TensorData::new(mask, [f]), &device);
        for block in &mut base.encoder.layer {
            let fc2 = &mut block.mlp.fc2;
            fc2.weight = Param::from_tensor(fc2.weight.val() * mask.clone().unsqueeze_dim::<2>(1));
        }
        let removal = Removal {
            attn: vec![false; 3],
            act: vec![false, true, false],
        };
        let merged = merge(&base, &removal).unwrap();
        let x = Tensor::<4>::random([4, 1, 8, 8], Distribution::Normal(0.0, 1.0), &device);
        let before = merged.forward(x.clone(), Mode::Deterministic);

        let (whole, _) = prune_mlp_channels(merged.clone(), 1.0).unwrap();
        assert_eq!(
            max_rel_diff(&whole.forward(x.clone(), Mode::Deterministic), &before),
            0.0
        );

        let (pruned, channels) = prune_mlp_channels(merged.clone(), 0.5).unwrap();
        assert_eq!(channels, vec![Some(f / 2), None, Some(f / 2)]);
        let after = pruned.forward(x, Mode::Deterministic);
        let diff = max_rel_diff(&after, &before);
        assert!(diff < 1e-5, "relative difference {diff}");
        // Exactly the odd channels survive: compare with a hand-made selection.
        let odd: Vec<i64> = (0..f as i64).filter(|j| j % 2 == 1).collect();
        let odd = Tensor::<1, Int>::from_data(TensorData::new(odd, [f / 2]), &device);
        let (PrunedMlp::Gelu(kept), PrunedMlp::Gelu(orig)) =
            (&pruned.blocks[2].mlp, &merged.blocks[2].mlp)
        else {
            panic!("block 2 keeps its GELU")
        };
        let expected = orig.fc1.weight.val().select(1, odd);
        assert_eq!(max_rel_diff(&kept.fc1.weight.val(), &expected), 0.0);
        // Parameters: each of the two GELU blocks loses (F/2)·(2D + 1).
        let lost = 2 * (f / 2) * (2 * cfg.d_model + 1);
        assert_eq!(pruned.num_params(), merged.num_params() - lost);
    }

    #[test]
    fn head_and_depth_pruning_equal_the_gated_model() {
        let _rng = serial();
        let device = Device::flex();
        let (cfg, base) = tiny_vit(&device, 32);
        let set = quadrants(30, 6);
        let norm = Normalization::fit(&set).unwrap();
        let data = ImageData {
            set: &set,
            norm: &norm,
        };
        let removal = Removal {
            attn: vec![false, true, false],
            act: vec![false, false, true],
        };
        let width = WidthConfig {
            mlp_keep: 1.0,
            heads: Some(HeadWidth {
                strategy: "magnitude".into(),
                params: toml::Table::new(),
                keep: 1,
                calibration_images: 16,
            }),
        };
        let (model, report) = apply(&base, &removal, &width, data, &device, 8).unwrap();
        let kept = report.heads_kept.clone().unwrap();
        // Magnitude keeps each block's head with the larger score.
        for (row, scores) in kept.0.iter().zip(report.head_scores.as_ref().unwrap()) {
            let best = if scores[0] >= scores[1] { 0 } else { 1 };
            assert_eq!(row, &vec![best]);
        }
        let mut gates = removal.gates(&device);
        gates.heads = Some(kept.mask(cfg.n_heads, &device).unwrap());
        let x = Tensor::<4>::random([4, 1, 8, 8], Distribution::Normal(0.0, 1.0), &device);
        let gated = base.forward(x.clone(), &gates, Mode::Deterministic);
        let diff = max_rel_diff(&model.forward(x, Mode::Deterministic), &gated);
        assert!(diff < 1e-4, "relative difference {diff}");
        let shapes: Vec<BlockShape> = (0..cfg.n_layers)
            .map(|l| BlockShape {
                heads: 1,
                attention: !removal.attn[l],
                activation: !removal.act[l],
            })
            .collect();
        assert_eq!(model.flops(), cfg.flops(&shapes));
        assert_eq!(
            report.mlp_channels,
            vec![Some(cfg.d_mlp), Some(cfg.d_mlp), None]
        );
    }

    #[test]
    fn unknown_head_strategy_is_an_error() {
        let _rng = serial();
        let device = Device::flex();
        let (_, base) = tiny_vit(&device, 33);
        let set = quadrants(6, 6);
        let norm = Normalization::fit(&set).unwrap();
        let data = ImageData {
            set: &set,
            norm: &norm,
        };
        let width = WidthConfig {
            mlp_keep: 1.0,
            heads: Some(HeadWidth {
                strategy: "nope".into(),
                params: toml::Table::new(),
                keep: 1,
                calibration_images: 6,
            }),
        };
        let err = apply(&base, &Removal::none(3), &width, data, &device, 1).unwrap_err();
        // Hydra's error, naming the strategy, is the source of HetDPT's step.
        assert_eq!(err.to_string(), "HetDPT+ heads");
        let source = std::error::Error::source(&err).expect("hydra's error");
        let hydra = source.downcast_ref::<hydra::HydraError>();
        assert!(matches!(
            hydra,
            Some(hydra::HydraError::Pruning(pruning::PruningError::Unknown(u))) if u.name == "nope"
        ));
    }
}
