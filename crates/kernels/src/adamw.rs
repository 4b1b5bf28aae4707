//! The scalars of one AdamW step, shared by its kernel, its ops and the optimiser.

/// The scalars of one AdamW step, in f32 as Burn's AdamW applies them: `correction_i` is
/// `1 - β_i^t` at step t, `keep` is `1 - lr·weight_decay`.
#[derive(Clone, Copy, Debug)]
pub struct AdamWStep {
    /// The first moment's decay β₁.
    pub beta_1: f32,
    /// The second moment's decay β₂.
    pub beta_2: f32,
    /// Added to `√v̂`.
    pub epsilon: f32,
    /// `1 - β₁^t`.
    pub correction_1: f32,
    /// `1 - β₂^t`.
    pub correction_2: f32,
    /// `1 - lr·weight_decay`: the decoupled weight decay.
    pub keep: f32,
    /// The learning rate.
    pub lr: f32,
}
