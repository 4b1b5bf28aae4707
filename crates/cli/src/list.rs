//! `uqformer list`: what an experiment file can name.

use backbone::{InputKind, ViTConfig};
use data::{Catalog, Corruption, Source};
use uq_metrics::OodScore;

pub fn run() -> crate::error::Result<()> {
    println!("method kinds ([[method]] kind = ...):");
    for kind in experiment::KINDS {
        println!("  {:<16} {}", kind.name, kind.about);
    }
    println!("\nbackbone presets ([backbone] preset = ...):");
    for name in ViTConfig::preset_names() {
        let c = ViTConfig::preset(name)?;
        println!(
            "  {name:<16} ViT {}x{}x{}, patch {}, width {}, {} blocks, {} heads, MLP {}",
            c.image_size,
            c.image_size,
            c.channels,
            c.patch_size,
            c.d_model,
            c.n_layers,
            c.n_heads,
            c.d_mlp
        );
    }
    println!("\npretrained backbones ([backbone] pretrained = ..., from `datasets/fetch`):");
    // As wide as the longest name, so that a new entry needs no change here.
    let width = (experiment::PRETRAINED.iter())
        .map(|p| p.name.len())
        .max()
        .unwrap_or(0);
    for p in experiment::PRETRAINED {
        let serves = match p.architecture.reads() {
            InputKind::Images => "image datasets",
            InputKind::Tokens => "text datasets",
        };
        println!("  {:<width$} {} ({serves})", p.name, p.about);
    }
    println!("\ndatasets ([data] dataset / ood = ...):");
    for info in Catalog::names() {
        let source = match info.source {
            Source::Bundled => "bundled",
            Source::Fetched => "datasets/fetch",
        };
        println!("  {:<20} {:<15} {}", info.name, source, info.description);
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
        println!("  {:<20} {kind:<9} {}", score.name(), score.describe());
    }
    println!("\nbackends ([experiment] backend = ... or --backend):");
    for backend in experiment::device::Backend::ALL {
        println!("  {:<16} {}", backend.name(), backend.about());
    }
    println!("\nhead-importance strategies ([[method]] kind = \"hydra\", importance = ...):");
    for strategy in hydra::STRATEGIES {
        println!("  {:<16} {}", strategy.name, strategy.about);
    }
    Ok(())
}
