//! A run as it is stored and read back, and everything drawn from it without training anything:
//!
//! - [`Summary`] (`summary.json`) and [`RunCurves`] (`curves.json`): the run's numbers, the
//!   output contract other tools read, with the run's [`Provenance`];
//! - [`compare()`]: every method against a reference, paired by seed, with its verdict at the
//!   metric's equivalence margin (raw and Holm-adjusted);
//! - [`render()`]: `report.md`, `report.html` and the figures; [`render_terminal`] the compact
//!   table;
//! - [`write_run`]: a run directory, every file written atomically; [`redraw`] and
//!   [`join_runs`] read run directories back (`uqformer report`, `uqformer compare`).
//!
//! The report computes nothing: every number it shows is in the summary or the curves.

pub mod compare;
pub mod curves;
mod entry;
mod error;
mod join;
mod legacy;
pub mod outputs;
pub mod provenance;
mod render;
mod roles;
mod store;
pub mod summary;

pub use compare::{DEFAULT_MARGINS, compare};
pub use curves::{CURVES_FILE, RunCurves};
pub use entry::{Identity, Measured};
pub use error::{ReportError, Result};
pub use join::{Joined, join_runs, redraw};
pub use outputs::{Extra, MethodOutputs};
pub use provenance::Provenance;
pub use render::{FigureFile, Rendered, render, render_html, render_markdown, render_terminal};
pub use roles::{DEFAULT_BASELINE, DEFAULT_REFERENCE};
pub use store::{JOINED, timestamp, write_joined, write_run};
pub use summary::{
    Comparison, Cost, Decision, DiversityMetrics, GroupMetrics, IdMetrics, MethodResult,
    OodMetrics, ShiftMetrics, Summary, TrainCost, Variant,
};
