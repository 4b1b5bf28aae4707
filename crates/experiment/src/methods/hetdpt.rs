//! `hetdpt`: HetDPT depth pruning of the seed's base model: removal orders of
//! attention branches and GELUs from learnable gate scores, the accuracy predictor (MAP) over a
//! grid of (n_a, n_g), the budgeted choice, merging into a smaller model, and a distilled
//! fine-tune. Every parameter of `hetdpt::HetDptConfig` is a key of the `[[method]]` table
//! (`width = { ... }` adds HetDPT+). The MAP points, fit, choice and before/after measurements
//! go to `hetdpt.json` in the run folder, the headline figures to `summary.json`.

use hetdpt::HetDptConfig;
use serde::{Deserialize, Serialize};

use super::context::{Built, Context, Setting};
use super::method::{Method, Needs};
use crate::error::{ExperimentError, Result};
use report::TrainCost;
use report::curves::PredictorGrid;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct HetDpt(pub HetDptConfig);

impl Method for HetDpt {
    fn members(&self) -> usize {
        1
    }

    fn needs(&self) -> Needs {
        Needs::Vit
    }

    fn measures_latency(&self) -> bool {
        self.0.speed == hetdpt::Speed::Latency
    }

    fn check(&self, setting: &Setting) -> Result<()> {
        self.0.check()?;
        if setting.val_fraction == 0.0 {
            return Err(ExperimentError::invalid(
                "the MAP measures accuracy on the validation split: set data.val_fraction > 0",
            ));
        }
        Ok(())
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        ctx.say("learning removal orders, fitting the accuracy predictor, fine-tuning");
        let task = hetdpt::Task {
            base: ctx.base_vit()?,
            vit: ctx.vit()?,
            train: ctx.images(ctx.train)?,
            val: ctx.images(ctx.val)?,
            device: ctx.device,
            seed: ctx.seed_for("hetdpt"),
        };
        let outcome = hetdpt::compress(&task, &self.0)?;
        let report = &outcome.report;
        ctx.say(&format!(
            "chose n_a = {}, n_g = {}; MAP R² {:.3}; measured speed-up {:.2}x",
            report.choice.n_attn, report.choice.n_act, report.fit.r_squared, report.speedup
        ));
        // HetDPT trains outside `ctx.fit` (gate rounds, MAP fine-tunes, the distilled
        // fine-tune): its own cost joins the base model's in `train_cost`. What a user keeps is
        // the pruned model, in f32.
        let own = report.training;
        *ctx.trained.borrow_mut() += TrainCost {
            wall_seconds: own.wall_seconds,
            steps: own.steps,
            samples: own.samples,
            stored_bytes: 4 * report.pruned.params as u64,
            trainings: own.trainings,
            trainable_params: own.trainable_params,
            ..TrainCost::default()
        };
        if !report.budget_met {
            ctx.say(&format!(
                "missed its budget {:?}: measured {:.2}x, accuracy {:.4} (unpruned {:.4})",
                self.0.budget,
                report.achieved_speedup,
                report.pruned.accuracy,
                report.base.accuracy
            ));
        }
        let json = serde_json::to_vec_pretty(report)?;
        let mut built = Built::new(outcome.model);
        built.extra.insert(
            "hetdpt".into(),
            serde_json::json!({
                "choice": report.choice,
                "r_squared": report.fit.r_squared,
                "loo_r_squared": report.fit.loo_r_squared,
                "loo_max_abs_error": report.fit.loo_max_abs_error,
                "speedup": report.speedup,
                "budget": self.0.budget,
                "budget_met": report.budget_met,
                "achieved_speedup": report.achieved_speedup,
                "prediction_cap": report.prediction_cap,
                "added_points": report.points.iter().filter(|p| p.added_by_search).count(),
                "removal": report.removal,
            }),
        );
        built.files.push(("hetdpt.json".into(), json));
        built.predictor = Some(predictor_grid(report));
        Ok(built)
    }
}

/// The accuracy predictor's grid of a HetDPT report, for `curves.json` (`method` and `seed`
/// filled in by the runner).
fn predictor_grid(report: &hetdpt::HetDptReport) -> PredictorGrid {
    let prediction = |a: usize, g: usize| {
        (report.grid.iter())
            .find(|c| (c.n_attn, c.n_act) == (a, g))
            .map_or(f64::NAN, |c| c.predicted_accuracy)
    };
    let held_out = &report.fit.loo_predictions;
    PredictorGrid {
        method: String::new(),
        seed: 0,
        predicted: (report.grid.iter())
            .map(|c| (c.n_attn, c.n_act, c.predicted_accuracy))
            .collect(),
        measured: (report.points.iter().enumerate())
            .map(|(i, p)| {
                let loo = held_out.get(i).copied().unwrap_or(f64::NAN);
                let fitted = prediction(p.n_attn, p.n_act);
                (p.n_attn, p.n_act, p.accuracy, fitted, loo)
            })
            .collect(),
        chosen: (
            report.choice.n_attn,
            report.choice.n_act,
            report.choice.predicted_accuracy,
            report.pruned.accuracy,
        ),
        base_accuracy: report.base.accuracy,
        loo_r_squared: report.fit.loo_r_squared,
        loo_max_abs_error: report.fit.loo_max_abs_error,
    }
}
