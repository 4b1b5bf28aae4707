//! `uqformer cache list`: what the trained-model cache holds (read only).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use experiment::store::timestamp;

#[derive(Args, Debug)]
pub struct CacheArgs {
    #[command(subcommand)]
    command: CacheCommand,
}

#[derive(Subcommand, Debug)]
enum CacheCommand {
    /// One line per cached training: fingerprint, epochs done, size in bytes, last modified
    /// (UTC). Folders set aside as damaged end in `.damaged`.
    List {
        /// The model cache.
        #[arg(long, default_value = "results/.cache")]
        cache: PathBuf,
    },
}

pub fn run(args: &CacheArgs) -> Result<(), String> {
    let CacheCommand::List { cache } = &args.command;
    let entries = experiment::list_cache(cache).map_err(|e| e.to_string())?;
    let width = (entries.iter().map(|e| e.name.len()))
        .max()
        .unwrap_or(0)
        .max("fingerprint".len());
    println!(
        "{:<width$}  {:>6}  {:>12}  modified (UTC)",
        "fingerprint", "epochs", "bytes"
    );
    for e in &entries {
        let epochs = e.epochs_done.map_or("-".into(), |n| n.to_string());
        let modified = e.modified.map_or("-".into(), timestamp);
        println!(
            "{:<width$}  {epochs:>6}  {:>12}  {modified}",
            e.name, e.bytes
        );
    }
    let bytes: u64 = entries.iter().map(|e| e.bytes).sum();
    let damaged = entries.iter().filter(|e| e.set_aside()).count();
    let set_aside = match damaged {
        0 => String::new(),
        n => format!(" and {n} damaged checkpoint(s) set aside"),
    };
    println!(
        "{} training(s){set_aside}, {bytes} bytes in {}",
        entries.len() - damaged,
        cache.display()
    );
    Ok(())
}
