//! MIMO (Havasi et al., 2021) on the Vision Transformer: M images enter one network stacked
//! along channels and M predictions leave it, one block of C logits per member.

use backbone::{BackboneError, Gates, Input, Mode, ViTConfig, VisionTransformer, positive};
use burn::module::Module;
use burn::tensor::{Device, Distribution, Int, Tensor};
use seam::{MemberOutputs, Trainable};
use serde::{Deserialize, Serialize};

use crate::draw;

/// MIMO's own settings; the base network is the `ViTConfig` given to [`init`](Self::init).
/// Read from a table, `members` is required and unknown keys are errors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MimoConfig {
    /// Members M (input slots and output heads; 3 by default).
    pub members: usize,
    /// Input repetition ρ: the fraction of each training batch shown to every member at the
    /// same position (the same image in all slots), as in the reference implementation; the
    /// rest is shuffled independently per member.
    #[serde(default)]
    pub input_repetition: f64,
}

impl Default for MimoConfig {
    fn default() -> Self {
        Self {
            members: 3,
            input_repetition: 0.0,
        }
    }
}

impl MimoConfig {
    /// The one network: the base ViT with M·C input channels and M·classes outputs.
    pub fn network(&self, vit: &ViTConfig) -> ViTConfig {
        vit.clone()
            .with_channels(self.members * vit.channels)
            .with_num_classes(self.members * vit.num_classes)
    }

    /// Seeds the device RNG with `seed` and draws the network's weights from it (in field
    /// order), or says which field is invalid.
    pub fn init(&self, vit: &ViTConfig, seed: u64, device: &Device) -> Result<Mimo, BackboneError> {
        positive("MimoConfig.members", self.members)?;
        if !(0.0..=1.0).contains(&self.input_repetition) {
            return Err(BackboneError::invalid(
                "MimoConfig.input_repetition",
                self.input_repetition,
                "a probability in [0, 1]",
            ));
        }
        let network = self.network(vit);
        device.seed(seed);
        Ok(Mimo {
            model: draw::now(network.init(device)?),
            members: self.members,
            input_repetition: self.input_repetition,
            flops: network.flops_per_sample(),
        })
    }
}

/// The MIMO network. Member m reads channels `m·C..(m+1)·C` of the input and writes logits
/// `m·K..(m+1)·K` of the output.
#[derive(Module, Debug)]
pub struct Mimo {
    pub model: VisionTransformer,
    pub members: usize,
    pub input_repetition: f64,
    flops: u64,
}

impl Mimo {
    /// Test-time member logits `[M, B, K]`: the same image in every slot.
    pub fn forward(&self, images: Tensor<4>, mode: Mode) -> Tensor<3> {
        self.logits(images.repeat_dim(1, self.members), mode)
    }

    /// Test-time member logits `[M, B, K]` and features `[M, B, D]`: the members read one
    /// shared class token, so each member's feature is that one.
    pub fn outputs(&self, images: Tensor<4>, mode: Mode) -> MemberOutputs {
        let stacked = images.repeat_dim(1, self.members);
        let features = self.model.features(stacked, &Gates::none(), mode);
        let logits = self.member_major(kernels::linear(&self.model.head, features.clone()));
        let [batch, width] = features.dims();
        let features = features.unsqueeze_dim::<3>(0);
        MemberOutputs {
            logits,
            features: features.expand([self.members, batch, width]),
        }
    }

    /// Training order for a batch of `batch` images: row m of the `[M, B]` result lists the
    /// images member m sees, slot by slot. Drawn from the device RNG (seed it to reproduce).
    pub fn permutations(&self, batch: usize, device: &Device) -> Tensor<2, Int> {
        let m = self.members;
        let shared = (self.input_repetition * batch as f64).round() as usize;
        let own = batch - shared;
        let uniform = Distribution::Uniform(0.0, 1.0);
        let order = Tensor::<1>::random([batch], uniform, device).argsort(0);
        if own == 0 {
            return order.unsqueeze::<2>().expand([m, batch]);
        }
        // Each member reshuffles the first `own` images of the common order; the last `shared`
        // stay where they are, so those slots hold the same image for every member.
        let reshuffle = Tensor::<2>::random([m, own], uniform, device).argsort(1);
        let head = order
            .clone()
            .narrow(0, 0, own)
            .select(0, reshuffle.reshape([m * own]))
            .reshape([m, own]);
        if shared == 0 {
            return head;
        }
        let tail = order
            .narrow(0, own, shared)
            .unsqueeze::<2>()
            .expand([m, shared]);
        Tensor::cat(vec![head, tail], 1)
    }

    /// Member logits `[M, B, K]` in batch order when member m sees the batch in the order
    /// `permutations[m]` (`[M, B]`, each row a permutation of `0..B`): member m's prediction
    /// for image i is the one made in the slot where it saw image i.
    pub fn forward_permuted(
        &self,
        images: Tensor<4>,
        permutations: Tensor<2, Int>,
        mode: Mode,
    ) -> Tensor<3> {
        let [batch, c, h, w] = images.dims();
        let m = self.members;
        let stacked = images
            .select(0, permutations.clone().reshape([m * batch]))
            .reshape([m, batch, c, h, w])
            .swap_dims(0, 1)
            .reshape([batch, m * c, h, w]);
        let logits = self.logits(stacked, mode); // [M, B, K], slot order
        let classes = logits.dims()[2];
        // Member m saw image i in slot inverse[m][i].
        let inverse = permutations
            .argsort(1)
            .unsqueeze_dim::<3>(2)
            .repeat_dim(2, classes);
        logits.gather(1, inverse)
    }

    /// Logits of stacked inputs `[B, M·C, H, W]` -> `[M, B, K]`.
    fn logits(&self, stacked: Tensor<4>, mode: Mode) -> Tensor<3> {
        self.member_major(self.model.forward(stacked, &Gates::none(), mode))
    }

    /// The network's `[B, M·K]` output as member logits `[M, B, K]`.
    fn member_major(&self, out: Tensor<2>) -> Tensor<3> {
        let [batch, width] = out.dims();
        out.reshape([batch, self.members, width / self.members])
            .swap_dims(0, 1)
    }
}

image_ensemble!(Mimo, |m| m.members);

impl Trainable for Mimo {
    /// Each member sees the batch in its own random order (from the device RNG, which `fit`
    /// seeds every epoch); logits come back in batch order so the batch labels apply.
    fn train_logits(&self, input: Input) -> Tensor<3> {
        let images = input.images();
        let permutations = self.permutations(images.dims()[0], &images.device());
        self.forward_permuted(images, permutations, Mode::Stochastic)
    }

    /// The test-time forward (the same image in every slot): no permutation is drawn.
    fn eval_logits(&self, input: Input) -> Tensor<3> {
        self.forward(input.images(), Mode::Deterministic)
    }
}
