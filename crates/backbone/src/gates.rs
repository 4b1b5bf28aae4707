use burn::tensor::{Device, Tensor};

use crate::error::BackboneError;

/// Per-forward gates on the encoder's heads and layers; inputs of the forward pass, not module
/// state, so callers can learn them (HetDPT) or differentiate with respect to them (Taylor head
/// importance). `None` leaves that kind of gate out (no extra cost).
///
/// - `heads` `[L, H]`: multiplies each head's context vector before the output projection
///   (0 = head pruned).
/// - `attn` `[L]`: scales the attention branch, `x + g·Attn(..)` (0 = branch removed).
/// - `act` `[L]`: the MLP activation becomes `g·GELU(z) + (1-g)·z` (0 = identity, so the MLP is
///   linear and fc2∘fc1 can be merged).
/// - `mlp` `[L]`: scales the MLP branch as `attn` scales the attention branch.
/// - `neurons` `[L, F]`: multiplies each hidden neuron of the MLP after its activation
///   (0 = neuron pruned).
#[derive(Debug, Clone, Default)]
pub struct Gates {
    /// Head gates `[L, H]`.
    pub heads: Option<Tensor<2>>,
    /// Attention-branch gates `[L]`.
    pub attn: Option<Tensor<1>>,
    /// GELU gates `[L]`.
    pub act: Option<Tensor<1>>,
    /// MLP-branch gates `[L]`.
    pub mlp: Option<Tensor<1>>,
    /// MLP hidden-neuron gates `[L, F]`.
    pub neurons: Option<Tensor<2>>,
}

/// The gates of one block: head gates `[H]`, attention, activation and MLP gates `[1]`,
/// neuron gates `[F]`.
#[derive(Debug, Clone, Default)]
pub struct BlockGates {
    /// Head gates `[H]`.
    pub heads: Option<Tensor<1>>,
    /// Attention-branch gate `[1]`.
    pub attn: Option<Tensor<1>>,
    /// GELU gate `[1]`.
    pub act: Option<Tensor<1>>,
    /// MLP-branch gate `[1]`.
    pub mlp: Option<Tensor<1>>,
    /// Hidden-neuron gates `[F]`.
    pub neurons: Option<Tensor<1>>,
}

impl Gates {
    /// No gates: the plain transformer.
    pub fn none() -> Self {
        Self::default()
    }

    /// The head, attention and activation gates present and equal to 1 (same output as
    /// [`Gates::none`]), for `layers` blocks of `heads` heads each.
    pub fn ones(layers: usize, heads: usize, device: &Device) -> Self {
        Self {
            heads: Some(Tensor::ones([layers, heads], device)),
            attn: Some(Tensor::ones([layers], device)),
            act: Some(Tensor::ones([layers], device)),
            mlp: None,
            neurons: None,
        }
    }

    /// Checks the gate shapes against an encoder of `layers` blocks with `heads` heads.
    pub fn check(&self, layers: usize, heads: usize) -> Result<(), BackboneError> {
        if let Some(g) = &self.heads
            && g.dims() != [layers, heads]
        {
            return Err(BackboneError::invalid(
                "Gates.heads",
                format!("shape {:?}", g.dims()),
                format!("shape [{layers}, {heads}]"),
            ));
        }
        let per_block = [
            ("Gates.attn", &self.attn),
            ("Gates.act", &self.act),
            ("Gates.mlp", &self.mlp),
        ];
        for (field, gate) in per_block {
            if let Some(g) = gate
                && g.dims() != [layers]
            {
                return Err(BackboneError::invalid(
                    field,
                    format!("shape {:?}", g.dims()),
                    format!("shape [{layers}]"),
                ));
            }
        }
        if let Some(g) = &self.neurons
            && g.dims()[0] != layers
        {
            return Err(BackboneError::invalid(
                "Gates.neurons",
                format!("shape {:?}", g.dims()),
                format!("shape [{layers}, the MLP's hidden width]"),
            ));
        }
        Ok(())
    }

    /// The gates of block `layer` (slices keep the autodiff graph, so gradients reach `self`).
    pub fn block(&self, layer: usize) -> BlockGates {
        BlockGates {
            heads: self
                .heads
                .as_ref()
                .map(|g| g.clone().narrow(0, layer, 1).squeeze_dim(0)),
            attn: self.attn.as_ref().map(|g| g.clone().narrow(0, layer, 1)),
            act: self.act.as_ref().map(|g| g.clone().narrow(0, layer, 1)),
            mlp: self.mlp.as_ref().map(|g| g.clone().narrow(0, layer, 1)),
            neurons: (self.neurons.as_ref()).map(|g| g.clone().narrow(0, layer, 1).squeeze_dim(0)),
        }
    }
}
