//! `uqformer list`: what an experiment file can name.

use backbone::{InputKind, PRESETS};
use data::{Corruption, DATASETS, Source};
use uq_metrics::OodScore;

pub fn run() -> crate::error::Result<()> {
    println!("method kinds ([[method]] kind = ...):");
    for kind in experiment::KINDS.entries() {
        println!("  {:<16} {}", kind.name, kind.about);
    }
    println!("\nbackbone presets ([backbone] preset = ...):");
    for preset in PRESETS.entries() {
        println!("  {:<16} {}", preset.name, preset.about);
    }
    println!("\npretrained backbones ([backbone] pretrained = ..., from `datasets/fetch`):");
    // As wide as the longest name, so that a new entry needs no change here.
    let width = (experiment::PRETRAINED.names().iter())
        .map(|name| name.len())
        .max()
        .unwrap_or(0);
    for p in experiment::PRETRAINED.entries() {
        let serves = match p.item.architecture.reads() {
            InputKind::Images => "image datasets",
            InputKind::Tokens => "text datasets",
        };
        println!("  {:<width$} {} ({serves})", p.name, p.about);
    }
    println!("\ndatasets ([data] dataset / ood = ...):");
    for set in DATASETS.entries() {
        let source = match set.item.source {
            Source::Bundled => "bundled",
            Source::Fetched => "datasets/fetch",
        };
        println!("  {:<20} {:<15} {}", set.name, source, set.about);
    }
    println!("\nshift corruptions ([[data.shift]] corruption = ..., severities 1-5):");
    println!(
        "  {}",
        Corruption::ALL
            .iter()
            .map(|c| c.name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("\nOOD scores ([data] ood_score = \"...\" or a list; higher = more OOD):");
    for score in OodScore::all() {
        let kind = match score {
            OodScore::Output(_) => "output",
            OodScore::Feature(_) => "features",
        };
        println!("  {:<20} {kind:<9} {}", score.name(), score.about());
    }
    println!("\nbackends ([experiment] backend = ... or --backend):");
    for backend in experiment::device::Backend::ALL {
        println!("  {:<16} {}", backend.name(), backend.about());
    }
    println!(
        "\npruning criteria (kind = \"hydra\": importance = ...; kind = \"pruned\": criterion = ...), \
         with the units each scores:"
    );
    for criterion in pruning::CRITERIA.entries() {
        println!("  {:<16} {}", criterion.name, criterion.about);
        println!(
            "  {:<16} units: {}",
            "",
            pruning::listed(criterion.item.kinds)
        );
    }
    Ok(())
}
