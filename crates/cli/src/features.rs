//! `uqformer metrics --train-features ...`: the feature-space OOD detectors on features saved by
//! any framework as `.npy` files, fitted on the training features and labels given.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;
use uq_metrics::{Detector, DetectorOptions, Features, Logits, OodReport};

use crate::error::CliError;
use crate::npy::{load_labels, read_floats};
use crate::saved::{load_members, per_member};

#[derive(Args, Debug)]
pub struct FeatureArgs {
    /// Training features [N, D], or per member [M, N, D] (a detector fitted per member, the
    /// member scores averaged): what the detectors are fitted on.
    #[arg(long, requires_all = ["train_labels", "features", "ood_features"])]
    train_features: Option<PathBuf>,
    /// Integer class labels of the training features [N].
    #[arg(long)]
    train_labels: Option<PathBuf>,
    /// In-distribution test features, same layout as --train-features.
    #[arg(long)]
    features: Option<PathBuf>,
    /// OOD features, same layout as --train-features.
    #[arg(long)]
    ood_features: Option<PathBuf>,
    /// Logits of the training features ([N, C] or [M, N, C], as the features), for ViM.
    #[arg(long, requires_all = ["test_logits", "ood_feature_logits"])]
    train_logits: Option<PathBuf>,
    /// Logits of the test features (--features), same layout, for ViM.
    #[arg(long)]
    test_logits: Option<PathBuf>,
    /// Logits of the OOD features (--ood-features), same layout, for ViM.
    #[arg(long)]
    ood_feature_logits: Option<PathBuf>,
    /// Detectors, comma-separated (default: every one the inputs allow; ViM needs the logits).
    #[arg(long, value_delimiter = ',')]
    detectors: Vec<String>,
    /// KNN's k.
    #[arg(long, default_value_t = DetectorOptions::default().knn_k)]
    knn_k: usize,
    /// ViM's principal subspace dimension (default by the feature width D: 1000 from D = 1500,
    /// 512 from D = 768, D/2 below).
    #[arg(long)]
    vim_dim: Option<usize>,
}

impl FeatureArgs {
    pub fn given(&self) -> bool {
        self.train_features.is_some()
    }
}

/// One side's features (and logits) per member.
struct Side {
    features: Vec<Features>,
    logits: Option<Vec<Logits>>,
}

/// Each detector's OOD metrics, test features against OOD features.
pub fn run(args: &FeatureArgs) -> crate::error::Result<BTreeMap<&'static str, OodReport>> {
    let path = |p: &Option<PathBuf>, flag: &str| {
        p.clone()
            .ok_or_else(|| format!("--train-features needs {flag}"))
    };
    let train = load_side(
        &path(&args.train_features, "")?,
        args.train_logits.as_deref(),
    )?;
    let test = load_side(
        &path(&args.features, "--features")?,
        args.test_logits.as_deref(),
    )?;
    let ood = load_side(
        &path(&args.ood_features, "--ood-features")?,
        args.ood_feature_logits.as_deref(),
    )?;
    let labels_path = path(&args.train_labels, "--train-labels")?;
    let labels = load_labels(&labels_path, train.features[0].n(), "the training features")?;
    for (side, flag) in [(&test, "--features"), (&ood, "--ood-features")] {
        let (m, d) = (side.features.len(), side.features[0].d());
        let (train_m, train_d) = (train.features.len(), train.features[0].d());
        if (m, d) != (train_m, train_d) {
            return Err(format!(
                "{flag}: {m} member(s) of width {d}, but --train-features has {train_m} of \
                 width {train_d}"
            )
            .into());
        }
    }
    let detectors: Vec<Detector> = match args.detectors.is_empty() {
        true => (Detector::ALL.into_iter())
            .filter(|d| !d.needs_logits() || train.logits.is_some())
            .collect(),
        false => (args.detectors.iter())
            .map(|name| name.parse().map_err(|e| CliError::at("--detectors", e)))
            .collect::<Result<_, CliError>>()?,
    };
    let options = DetectorOptions {
        knn_k: args.knn_k,
        vim_dim: args.vim_dim,
        ..DetectorOptions::default()
    };
    let mut out = BTreeMap::new();
    for detector in detectors {
        let fitted = uq_metrics::fit_members(
            detector,
            &train.features,
            &labels,
            train.logits.as_deref(),
            &options,
        )?;
        let score = |side: &Side| fitted.score(&side.features, side.logits.as_deref());
        let (id, od) = (score(&test)?, score(&ood)?);
        let report = uq_metrics::ood_report(&id, &od)?;
        out.insert(detector.name(), report);
    }
    Ok(out)
}

/// Features [N, D] or [M, N, D], and their logits of the same layout when given.
fn load_side(path: &Path, logits: Option<&Path>) -> crate::error::Result<Side> {
    let features = per_member(path, &read_floats(path)?, "features")?
        .into_iter()
        .map(|x| Features::from_array(x.view()).map_err(|e| CliError::at(path.display(), e)))
        .collect::<Result<Vec<_>, _>>()?;
    let logits = match logits {
        None => None,
        Some(p) => {
            let logits = load_members(p)?;
            if logits.len() != features.len() || logits[0].n() != features[0].n() {
                return Err(format!(
                    "{}: {} member(s) of {} rows, but {} has {} of {}",
                    p.display(),
                    logits.len(),
                    logits[0].n(),
                    path.display(),
                    features.len(),
                    features[0].n()
                )
                .into());
            }
            Some(logits)
        }
    };
    Ok(Side { features, logits })
}

/// The detectors' OOD metrics as a fixed-width table.
pub fn table(reports: &BTreeMap<&'static str, OodReport>) -> String {
    let mut out = format!(
        "{:<22} {:>8} {:>8} {:>8} {:>8}   (%)\n",
        "detector", "AUROC ↑", "AUPR-In", "AUPR-Out", "FPR95 ↓"
    );
    for (name, r) in reports {
        let [a, i, o, f] = [r.auroc, r.aupr_in, r.aupr_out, r.fpr95].map(|x| 100.0 * x);
        out.push_str(&format!("{name:<22} {a:>8.2} {i:>8.2} {o:>8.2} {f:>8.2}\n"));
    }
    out.trim_end().to_string()
}
