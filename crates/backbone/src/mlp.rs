use burn::config::Config;
use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::tensor::{Device, Tensor};
use kernels::{gelu, linear, mlp};

use crate::error::{BackboneError, positive};

/// Configuration of [`Mlp`].
#[derive(Config, Debug)]
pub struct MlpConfig {
    /// Model width D.
    pub d_model: usize,
    /// Hidden width F.
    pub d_hidden: usize,
}

/// The transformer MLP `fc2(act(fc1(x)))`, with exact (erf) GELU as in BERT and ViT.
#[derive(Module, Debug)]
pub struct Mlp {
    /// D -> F (Hugging Face: `intermediate.dense`).
    pub fc1: Linear,
    /// F -> D (Hugging Face: `output.dense`).
    pub fc2: Linear,
}

impl MlpConfig {
    /// Builds the module, or says which field is invalid.
    pub fn init(&self, device: &Device) -> Result<Mlp, BackboneError> {
        positive("MlpConfig.d_model", self.d_model)?;
        positive("MlpConfig.d_hidden", self.d_hidden)?;
        Ok(Mlp {
            fc1: LinearConfig::new(self.d_model, self.d_hidden).init(device),
            fc2: LinearConfig::new(self.d_hidden, self.d_model).init(device),
        })
    }
}

impl Mlp {
    /// `[.., D] -> [.., D]`. With `act_gate` `[1]` = b the activation is
    /// `b·GELU(z) + (1-b)·z`: b = 1 is GELU, b = 0 the identity.
    pub fn forward<const D: usize>(&self, x: Tensor<D>, act_gate: Option<Tensor<1>>) -> Tensor<D> {
        let Some(b) = act_gate else {
            return mlp(&self.fc1, &self.fc2, x);
        };
        let z = linear(&self.fc1, x);
        // z + b·(GELU(z) - z): one multiply by the gate instead of two.
        let a = z.clone() + (gelu(z.clone()) - z) * b.unsqueeze::<D>();
        linear(&self.fc2, a)
    }
}
