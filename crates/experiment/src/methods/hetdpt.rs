//! `hetdpt`: HetDPT depth pruning of the seed's base model: removal orders of
//! attention branches and GELUs from learnable gate scores, the accuracy predictor (MAP) over a
//! grid of (n_a, n_g), the budgeted choice, merging into a smaller model, and a distilled
//! fine-tune. Every parameter of `hetdpt::HetDptConfig` is a key of the `[[method]]` table
//! (`width = { ... }` adds HetDPT+). The MAP points, fit, choice and before/after measurements
//! go to `hetdpt.json` in the run folder, the headline figures to `summary.json`
//! ([`HetDptOutputs`]), the predictor's grid to `curves.json`.

use hetdpt::HetDptConfig;
use serde::{Deserialize, Serialize};

use super::context::{Built, Context, Setting};
use super::method::{Method, Needs};
use crate::error::{ExperimentError, Result};
use crate::workload::{Sizing, Training, Work};
use report::TrainCost;
use report::curves::PredictorGrid;
use report::outputs::{
    HetDptBudget, HetDptCandidate, HetDptChoice, HetDptOutputs, HetDptRemoval, MethodOutputs,
};

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

    /// Its search and fine-tunes, all counted on the unpruned model (an upper bound): the gate
    /// rounds (one per removed branch or GELU, `importance_steps` batches each), a fine-tune of
    /// every measured MAP point and the final distilled fine-tune (its teacher's forward
    /// counted as one more forward). Evaluation runs the pruned model: the unpruned FLOPs over
    /// `min_speedup` (FLOPs taken to scale with time), or the unpruned model's under an
    /// accuracy budget, whose speed-up only the search decides.
    fn work(&self, sizing: &Sizing<'_>) -> Work {
        let (base, cfg) = (sizing.base, &self.0);
        let (max_attn, max_act) = cfg.grid(base.layers()).unwrap_or((0, 0));
        let values = cfg.map_values.unwrap_or(cfg.degree + 2) as u64;
        let points = values.min(max_attn as u64 + 1) * values.min(max_act as u64 + 1);
        let train = |what: &str, samples: u64, forwards: u64| Training {
            what: what.into(),
            forward_flops: forwards * base.forward_flops(),
            samples,
            params: base.params(),
            trainable: base.params(),
            batch_size: cfg.batch_size,
            activation_bytes: base.train_activation_bytes(),
        };
        let rounds = (max_attn + max_act) as u64;
        let finetune = cfg
            .finetune_images
            .map_or(sizing.train_samples, |n| n as u64);
        let trainings = vec![
            train(
                "gate rounds",
                rounds * (cfg.importance_steps * cfg.batch_size) as u64,
                1,
            ),
            train(
                "MAP fine-tunes",
                points * (cfg.map_epochs * cfg.map_images) as u64,
                1,
            ),
            train(
                "distilled fine-tune",
                cfg.finetune_epochs as u64 * finetune,
                2,
            ),
        ];
        let speedup = match cfg.budget {
            hetdpt::Budget::MinSpeedup(s) if s > 1.0 => s,
            _ => 1.0,
        };
        Work {
            trainings,
            eval_flops: (base.forward_flops() as f64 / speedup) as u64,
            eval_params: base.params(),
            eval_activation_bytes: base.eval_activation_bytes(),
        }
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
        // Timed at the batch the run's latency table uses, so that both speed-ups are one measure.
        let mut cfg = self.0.clone();
        cfg.latency_batch.get_or_insert(ctx.eval_batch);
        let outcome = hetdpt::compress(&task, &cfg)?;
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
        built.outputs = Some(MethodOutputs::HetDpt(self.outputs(report)));
        built.files.push(("hetdpt.json".into(), json));
        built.predictor = Some(predictor_grid(report));
        Ok(built)
    }
}

impl HetDpt {
    /// The headline of a HetDPT report, for `summary.json`: the MAP's fit, the choice, the
    /// budget and whether the final model met it.
    fn outputs(&self, report: &hetdpt::HetDptReport) -> HetDptOutputs {
        let choice = &report.choice;
        HetDptOutputs {
            choice: HetDptChoice {
                n_attn: choice.n_attn,
                n_act: choice.n_act,
                predicted_accuracy: choice.predicted_accuracy,
                speedup: choice.speedup,
                reason: choice.reason.clone(),
                searched: Some(choice.searched),
                measured_point: Some(choice.measured_point),
                checked: (choice.checked.iter())
                    .map(|c| HetDptCandidate {
                        n_attn: c.n_attn,
                        n_act: c.n_act,
                        predicted_accuracy: c.predicted_accuracy,
                        flop_speedup: c.flop_speedup,
                        speedup: c.speedup,
                    })
                    .collect(),
            },
            r_squared: report.fit.r_squared,
            loo_r_squared: Some(report.fit.loo_r_squared),
            loo_max_abs_error: Some(report.fit.loo_max_abs_error),
            speedup: report.speedup,
            budget: Some(match self.0.budget {
                hetdpt::Budget::MinSpeedup(x) => HetDptBudget::MinSpeedup(x),
                hetdpt::Budget::MaxAccuracyDrop(x) => HetDptBudget::MaxAccuracyDrop(x),
            }),
            budget_met: Some(report.budget_met),
            achieved_speedup: Some(report.achieved_speedup),
            prediction_cap: Some(report.prediction_cap),
            added_points: Some(report.points.iter().filter(|p| p.added_by_search).count()),
            removal: HetDptRemoval {
                attn: report.removal.attn.clone(),
                act: report.removal.act.clone(),
            },
        }
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
