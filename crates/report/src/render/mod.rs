//! Human-readable views of a [`Summary`]: the run's `report.md`, its figures (SVG, from the
//! summary and the run's [`RunCurves`]), `report.html` (the report with the figures inline) and
//! a compact terminal table.
//!
//! Runs are grouped by method name, methods in the order of the first seed. A cell is the mean ±
//! sample standard deviation (n − 1) over seeds, the mean alone with one seed, and "n/a" when some
//! seed lacks the value or it is not finite (a mean over the remaining seeds would mislead).
//! Ratios ("×single", named for the baseline) divide a method's mean by the mean of the run's
//! baseline method ([`crate::Summary::baseline`]).

mod cells;
mod claims;
mod evidence;
mod figures;
mod groups;
mod headline;
mod html;
mod markdown;
mod rendered;
mod table;
mod terminal;
mod verdicts;

pub use figures::FigureFile;
pub use html::render_html;
pub use markdown::render_markdown;
pub(crate) use rendered::render_with;
pub use rendered::{Rendered, render};
pub use terminal::render_terminal;
