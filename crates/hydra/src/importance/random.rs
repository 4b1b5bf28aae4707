//! `random`: uniform random scores, seeded by the run seed and the member (a baseline).

use backbone::Classifier;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use super::scores::HeadScores;
use super::shared::grid;
use super::strategy::{Parameterless, ScoreContext, Scored, Strategy, no_params};
use crate::calibration::Calibration;

pub(super) const STRATEGY: Strategy = no_params::<Random>();

struct Random;

impl Parameterless for Random {
    const NAME: &'static str = "random";
    const ABOUT: &'static str = "uniform random scores from the seed and member (baseline)";
    const VARIES_BY_MEMBER: bool = true;

    fn scores(model: &Classifier, _data: &Calibration, ctx: &ScoreContext) -> Scored {
        let (layers, heads) = grid(model)?;
        let mut rng = StdRng::seed_from_u64(data::mix(ctx.seed, ctx.member as u64));
        let scores = (0..layers)
            .map(|_| (0..heads).map(|_| rng.random::<f64>()).collect())
            .collect();
        Ok(HeadScores(scores))
    }
}
