//! `uqformer report`: a run's report, figures and page drawn again from its stored numbers.

use std::path::PathBuf;

use crate::error::CliError;
use clap::Args;
use report::redraw;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A run directory (results/<experiment>/<run-id>).
    run: PathBuf,
}

/// Rewrites `report.md`, `report.html` and the figures in place (each atomically); nothing
/// measured changes.
pub fn run(args: &ReportArgs) -> crate::error::Result<()> {
    let rendered = redraw(&args.run)?;
    let write = |name: &str, bytes: &[u8]| {
        // atomic_write's error names the file.
        experiment::atomic_write(&args.run.join(name), bytes)
            .map_err(|e| CliError::at("redrawing", e))
    };
    write("report.md", rendered.markdown.as_bytes())?;
    write("report.html", rendered.html.as_bytes())?;
    for f in &rendered.figures {
        write(&f.file, f.svg.as_bytes())?;
    }
    println!(
        "redrew {} figure(s) and the report in {}",
        rendered.figures.len(),
        args.run.display()
    );
    Ok(())
}
