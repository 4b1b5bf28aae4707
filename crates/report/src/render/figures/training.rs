//! Training curves: every training's loss and accuracy per epoch, on its training batches and
//! on the validation split, from its checkpoint's log.

use plots::{Figure, Legend, Mark, PlotError, Point, Series};

use super::file::FigureFile;
use super::inputs::Inputs;
use super::notes::seeds_note;
use super::series::mean_std;
use crate::curves::{Epoch, TrainingLog};
use crate::summary::Summary;

/// One training across seeds: its label without the seed, and its log in every seed.
type Group<'a> = (String, Vec<&'a TrainingLog>);

/// Two panels, loss and accuracy (%) against the epoch: one colour per training, solid over
/// the training batches and dashed on the validation split; its seeds (`seed S ...` labels)
/// averaged with a ± std band.
pub fn training(inputs: &Inputs<'_>) -> Result<FigureFile, PlotError> {
    let groups = groups(&inputs.curves.training);
    let names: Vec<String> = (groups.iter())
        .map(|(label, _)| legend_name(label, inputs.summary))
        .collect();
    let mut loss = panel(
        &groups,
        &names,
        "Loss (solid: training batches; dashed: validation)",
        "mean cross-entropy",
        |e| (e.loss, e.val_loss),
    );
    // One legend right of both panels, off the curves.
    loss.legend = Legend::Outside;
    let mut accuracy = panel(
        &groups,
        &names,
        "Accuracy (solid: training batches; dashed: validation)",
        "accuracy (%)",
        |e| (100.0 * e.accuracy, e.val_accuracy.map(|a| 100.0 * a)),
    );
    accuracy.legend = Legend::Outside;
    Ok(FigureFile {
        file: "fig-training.svg".into(),
        title: "Training curves".into(),
        caption: caption(inputs.summary, &groups),
        svg: plots::render_grid(&[loss, accuracy], 2, (700, 520))?,
    })
}

/// The trainings with epochs, in first-seen order, their seeds together.
fn groups(logs: &[TrainingLog]) -> Vec<Group<'_>> {
    let mut groups: Vec<Group<'_>> = Vec::new();
    for log in logs.iter().filter(|l| !l.epochs.is_empty()) {
        let name = without_seed(&log.label);
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, logs)) => logs.push(log),
            None => groups.push((name, vec![log])),
        }
    }
    groups
}

