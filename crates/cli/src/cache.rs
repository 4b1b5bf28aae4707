//! `uqformer cache list` (what the trained-model cache holds; read only) and `uqformer cache
//! clean` (remove what is no longer used).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::CliError;
use clap::{Args, Subcommand};
use experiment::{ExperimentConfig, Overrides};
use report::timestamp;
use runtime::{CacheEntry, Clean};

#[derive(Args, Debug)]
pub struct CacheArgs {
    #[command(subcommand)]
    command: CacheCommand,
}

#[derive(Subcommand, Debug)]
enum CacheCommand {
    /// One line per cached training: fingerprint, epochs done, size in bytes, last used (UTC),
    /// and the experiment and training that made it. Folders set aside as damaged end in
    /// `.damaged`.
    List {
        /// The model cache.
        #[arg(long, default_value = "results/.cache")]
        cache: PathBuf,
    },
    /// Removes the checkpoint folders that meet every condition given (at least one), and
    /// refuses, removing nothing, in a folder that is not a model cache or when a running
    /// process uses a folder it would remove.
    Clean {
        /// The model cache.
        #[arg(long, default_value = "results/.cache")]
        cache: PathBuf,
        /// Experiment files: remove what the newest run of each did not use (damaged
        /// checkpoints set aside included). Their runs are looked for under --out.
        #[arg(long, num_args = 1.., value_name = "FILES")]
        unused_by: Vec<PathBuf>,
        /// Where the runs of the --unused-by experiments are.
        #[arg(long, default_value = "results")]
        out: PathBuf,
        /// Remove only folders last used (trained or read back) more than DAYS days ago.
        #[arg(long, value_name = "DAYS")]
        older_than: Option<f64>,
        /// List what would be removed; remove nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

pub fn run(args: &CacheArgs) -> crate::error::Result<()> {
    match &args.command {
        CacheCommand::List { cache } => {
            let entries = runtime::list_cache(cache)?;
            print_table(&entries);
            let damaged = entries.iter().filter(|e| e.set_aside()).count();
            let set_aside = match damaged {
                0 => String::new(),
                n => format!(" and {n} damaged checkpoint(s) set aside"),
            };
            println!(
                "{} training(s){set_aside}, {} bytes in {}",
                entries.len() - damaged,
                total_bytes(&entries),
                cache.display()
            );
        }
        CacheCommand::Clean {
            cache,
            unused_by,
            out,
            older_than,
            dry_run,
        } => {
            let clean = Clean {
                unused_by: (!unused_by.is_empty())
                    .then(|| used_by(unused_by, out))
                    .transpose()?,
                last_used_before: older_than.map(days_ago).transpose()?,
                dry_run: *dry_run,
            };
            let removed = runtime::clean_cache(cache, &clean)?;
            print_table(&removed);
            println!(
                "{} {} folder(s), {} bytes, from {}",
                if *dry_run { "would remove" } else { "removed" },
                removed.len(),
                total_bytes(&removed),
                cache.display()
            );
        }
    }
    Ok(())
}

/// The fingerprints the newest runs of the experiment `files` used.
fn used_by(files: &[PathBuf], out: &std::path::Path) -> crate::error::Result<BTreeSet<String>> {
    let mut used = BTreeSet::new();
    for file in files {
        let config = ExperimentConfig::load(file, &Overrides::default())?;
        let keys = runtime::used_by_latest_run(out, &config.experiment.name)
            .map_err(|e| CliError::at(format_args!("--unused-by {}", file.display()), e))?;
        used.extend(keys);
    }
    Ok(used)
}

/// The Unix time `days` days ago.
fn days_ago(days: f64) -> crate::error::Result<u64> {
    if !(days.is_finite() && days >= 0.0) {
        return Err(format!("--older-than {days}: expected a number of days, 0 or more").into());
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| CliError::at("system clock is before 1970", e))?;
    Ok(now.as_secs().saturating_sub((days * 86_400.0) as u64))
}

fn print_table(entries: &[CacheEntry]) {
    let width = (entries.iter().map(|e| e.name.len()))
        .max()
        .unwrap_or(0)
        .max("fingerprint".len());
    println!(
        "{:<width$}  {:>6}  {:>12}  {:<15}  made by (experiment: training)",
        "fingerprint", "epochs", "bytes", "last used (UTC)"
    );
    for e in entries {
        let epochs = e.epochs_done.map_or("-".into(), |n| n.to_string());
        let modified = e.modified.map_or("-".into(), timestamp);
        let made_by = (e.made_by.as_ref())
            .map_or("-".into(), |m| format!("{}: {}", m.experiment, m.training));
        println!(
            "{:<width$}  {epochs:>6}  {:>12}  {modified:<15}  {made_by}",
            e.name, e.bytes
        );
    }
}

fn total_bytes(entries: &[CacheEntry]) -> u64 {
    entries.iter().map(|e| e.bytes).sum()
}
