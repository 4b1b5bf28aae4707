//! The MAP search: points of the removal grid merged, fine-tuned briefly and measured, a
//! polynomial fitted, the budget's choice made, and the choice measured before it is trusted.

use backbone::VisionTransformer;
use burn::module::Module;
use burn::tensor::{Device, Tensor};
use data::{ImageDataset, mix};
use train::{ImageData, TrainTotals};

use crate::config::{HetDptConfig, Speed};
use crate::error::HetDptError;
use crate::finetune::{finetune, subset};
use crate::map::{Candidate, Choice, MapFit, MapPoint, Polynomial, choose};
use crate::measure::{accuracy, latencies};
use crate::order::RemovalOrder;
use crate::pruned::{PrunedViT, Removal, merge};

/// Candidates whose latency the search times together (with the unpruned model).
const CHECK_CHUNK: usize = 4;

/// Points the search may measure beyond the grid before it decides (see [`search`]).
pub(crate) const EXTRA_POINTS: usize = 3;

/// Measures MAP points: a merged model fine-tuned briefly on the MAP subset, then evaluated.
pub(crate) struct Mapper<'a> {
    base: &'a VisionTransformer,
    order: &'a RemovalOrder,
    map_set: ImageDataset,
    train: ImageData<'a>,
    val: ImageData<'a>,
    cfg: &'a HetDptConfig,
    device: &'a Device,
    seed: u64,
}

impl<'a> Mapper<'a> {
    /// A mapper drawing its seeded MAP subset of `train`.
    pub(crate) fn new(
        base: &'a VisionTransformer,
        order: &'a RemovalOrder,
        train: ImageData<'a>,
        val: ImageData<'a>,
        cfg: &'a HetDptConfig,
        device: &'a Device,
        seed: u64,
    ) -> Result<Self, HetDptError> {
        Ok(Self {
            base,
            order,
            map_set: subset(train.set, cfg.map_images, mix(seed, 2))?,
            train,
            val,
            cfg,
            device,
            seed,
        })
    }
    /// The point (n_a, n_g), the `index`-th measured (its fine-tune's seed), with what its
    /// fine-tune cost and the parameters it trained.
    fn measure(
        &self,
        (n_attn, n_act): (usize, usize),
        index: usize,
    ) -> Result<(MapPoint, TrainTotals, usize), HetDptError> {
        let layers = self.base.encoder.layer.len();
        let removal = Removal::first(layers, &self.order.attn, n_attn, &self.order.act, n_act);
        let model = merge(self.base, &removal)?;
        let (flops, params) = (model.flops(), model.num_params());
        let base_flops = merge(self.base, &Removal::none(layers))?.flops();
        let data = ImageData {
            set: &self.map_set,
            norm: self.train.norm,
        };
        let (tuned, totals) = finetune(
            model,
            data,
            &self.cfg.recipe(self.cfg.map_epochs),
            None,
            self.device,
            mix(self.seed, 100 + index as u64),
            format!("hetdpt MAP n_a={n_attn} n_g={n_act}"),
        )?;
        let point = MapPoint {
            n_attn,
            n_act,
            accuracy: accuracy(&tuned, self.val, self.device)?,
            flops,
            params,
            speedup: base_flops as f64 / flops as f64,
            added_by_search: false,
        };
        Ok((point, totals, params))
    }
}

/// What the search measured, fitted and chose.
pub(crate) struct Found {
    pub(crate) points: Vec<MapPoint>,
    pub(crate) fit: MapFit,
    pub(crate) grid: Vec<Candidate>,
    pub(crate) choice: Choice,
    /// Each MAP fine-tune's cost and trained parameters.
    pub(crate) trained: Vec<((usize, usize), TrainTotals, usize)>,
}

/// The MAP and the choice: the grid's points (`cfg.measured_values` per axis) measured and a
/// polynomial fitted; every point of the search range predicted, capped at `cap` (the unpruned
/// model's measured accuracy: a pruned model is not predicted to beat it); the budget's choice.
/// When the choice is a point the MAP never measured, that point is measured, the polynomial
/// refitted and the choice made again, up to [`EXTRA_POINTS`] times: the decision then rests
/// on a measurement where it lands, at the cost of a few fine-tunes rather than a denser grid.
pub(crate) fn search(
    mapper: &Mapper<'_>,
    reference: &PrunedViT,
    sample: &Tensor<4>,
    (max_attn, max_act): (usize, usize),
    cap: f64,
) -> Result<Found, HetDptError> {
    let cfg = mapper.cfg;
    let layers = mapper.base.encoder.layer.len();
    let l = layers as f64;
    let mut points = Vec::new();
    let mut trained = Vec::new();
    for n_attn in cfg.measured_values(max_attn) {
        for n_act in cfg.measured_values(max_act) {
            let (point, totals, params) = mapper.measure((n_attn, n_act), points.len())?;
            points.push(point);
            trained.push(((n_attn, n_act), totals, params));
        }
    }
    let order = mapper.order;
    let merged = |a: usize, g: usize| {
        merge(
            mapper.base,
            &Removal::first(layers, &order.attn, a, &order.act, g),
        )
    };
    let mut extra = 0;
    loop {
        let observed: Vec<(f64, f64, f64)> = (points.iter())
            .map(|p| (p.n_attn as f64 / l, p.n_act as f64 / l, p.accuracy))
            .collect();
        let fit = Polynomial::fit(&observed, cfg.degree)?;
        let mut grid = Vec::new();
        for n_attn in 0..=max_attn {
            for n_act in 0..=max_act {
                let predicted = fit.polynomial.predict(n_attn as f64 / l, n_act as f64 / l);
                grid.push(Candidate {
                    n_attn,
                    n_act,
                    predicted_accuracy: predicted.min(cap),
                    flop_speedup: reference.flops() as f64 / merged(n_attn, n_act)?.flops() as f64,
                    speedup: None,
                });
            }
        }
        let measured: Vec<(usize, usize)> = points.iter().map(|p| (p.n_attn, p.n_act)).collect();
        let choice = choose(grid.clone(), &measured, cfg.budget, CHECK_CHUNK, |chunk| {
            Ok(match cfg.speed {
                Speed::Flops => chunk.iter().map(|c| c.flop_speedup).collect(),
                Speed::Latency => {
                    let models: Vec<PrunedViT> = (chunk.iter())
                        .map(|c| merged(c.n_attn, c.n_act))
                        .collect::<Result<_, _>>()?;
                    let all: Vec<&PrunedViT> = std::iter::once(reference).chain(&models).collect();
                    let timed = latencies(&all, sample);
                    timed[1..].iter().map(|t| timed[0] / t).collect()
                }
            })
        })?;
        if choice.measured_point || extra == EXTRA_POINTS {
            return Ok(Found {
                points,
                fit,
                grid,
                choice,
                trained,
            });
        }
        let at = (choice.n_attn, choice.n_act);
        let (mut point, totals, params) = mapper.measure(at, points.len())?;
        point.added_by_search = true;
        points.push(point);
        trained.push((at, totals, params));
        extra += 1;
    }
}
