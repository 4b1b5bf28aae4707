//! A run as it is stored and read back, and everything drawn from it without training anything:
//!
//! - [`Summary`] (`summary.json`) and [`RunCurves`] (`curves.json`): the run's numbers, the
//!   output contract other tools read, with the run's [`Provenance`];
//! - [`compare()`]: every method against a reference, paired by seed, with its verdict at the
//!   metric's equivalence margin (raw and Holm-adjusted), every one exploratory;
//! - [`retained()`]: the share of the reference's gain over the baseline each method keeps, with
//!   Fieller's interval; [`decide_claims`]: an experiment's declared [`Claim`]s, each by its own
//!   test, Holm over them alone; [`conclude`] fills both into a [`Summary`];
//! - [`render()`]: `report.md`, `report.html` and the figures; [`render_terminal`] the compact
//!   table;
//! - [`write_run`]: a run directory, every file written atomically; [`redraw`] and
//!   [`join_runs`] read run directories back (`uqformer report`, `uqformer compare`).
//!
//! The report computes nothing: every number it shows is in the summary or the curves.

mod claims;
pub mod compare;
pub mod curves;
mod decision;
mod entry;
mod error;
mod join;
mod legacy;
pub mod outputs;
pub mod provenance;
mod render;
mod retained;
mod roles;
mod store;
mod stored;
pub mod summary;

pub use claims::{Claim, ClaimResult, ClaimVerdict, conclude, decide_claims};
pub use compare::{DEFAULT_MARGINS, compare};
pub use curves::{CURVES_FILE, RunCurves};
pub use entry::{Identity, Measured};
pub use error::{ReportError, Result};
pub use join::{Joined, join_runs, redraw};
pub use outputs::{Extra, MethodOutputs};
pub use provenance::Provenance;
pub use render::{FigureFile, Rendered, render, render_html, render_markdown, render_terminal};
pub use retained::{RetainedShare, retained};
pub use roles::{DEFAULT_BASELINE, DEFAULT_REFERENCE};
pub use store::{JOINED, timestamp, write_joined, write_run};
pub use summary::{
    Comparison, Cost, Decision, DiversityMetrics, Family, GroupMetrics, IdMetrics, MethodResult,
    OodMetrics, ShiftMetrics, Summary, TrainCost, Variant,
};
