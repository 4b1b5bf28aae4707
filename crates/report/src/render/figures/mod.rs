//! The run's figures, as SVG, drawn from `summary.json` and `curves.json` alone (so that
//! `uqformer compare` can redraw them for runs made at different times):
//! reliability diagrams, risk-coverage curves, OOD score histograms and ROC curves, AUROC by OOD
//! score, the cost-UQ
//! Pareto plot, the sweeps (Hydra's pruning analysis), HetDPT's accuracy predictor and the
//! training curves. With several seeds a curve is the mean over seeds on a common grid with a
//! ± one standard deviation band.

mod all;
mod calibration;
mod cost;
mod file;
mod inputs;
mod notes;
mod ood;
mod predictor;
mod scores;
mod series;
mod sweep;
mod training;

pub use all::figures;
pub use file::{FigureFile, PARETO};
pub use inputs::Inputs;
