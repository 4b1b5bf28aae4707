//! `uqformer`: run experiment files, evaluate saved predictions, list what is available, list
//! and clean the model cache, embed texts with a pretrained BERT, run a ViT-family checkpoint on
//! an array.

mod cache;
mod compare;
mod embed;
mod error;
mod estimate;
mod features;
mod list;
mod metrics;
mod npy;
mod plan;
mod predict;
mod recalibrate;
mod redraw;
mod run;
mod saved;
mod worker;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Counts heap bytes so that runs can report the peak memory of each method.
#[global_allocator]
static ALLOCATOR: runtime::memory::PeakAlloc = runtime::memory::PeakAlloc;

#[derive(Parser, Debug)]
#[command(
    name = "uqformer",
    version,
    about = "Uncertainty-aware efficient transformers: experiments and metrics"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the size of the largest arguments' variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
enum Command {
    /// Run an experiment file: train, build every method, evaluate, write results/<name>/<run-id>/.
    Run(run::RunArgs),
    /// A run's training jobs as JSON lines (id, seed, job, stage, needs, what, cost), for
    /// `run --shard`; with --device NAME, their estimated FLOPs, memory and time.
    Plan(plan::PlanArgs),
    /// Evaluate saved predictions (.npy): accuracy, NLL, Brier, ECE, AECE, class-wise ECE, AURC,
    /// AUGRC; with OOD predictions AUROC, AUPR-In, AUPR-Out, FPR95; with a validation split a
    /// fitted temperature and conformal sets.
    Metrics(metrics::MetricsArgs),
    /// One training job of a run (started by `run --workers`).
    #[command(hide = true)]
    Worker(worker::WorkerArgs),
    /// Runs made at different times (e.g. a method added later) in one report: tables, figures,
    /// report.html; refuses runs whose data differ.
    Compare(compare::CompareArgs),
    /// Draw a run's report.md, report.html and figures again from its summary.json and
    /// curves.json (after the figures' code changed); nothing measured changes.
    Report(redraw::ReportArgs),
    /// List method kinds, backbone presets, datasets, corruptions, OOD scores and backends.
    List,
    /// The trained-model cache: `cache list`, `cache clean [--unused-by FILES...] [--older-than
    /// DAYS] [--dry-run]`.
    Cache(cache::CacheArgs),
    /// Token ids and mean-pooled, L2-normalised sentence embeddings from a Hugging Face BERT
    /// checkpoint (e.g. all-MiniLM-L6-v2), to check the import against another implementation.
    Embed(embed::EmbedArgs),
    /// A ViT or DeiT checkpoint's (transformers or timm) logits, or pooled features without a
    /// classifier, on pixel values from a .npy, written as .npy: to check an import.
    Predict(predict::PredictArgs),
}

fn main() -> ExitCode {
    runtime::memory::keep_freed_memory();
    let cli = Cli::parse();
    // The whole command on a pool thread: flex's parallel ops then run in place instead of
    // being handed over one by one.
    runtime::pool::on_pool(|| execute(&cli))
}

fn execute(cli: &Cli) -> ExitCode {
    let result = match &cli.command {
        Command::Run(args) => run::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Metrics(args) => metrics::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Report(args) => redraw::run(args),
        Command::List => list::run(),
        Command::Cache(args) => cache::run(args),
        // The main process re-runs a job whose worker failed and reports the error itself.
        Command::Worker(args) => {
            return worker::run(args).map_or(ExitCode::FAILURE, |()| ExitCode::SUCCESS);
        }
        Command::Embed(args) => embed::run(args),
        Command::Predict(args) => predict::run(args),
    };
    // The one place an error becomes text: the whole chain, each part once.
    match (result, experiment::interrupt::requested()) {
        (Ok(()), _) => ExitCode::SUCCESS,
        // Stopped by a signal: the shell's convention, 128 + its number.
        (Err(e), Some(signal)) => {
            eprintln!("interrupted: {}", experiment::error_chain(&e));
            ExitCode::from((128 + signal).clamp(1, 255) as u8)
        }
        (Err(e), None) => {
            eprintln!("error: {}", experiment::error_chain(&e));
            ExitCode::FAILURE
        }
    }
}
