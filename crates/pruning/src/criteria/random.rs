//! `random`: uniform random scores, seeded by the run seed and the member (a baseline).

use backbone::Classifier;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use crate::calibration::Calibration;
use crate::criterion::{CriterionEntry, Parameterless, ScoreContext, Scored, no_params};
use crate::scores::Scores;
use crate::units::UnitKind;

pub(crate) const CRITERION: CriterionEntry = no_params::<Random>();

struct Random;

impl Parameterless for Random {
    const NAME: &'static str = "random";
    const ABOUT: &'static str = "uniform random scores from the seed and member (baseline)";
    const KINDS: &'static [UnitKind] = &UnitKind::ALL;
    const VARIES_BY_MEMBER: bool = true;
    const RANDOM: bool = true;

    fn scores(model: &Classifier, kind: UnitKind, _: &Calibration, ctx: &ScoreContext) -> Scored {
        let mut rng = StdRng::seed_from_u64(data::mix(ctx.seed, ctx.member as u64));
        let scores = (kind.per_block(model).into_iter())
            .map(|units| (0..units).map(|_| rng.random::<f64>()).collect())
            .collect();
        Ok(Scores(scores))
    }
}