/// A panel: per training a solid line of `value().0` and, where the log has it, a dashed
/// line of `value().1` in the same colour (unnamed: the solid line's legend entry serves both).
fn panel(
    groups: &[Group<'_>],
    names: &[String],
    title: &str,
    y_label: &str,
    value: fn(&Epoch) -> (f64, Option<f64>),
) -> Figure {
    let mut series = Vec::new();
    for (k, ((_, logs), name)) in groups.iter().zip(names).enumerate() {
        series.push(Series::new(name, Mark::Line, mean_over_seeds(logs, |e| value(e).0)).colour(k));
        let val = mean_over_seeds(logs, |e| value(e).1.unwrap_or(f64::NAN));
        if val.iter().any(Point::finite) {
            series.push(Series::new("", Mark::Dashed, val).colour(k));
        }
    }
    Figure {
        title: title.into(),
        x_label: "epoch".into(),
        y_label: y_label.into(),
        legend: Legend::None,
        series,
        note: Some(
            "no training in this run (every model was trained before curves were logged)".into(),
        ),
        ..Figure::default()
    }
}

/// Per epoch (as far as every seed's log goes) the mean of `value` over the seeds, with a
/// ± std band; NaN (an epoch without the value) leaves a gap.
fn mean_over_seeds(logs: &[&TrainingLog], value: impl Fn(&Epoch) -> f64) -> Vec<Point> {
    let epochs = logs.iter().map(|l| l.epochs.len()).min().unwrap_or(0);
    (0..epochs)
        .map(|i| {
            let ys: Vec<f64> = logs.iter().map(|l| value(&l.epochs[i])).collect();
            let (mean, std) = mean_std(&ys);
            let p = Point::new((i + 1) as f64, mean);
            match std.is_finite() {
                true => p.band(mean - std, mean + std),
                false => p,
            }
        })
        .collect()
}

/// `seed 3 model 1` -> `model 1`: the same training in every seed.
fn without_seed(label: &str) -> String {
    let rest = label
        .strip_prefix("seed ")
        .and_then(|r| r.split_once(' ').map(|(_, rest)| rest));
    rest.unwrap_or(label).to_string()
}

/// The methods of the run, each once (its variants left out), with kind and members.
fn methods(summary: &Summary) -> Vec<(&str, &str, usize)> {
    let mut out: Vec<(&str, &str, usize)> = Vec::new();
    for m in summary.methods.iter().filter(|m| m.variant.is_none()) {
        // Summaries older than the `method` field name the method in `name`.
        let name = if m.method.is_empty() {
            &m.name
        } else {
            &m.method
        };
        if !out.iter().any(|(n, ..)| n == name) {
            out.push((name, &m.kind, m.members));
        }
    }
    out
}

/// What base model `k` (1-based) is to the run's methods: the model of `single` (k = 1), a
/// member of a Deep Ensemble of k members or more.
fn base_model_roles(k: usize, summary: &Summary) -> Vec<String> {
    (methods(summary).into_iter())
        .filter_map(|(name, kind, members)| match kind {
            "single" if k == 1 => Some(name.to_string()),
            "deep_ensemble" if k <= members => Some(format!("{name} {k}")),
            _ => None,
        })
        .collect()
}

/// The legend's name of a training (its label without the seed): `model K` (a base model)
/// with the methods it serves, `<method> model` (a method's members trained together, in one
/// training) as the method's name; the others as labelled.
fn legend_name(label: &str, summary: &Summary) -> String {
    if let Some(k) = base_model(label) {
        let roles = base_model_roles(k, summary);
        return match roles.is_empty() {
            true => format!("base model {k}"),
            false => format!("base model {k} ({})", roles.join(", ")),
        };
    }
    match label.strip_suffix(" model") {
        Some(method) => method.to_string(),
        None => label.to_string(),
    }
}

/// `model K` -> K: the labels of the base models.
fn base_model(label: &str) -> Option<usize> {
    label.strip_prefix("model ")?.parse().ok()
}

/// The caption: what the lines are, what each kind of label means (for the kinds drawn), and
/// why a line may have no validation part.
fn caption(summary: &Summary, groups: &[Group<'_>]) -> String {
    let mut parts = vec![format!(
        "Every training the run stands on ({}), as its checkpoint logged it: solid, the mean \
         loss and accuracy over the epoch's training batches (with the recipe's augmentation, \
         dropout and label smoothing); dashed, the model on the validation split after the \
         epoch (evaluation mode, plain cross-entropy).",
        seeds_note(summary)
    )];
    let has = |test: fn(&str) -> bool| groups.iter().any(|(label, _)| test(label));
    if has(|l| base_model(l).is_some()) {
        parts.push(
            "Base model k is the seed's k-th model trained with the experiment's recipe: its \
             first is the single model (which MC Dropout samples, and the pruned and adapted \
             methods start from), the first M the Deep Ensemble's M members."
                .into(),
        );
    }
    if has(|l| l.ends_with(" model")) {
        parts.push("A method's name alone: its members trained together, in one training.".into());
    }
    if has(|l| l.contains(" member-")) {
        parts.push("`member-k`: member k's own fine-tune after pruning (counted from 0).".into());
    }
    parts.push(
        "A model read back from the cache shows the log of the run that trained it; one trained \
         before validation was logged has no dashed line."
            .into(),
    );
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curves::RunCurves;

    fn summary(methods: &[(&str, &str, usize)]) -> Summary {
        let entry = |(name, kind, members): &(&str, &str, usize)| {
            serde_json::json!({
                "name": name, "method": name, "kind": kind, "members": members, "seed": 0,
                "id": {"accuracy": 0.8, "nll": 0.5, "brier": 0.3, "ece": 0.05, "aece": 0.06,
                       "aurc": 0.1},
                "ood": {}, "shift": {},
                "cost": {"params": 10, "flops": 100, "latency_ms_b1": null, "latency_ms": null,
                         "peak_mem_bytes": null},
            })
        };
        let methods: Vec<_> = methods.iter().map(entry).collect();
        serde_json::from_value(serde_json::json!({
            "experiment": "x", "seeds": [0], "methods": methods,
        }))
        .unwrap()
    }

    /// A training's log as curves.json holds it; `val` adds validation values to every epoch.
    fn log(label: &str, accuracies: &[f64], val: bool) -> TrainingLog {
        let epochs: Vec<_> = (accuracies.iter().enumerate())
            .map(|(i, a)| {
                let mut e = serde_json::json!({
                    "epoch": i + 1, "loss": 1.0 - a, "accuracy": a, "seconds": 1.0,
                });
                if val {
                    e["val_loss"] = (1.1 - a).into();
                    e["val_accuracy"] = (a - 0.05).into();
                }
                e
            })
            .collect();
        serde_json::from_value(serde_json::json!({"label": label, "epochs": epochs})).unwrap()
    }

    #[test]
    fn labels_lose_their_seed() {
        assert_eq!(without_seed("seed 12 model 3"), "model 3");
        assert_eq!(without_seed("seed 0 lora adapters"), "lora adapters");
        assert_eq!(without_seed("distillation"), "distillation");
    }

    #[test]
    fn the_legend_says_which_methods_a_training_serves() {
        let summary = summary(&[
            ("single", "single", 1),
            ("de", "deep_ensemble", 3),
            ("be", "batch_ensemble", 4),
            ("hydra_taylor", "hydra", 3),
        ]);
        let name = |label| legend_name(label, &summary);
        assert_eq!(name("model 1"), "base model 1 (single, de 1)");
        assert_eq!(name("model 3"), "base model 3 (de 3)");
        assert_eq!(name("model 4"), "base model 4");
        assert_eq!(name("be model"), "be");
        assert_eq!(name("hydra_taylor member-0"), "hydra_taylor member-0");
        assert_eq!(name("lora_ensemble adapters"), "lora_ensemble adapters");
    }

    #[test]
    fn validation_is_dashed_in_its_training_colour_and_accuracy_in_percent() {
        // One training logged with validation, one (cached from an older run) without.
        let curves = RunCurves {
            training: vec![
                log("seed 0 model 1", &[0.5, 0.75], true),
                log("seed 0 be model", &[0.25, 0.5], false),
            ],
            ..RunCurves::default()
        };
        let groups = groups(&curves.training);
        let names = vec!["a".to_string(), "b".to_string()];
        let figure = panel(&groups, &names, "t", "y", |e| {
            (100.0 * e.accuracy, e.val_accuracy.map(|a| 100.0 * a))
        });
        let shown: Vec<(&str, Mark, Option<usize>, Vec<f64>)> = (figure.series.iter())
            .map(|s| {
                let ys = s.points.iter().map(|p| p.y).collect();
                (s.name.as_str(), s.mark, s.colour, ys)
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("a", Mark::Line, Some(0), vec![50.0, 75.0]),
                ("", Mark::Dashed, Some(0), vec![45.0, 70.0]),
                ("b", Mark::Line, Some(1), vec![25.0, 50.0]),
            ]
        );
    }

    #[test]
    fn every_training_gets_its_own_colour_and_the_figure_names_them() {
        let labels: Vec<String> = (1..=3)
            .map(|k| format!("seed 0 model {k}"))
            .chain([
                "seed 0 be model".into(),
                "seed 0 lora_ensemble adapters".into(),
            ])
            .chain((0..3).flat_map(|m| {
                ["taylor", "circuit", "random"].map(|h| format!("seed 0 hydra_{h} member-{m}"))
            }))
            .chain(["seed 1 model 1".into()])
            .collect();
        let curves = RunCurves {
            training: labels.iter().map(|l| log(l, &[0.5, 0.6], true)).collect(),
            ..RunCurves::default()
        };
        let summary = summary(&[("single", "single", 1), ("de", "deep_ensemble", 3)]);
        let inputs = Inputs {
            summary: &summary,
            curves: &curves,
            score: "msp",
        };
        let groups = groups(&curves.training);
        // Seed 1's model 1 joins seed 0's: 14 trainings.
        assert_eq!(groups.len(), 14);
        let names: Vec<String> = groups
            .iter()
            .map(|(l, _)| legend_name(l, &summary))
            .collect();
        let figure = panel(&groups, &names, "t", "y", |e| (e.loss, e.val_loss));
        let mut colours: Vec<usize> = (figure.series.iter())
            .filter(|s| s.mark == Mark::Line)
            .filter_map(|s| s.colour)
            .collect();
        colours.dedup();
        assert_eq!(colours, (0..14).collect::<Vec<_>>());
        assert!(14 <= plots::PALETTE.len());
        let file = training(&inputs).unwrap();
        let doc = roxmltree::Document::parse(&file.svg).unwrap();
        let texts: Vec<&str> = (doc.descendants())
            .filter_map(|n| n.text().map(str::trim))
            .collect();
        for name in ["base model 1 (single, de 1)", "base model 3 (de 3)", "be"] {
            assert!(texts.contains(&name), "{name} not in the legend: {texts:?}");
        }
        assert!(file.caption.contains("Base model k"), "{}", file.caption);
        assert!(
            file.caption.contains("member k's own fine-tune"),
            "{}",
            file.caption
        );
    }
}
