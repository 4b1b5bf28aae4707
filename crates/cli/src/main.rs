//! `uqformer`: run experiment files, evaluate saved predictions, list what is available.

mod metrics;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "uqformer", version, about = "Uncertainty-aware efficient transformers: experiments and metrics")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Evaluate saved predictions (.npy): accuracy, NLL, Brier, ECE, AECE, AURC and, with OOD
    /// predictions, AUROC, AUPR-In, AUPR-Out, FPR95.
    Metrics(metrics::MetricsArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Metrics(args) => metrics::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
