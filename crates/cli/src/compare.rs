//! `uqformer compare`: runs made at different times in one report.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::error::CliError;
use clap::Args;
use experiment::{ExperimentConfig, Overrides};
use report::{CURVES_FILE, join_runs, render_terminal};

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Run directories (results/<experiment>/<run-id>), two or more, with the same data.
    #[arg(required = true, num_args = 2..)]
    runs: Vec<PathBuf>,
    /// Results folder; the joined report goes to <OUT>/compare/<run-id>/.
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// The method the paired comparisons are against [default: the first run's
    /// `[eval] reference`].
    #[arg(long)]
    reference: Option<String>,
    /// Decide the `[[claim]]` tables of this experiment file rather than the first run's (runs
    /// made before claims existed record none).
    #[arg(long, value_name = "FILE")]
    claims: Option<PathBuf>,
}

pub fn run(args: &CompareArgs) -> crate::error::Result<()> {
    let mut joined = join_runs(&args.runs, args.reference.as_deref())?;
    if let Some(file) = &args.claims {
        let config = ExperimentConfig::load(file, &Overrides::default())?;
        report::conclude(&mut joined.summary, &config.claims);
        let _ = writeln!(
            joined.preface,
            "Declared claims from `{}`, not from the runs.\n",
            file.display()
        );
    }
    for warning in &joined.warnings {
        eprintln!("warning: provenance differs, {warning}");
    }
    let rendered = joined.render()?;
    let listed: Vec<String> = args
        .runs
        .iter()
        .map(|r| format!("{:?}", r.display().to_string()))
        .collect();
    let mut record = format!("# uqformer compare\nruns = [{}]\n", listed.join(", "));
    if let Some(file) = &args.claims {
        let _ = writeln!(record, "claims = {:?}", file.display().to_string());
    }
    let mut files = vec![
        (CURVES_FILE.to_string(), joined.curves.to_json()?),
        ("report.html".to_string(), rendered.html.into_bytes()),
    ];
    files.extend((rendered.figures.into_iter()).map(|f| (f.file, f.svg.into_bytes())));
    let dir = report::write_joined(
        &args.out,
        &record,
        &joined.summary,
        &rendered.markdown,
        &files,
    )
    .map_err(|e| CliError::at("writing the comparison", e))?;
    print!("{}", render_terminal(&joined.summary));
    println!("report: {}", dir.join("report.md").display());
    Ok(())
}
