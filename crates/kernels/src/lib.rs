//! Exact (erf) GELU and dropout masks with vectorised, multi-threaded kernels on the flex
//! backend; matrix products that add their bias as they are written and use every thread from
//! a smaller size than flex does (`matmul.rs`); attention for evaluation that reads the
//! heads where the projections left them (`attention.rs`); and, for training, Linears,
//! products, softmax and LayerNorm with backward passes of their own and a fused AdamW step.
//!
//! Why: burn-flex 0.22 evaluates GELU and its gradient one element at a time through libm's
//! scalar `erff` (about 13 ns an element here), and draws dropout masks one element at a time
//! from a ChaCha generator behind a lock (about 14 ns an element). On the quick-start ViT both
//! cost more than the matmuls of a forward pass (docs/performance.md). Under autodiff, Burn's
//! backward passes run flex's product, which zeroes and copies every output buffer, and step
//! back through softmax and LayerNorm op by op; its AdamW is fifteen passes per parameter.
//! Burn's backend extensions let this crate give flex its own kernels ([`cpu`], [`rows`],
//! [`matmul`], [`attention`], in [`flex`]), with their backward passes under autodiff
//! ([`autodiff`]), while every other backend keeps Burn's own ops ([`ops`]), so code stays
//! device-independent.
//!
//! The entry points ([`gelu`], [`linear`], [`matmul_add`], [`mlp`], [`attention`],
//! [`layer_norm`], [`softmax_last`], [`adamw_step`], [`dropout_mask`]) take and give Burn
//! tensors on any device; `backbone`'s modules and `train`'s optimiser call them. Kept apart
//! from `backbone` because they use nothing of it: a change to a kernel rebuilds this crate
//! and those above it, and the modules read without 2,000 lines of SIMD beside them.

mod adamw;
mod attention;
mod autodiff;
mod cpu;
mod entry;
mod extension;
mod flex;
mod matmul;
mod mlp;
mod ops;
mod rows;

#[cfg(test)]
mod gelu_dropout_tests;
#[cfg(test)]
mod testing;

pub use adamw::AdamWStep;
pub use entry::{
    adamw_step, attention, dropout_mask, gelu, layer_norm, linear, matmul, matmul_add, mlp,
    softmax_last,
};
pub use extension::KernelBackend;
