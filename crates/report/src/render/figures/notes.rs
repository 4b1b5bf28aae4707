//! The notes captions and empty panels share.

use super::series::MAX_BANDS;
use crate::summary::Summary;

/// The note of a panel whose entry has no curves.
pub(super) const NO_CURVES: &str = "no curves stored for it (its run predates curves.json)";

/// "mean ± std over N seeds" or "seed S" for captions.
pub(super) fn seeds_note(summary: &Summary) -> String {
    match summary.seeds.as_slice() {
        [one] => format!("seed {one}"),
        many => format!("mean ± std over {} seeds", many.len()),
    }
}

/// [`seeds_note`] for a chart of many lines, whose bands
/// [`bands_if_few`](super::series::bands_if_few) may drop.
pub(super) fn lines_note(summary: &Summary) -> String {
    match summary.seeds.len() {
        1 => seeds_note(summary),
        n => format!(
            "mean over {n} seeds, with ± std bands when {MAX_BANDS} methods or fewer are drawn"
        ),
    }
}
