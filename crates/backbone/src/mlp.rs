use burn::config::Config;
use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::tensor::activation::sigmoid;
use burn::tensor::{Device, Tensor};
use kernels::{gelu, linear, mlp};
use serde::{Deserialize, Serialize};

use crate::error::{BackboneError, positive};

/// The MLP's activation, spelled as `transformers`' `hidden_act` (`"gelu"`, `"quick_gelu"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Activation {
    /// Exact (erf) GELU, as in BERT and ViT; the kernels' fused MLP serves it.
    #[default]
    Gelu,
    /// CLIP's `x·σ(1.702·x)`, on plain tensor ops.
    QuickGelu,
}

impl Activation {
    /// The activation on `z`, elementwise.
    pub fn apply<const D: usize>(self, z: Tensor<D>) -> Tensor<D> {
        match self {
            Self::Gelu => gelu(z),
            Self::QuickGelu => z.clone() * sigmoid(z.mul_scalar(1.702)),
        }
    }
}

/// Configuration of [`Mlp`].
#[derive(Config, Debug)]
pub struct MlpConfig {
    /// Model width D.
    pub d_model: usize,
    /// Hidden width F.
    pub d_hidden: usize,
    /// The activation (exact GELU unless said).
    #[config(default = "Activation::Gelu")]
    pub activation: Activation,
}

/// The transformer MLP `fc2(act(fc1(x)))`, with exact (erf) GELU as in BERT and ViT or CLIP's
/// quick-GELU ([`Activation`]).
#[derive(Module, Debug)]
pub struct Mlp {
    /// D -> F (Hugging Face: `intermediate.dense`).
    pub fc1: Linear,
    /// F -> D (Hugging Face: `output.dense`).
    pub fc2: Linear,
    /// The activation: a constant of the architecture, not a parameter (not in records).
    #[module(skip)]
    pub activation: Activation,
}

impl MlpConfig {
    /// Builds the module, or says which field is invalid.
    pub fn init(&self, device: &Device) -> Result<Mlp, BackboneError> {
        positive("MlpConfig.d_model", self.d_model)?;
        positive("MlpConfig.d_hidden", self.d_hidden)?;
        Ok(Mlp {
            fc1: LinearConfig::new(self.d_model, self.d_hidden).init(device),
            fc2: LinearConfig::new(self.d_hidden, self.d_model).init(device),
            activation: self.activation,
        })
    }
}

impl Mlp {
    /// `[.., D] -> [.., D]`. With `act_gate` `[1]` = b the activation is
    /// `b·act(z) + (1-b)·z`: b = 1 is the activation, b = 0 the identity.
    pub fn forward<const D: usize>(&self, x: Tensor<D>, act_gate: Option<Tensor<1>>) -> Tensor<D> {
        self.forward_gated(x, act_gate, None)
    }

    /// [`Mlp::forward`] with hidden-neuron gates `[F]` multiplying the activations (0 = neuron
    /// pruned) as well.
    pub fn forward_gated<const D: usize>(
        &self,
        x: Tensor<D>,
        act_gate: Option<Tensor<1>>,
        neurons: Option<Tensor<1>>,
    ) -> Tensor<D> {
        if act_gate.is_none() && neurons.is_none() && self.activation == Activation::Gelu {
            return mlp(&self.fc1, &self.fc2, x);
        }
        let z = linear(&self.fc1, x);
        let a = match act_gate {
            // z + b·(act(z) - z): one multiply by the gate instead of two.
            Some(b) => z.clone() + (self.activation.apply(z.clone()) - z) * b.unsqueeze::<D>(),
            None => self.activation.apply(z),
        };
        let a = match neurons {
            Some(g) => a * g.unsqueeze::<D>(),
            None => a,
        };
        linear(&self.fc2, a)
    }
}
