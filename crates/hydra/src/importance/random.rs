//! `random`: uniform random scores, seeded by the run seed and the member (a baseline).

use backbone::Classifier;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use super::{HeadImportance, HeadScores, NoParams, ScoreContext, Strategy, grid, read_params};
use crate::calibration::Calibration;
use crate::error::HydraError;

pub(super) const STRATEGY: Strategy = Strategy {
    name: "random",
    about: "uniform random scores from the seed and member (baseline)",
    build: |params| {
        read_params::<NoParams>("random", params)?;
        Ok(Box::new(Random))
    },
};

struct Random;

impl HeadImportance for Random {
    fn name(&self) -> &'static str {
        STRATEGY.name
    }

    fn scores(
        &self,
        model: &Classifier,
        _data: &Calibration,
        ctx: &ScoreContext,
    ) -> Result<HeadScores, HydraError> {
        let (layers, heads) = grid(model)?;
        let mut rng = StdRng::seed_from_u64(data::mix(ctx.seed, ctx.member as u64));
        let scores = (0..layers)
            .map(|_| (0..heads).map(|_| rng.random::<f64>()).collect())
            .collect();
        Ok(HeadScores(scores))
    }

    fn varies_by_member(&self) -> bool {
        true
    }
}
