//! Estimates for `uqformer plan --device NAME`: each planned job and each method's evaluation
//! in FLOPs, peak memory and time on a named device, counted from the architecture and the
//! data's sizes, nothing run.
//!
//! - FLOPs: the backbone crate's count (2 FLOPs a multiply-accumulate, matmuls only), for what
//!   each method really runs ([`crate::Method::work`]); a training step is 3 forwards.
//! - Memory: f32 weights, gradients and AdamW's two moments of what trains, and one batch of
//!   activations ([`crate::workload::ModelShape::train_activation_bytes`]); evaluation holds the weights and one
//!   batch through one block at a time.
//! - Time: FLOPs over the device's datasheet peak times an assumed utilisation
//!   ([`DeviceSpec`]). Estimates, not measurements.

mod devices;
mod jobs;

pub use devices::{DEVICES, DeviceSpec, Precision};
pub use jobs::{Cost, Estimate, EvalEstimate, JobEstimate, estimate};
