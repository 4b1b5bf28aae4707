//! The removal order from a criterion of the pruning seam (`order = { criterion = ".." }`):
//! attention branches and GELUs each scored once on the unpruned model, the lowest first. The
//! budget search, the accuracy predictor and the merge then work on this order as on the one
//! HetDPT's removal rounds learn.

use backbone::{Classifier, VisionTransformer};
use burn::tensor::Device;
use pruning::{ScoreContext, UnitKind, criterion, score};
use train::ImageData;

use crate::calibration::calibration;
use crate::config::{HetDptConfig, OrderConfig};
use crate::error::HetDptError;
use crate::importance::removal_order;
use crate::order::{Ranked, RemovalOrder};

/// The removal order of the first `max_attn` attention branches and `max_act` GELUs: by the
/// criterion `cfg.order` names, else by HetDPT's removal rounds.
pub(crate) fn removal(
    base: &VisionTransformer,
    data: ImageData<'_>,
    (max_attn, max_act): (usize, usize),
    cfg: &HetDptConfig,
    device: &Device,
    seed: u64,
) -> Result<RemovalOrder, HetDptError> {
    match &cfg.order {
        None => removal_order(base, data, max_attn, max_act, cfg, device, seed),
        Some(order) => {
            let grid = (max_attn, max_act);
            ranked_order(base, data, grid, order, cfg.importance_images, device, seed)
        }
    }
}

/// The first `max_attn` attention branches and `max_act` GELUs by `order`'s criterion on
/// `images` training images drawn from `seed`.
pub(crate) fn ranked_order(
    base: &VisionTransformer,
    data: ImageData<'_>,
    (max_attn, max_act): (usize, usize),
    order: &OrderConfig,
    images: usize,
    device: &Device,
    seed: u64,
) -> Result<RemovalOrder, HetDptError> {
    let fail = |e| HetDptError::pruning("hetdpt.order.criterion", e);
    let criterion = criterion(&order.criterion, &order.params).map_err(fail)?;
    let data = calibration(
        data,
        images,
        seed,
        device,
        "removal-order calibration subset",
    )?;
    let model = Classifier::Vit(base.clone());
    let ctx = ScoreContext { seed, member: 0 };
    let per_block = |kind: UnitKind| -> Result<Vec<f64>, HetDptError> {
        let scores = score(criterion.as_ref(), &model, kind, &data, &ctx).map_err(fail)?;
        Ok(scores.0.into_iter().map(|row| row[0]).collect())
    };
    let (attn, act) = (per_block(UnitKind::Attention)?, per_block(UnitKind::Gelu)?);
    let samples: usize = data.batches.iter().map(|(_, y)| y.dims()[0]).sum();
    Ok(RemovalOrder {
        attn: lowest_first(&attn, max_attn),
        act: lowest_first(&act, max_act),
        rounds: Vec::new(),
        steps: 0,
        // One scoring pass per kind, whatever the criterion does within it.
        samples: 2 * samples as u64,
        ranked: Some(Ranked {
            criterion: order.criterion.clone(),
            attn,
            act,
        }),
    })
}

/// The blocks of the `n` lowest scores, lowest first (the earlier block on ties).
fn lowest_first(scores: &[f64], n: usize) -> Vec<usize> {
    let mut blocks: Vec<usize> = (0..scores.len()).collect();
    blocks.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    blocks.truncate(n);
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{quadrants, serial, tiny_vit};
    use burn::module::Param;
    use data::Normalization;

    #[test]
    fn lowest_scores_go_first_and_ties_keep_block_order() {
        assert_eq!(lowest_first(&[0.3, -1.0, 0.3, 0.0], 3), [1, 3, 0]);
        assert_eq!(lowest_first(&[2.0, 1.0], 0), Vec::<usize>::new());
    }

    #[test]
    fn a_planted_useless_attention_branch_is_removed_first_by_taylor() {
        let _rng = serial();
        let device = Device::flex();
        let (_, mut vit) = tiny_vit(&device, 4);
        let off = 2;
        // Block `off`'s attention branch adds exactly zero: the loss does not feel its gate.
        let output = &mut vit.encoder.layer[off].attention.output;
        output.weight = Param::from_tensor(output.weight.val().zeros_like());
        output.bias = (output.bias.take()).map(|b| Param::from_tensor(b.val().zeros_like()));
        let set = quadrants(90, 1);
        let norm = Normalization::fit(&set).unwrap();
        let data = ImageData {
            set: &set,
            norm: &norm,
        };
        let order = OrderConfig {
            criterion: "taylor".into(),
            params: toml::Table::new(),
        };
        let ranked = ranked_order(&vit, data, (2, 3), &order, 60, &device, 7).unwrap();
        let scores = ranked.ranked.as_ref().unwrap();
        assert_eq!(scores.attn[off], 0.0, "{scores:?}");
        assert_eq!(ranked.attn[0], off, "{ranked:?}");
        assert_eq!((ranked.attn.len(), ranked.act.len()), (2, 3));
        // Every GELU ranked, each block once.
        let mut act = ranked.act.clone();
        act.sort();
        assert_eq!(act, [0, 1, 2]);
        assert!(ranked.rounds.is_empty());
        assert_eq!(ranked.samples, 2 * 60);
    }

    #[test]
    fn a_criterion_without_attention_or_gelu_units_is_refused_by_name() {
        let cfg: HetDptConfig = toml::from_str("order = { criterion = \"wanda\" }").unwrap();
        let e = cfg.check().unwrap_err();
        let chain = format!("{e}: {}", std::error::Error::source(&e).unwrap());
        assert!(
            chain.contains("hetdpt.order.criterion") && chain.contains("wanda"),
            "{chain}"
        );
        let unknown: HetDptConfig = toml::from_str("order = { criterion = \"nope\" }").unwrap();
        assert!(unknown.check().is_err());
    }
}
