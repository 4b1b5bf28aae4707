//! `uqformer compare`: runs made at different times in one report.

use std::path::PathBuf;

use crate::error::CliError;
use clap::Args;
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
}

pub fn run(args: &CompareArgs) -> crate::error::Result<()> {
    let joined = join_runs(&args.runs, args.reference.as_deref())?;
    for warning in &joined.warnings {
        eprintln!("warning: provenance differs, {warning}");
    }
    let rendered = joined.render()?;
    let listed: Vec<String> = args
        .runs
        .iter()
        .map(|r| format!("{:?}", r.display().to_string()))
        .collect();
    let record = format!("# uqformer compare\nruns = [{}]\n", listed.join(", "));
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
