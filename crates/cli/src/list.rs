//! `uqformer list`: what an experiment file can name ([`experiment::catalog`]).

use experiment::catalog;
use uq_metrics::OodScore;

pub fn run() -> crate::error::Result<()> {
    println!("method kinds ([[method]] kind = ...):");
    for kind in catalog::method_kinds() {
        println!("  {:<16} {}", kind.name, kind.about);
    }
    println!("\nbackbone presets ([backbone] preset = ...):");
    for preset in catalog::backbone_presets() {
        println!("  {:<16} {}", preset.name, preset.about);
    }
    println!("\npretrained backbones ([backbone] pretrained = ..., from `datasets/fetch`):");
    let pretrained = catalog::pretrained_backbones();
    // As wide as the longest name, so that a new entry needs no change here.
    let width = pretrained.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for p in pretrained {
        println!("  {:<width$} {} ({})", p.name, p.about, p.note);
    }
    println!("\ndatasets ([data] dataset / ood = ...):");
    for set in catalog::datasets() {
        println!("  {:<20} {:<15} {}", set.name, set.note, set.about);
    }
    println!("\nshift corruptions ([[data.shift]] corruption = ..., severities 1-5):");
    println!("  {}", catalog::corruptions().join(", "));
    println!("\nOOD scores ([data] ood_score = \"...\" or a list; higher = more OOD):");
    for score in OodScore::all() {
        let kind = match score {
            OodScore::Output(_) => "output",
            OodScore::Feature(_) => "features",
        };
        println!("  {:<20} {kind:<9} {}", score.name(), score.about());
    }
    println!("\nbackends ([experiment] backend = ... or --backend):");
    for backend in runtime::Backend::ALL {
        println!("  {:<16} {}", backend.name(), backend.about());
    }
    println!(
        "\npruning criteria (kind = \"hydra\": importance = ...; kind = \"pruned\": criterion = \
         ...), with the units each scores:"
    );
    for criterion in catalog::pruning_criteria() {
        println!("  {:<16} {}", criterion.name, criterion.about);
        println!("  {:<16} units: {}", "", criterion.note);
    }
    Ok(())
}
