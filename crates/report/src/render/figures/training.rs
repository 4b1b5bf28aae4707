//! Training curves: every training's loss and accuracy per epoch, from its checkpoint's log.

use plots::{Figure, Legend, Mark, PlotError, Point, Series};

use super::{FigureFile, Inputs, mean_std, seeds_note};
use crate::curves::TrainingLog;

/// Two panels, loss and accuracy on the training batches against the epoch; one line per
/// training, its seeds (`seed S ...` labels) averaged with a ± std band.
pub fn training(inputs: &Inputs<'_>) -> Result<FigureFile, PlotError> {
    let mut groups: Vec<(String, Vec<&TrainingLog>)> = Vec::new();
    for log in inputs
        .curves
        .training
        .iter()
        .filter(|l| !l.epochs.is_empty())
    {
        let name = without_seed(&log.label);
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, logs)) => logs.push(log),
            None => groups.push((name, vec![log])),
        }
    }
    let panel = |title: &str, y_label: &str, value: fn(&crate::curves::Epoch) -> f64| {
        let series = (groups.iter().enumerate())
            .map(|(k, (name, logs))| {
                let epochs = logs.iter().map(|l| l.epochs.len()).min().unwrap_or(0);
                let points = (0..epochs)
                    .map(|i| {
                        let ys: Vec<f64> = logs.iter().map(|l| value(&l.epochs[i])).collect();
                        let (mean, std) = mean_std(&ys);
                        let p = Point::new((i + 1) as f64, mean);
                        match std.is_finite() {
                            true => p.band(mean - std, mean + std),
                            false => p,
                        }
                    })
                    .collect();
                Series::new(name, Mark::Line, points).colour(k)
            })
            .collect();
        Figure {
            title: title.into(),
            x_label: "epoch".into(),
            y_label: y_label.into(),
            legend: Legend::None,
            series,
            note: Some(
                "no training in this run (every model was trained before curves were logged)"
                    .into(),
            ),
            ..Figure::default()
        }
    };
    let mut loss = panel(
        "Training loss",
        "loss (mean over the epoch's batches)",
        |e| e.loss,
    );
    loss.legend = Legend::UpperRight;
    let accuracy = panel(
        "Training accuracy",
        "accuracy (on the augmented batches)",
        |e| e.accuracy,
    );
    Ok(FigureFile {
        file: "fig-training.svg".into(),
        title: "Training curves".into(),
        caption: format!(
            "Every training the run stands on (base models, the methods' own trainings), as its \
             checkpoint logged it; a model read back from the cache shows the log of the run \
             that trained it ({}).",
            seeds_note(inputs.summary)
        ),
        svg: plots::render_grid(&[loss, accuracy], 2, (620, 460))?,
    })
}

/// `seed 3 model 1` -> `model 1`: the same training in every seed.
fn without_seed(label: &str) -> String {
    let rest = label
        .strip_prefix("seed ")
        .and_then(|r| r.split_once(' ').map(|(_, rest)| rest));
    rest.unwrap_or(label).to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn labels_lose_their_seed() {
        assert_eq!(super::without_seed("seed 12 model 3"), "model 3");
        assert_eq!(super::without_seed("seed 0 lora adapters"), "lora adapters");
        assert_eq!(super::without_seed("distillation"), "distillation");
    }
}
