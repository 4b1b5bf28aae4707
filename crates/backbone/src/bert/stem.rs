//! Fused BERT members' input end: the embedding tables read by one gather, and each member's
//! pooling (masked mean, or the first token through its own pooler and tanh).

use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::tensor::{Int, Tensor};

use super::embeddings::BertEmbeddings;
use super::pooling::mean_pool;
use crate::error::BackboneError;
use crate::grouped::{GroupedLayerNorm, GroupedLinear, all_equal};
use crate::input::Input;
use crate::traits::GroupedStem;

/// BERT members: the embedding tables and LayerNorm stored once (G = 1) when every member has
/// the same ones (members whose embeddings stayed frozen), else each member's own (G = M;
/// members fine-tuned apart differ there), stacked and read by one gather; readout = masked
/// mean pooling, or with BERT's pooler each member's pooler over its first token.
#[derive(Module, Debug)]
pub struct TokenStem {
    /// Token tables `[G, V, D]`.
    pub word: Param<Tensor<3>>,
    /// Position tables `[G, P, D]`.
    pub position: Param<Tensor<3>>,
    /// Segment tables `[G, S, D]`; every token is segment 0, as in `Classifier::embed`.
    pub token_type: Param<Tensor<3>>,
    /// The embedding LayerNorms (G groups).
    pub norm: GroupedLayerNorm,
    /// The members' poolers `[M, D, D]` ([`crate::Pooling::Cls`]), or `None` for mean pooling.
    pub pooler: Option<GroupedLinear>,
}

impl TokenStem {
    /// The members' embedding tables and LayerNorms, and their poolers (all members have one,
    /// or none has).
    pub(crate) fn of(
        members: &[&BertEmbeddings],
        poolers: &[Option<&Linear>],
    ) -> Result<Self, BackboneError> {
        let pooler = match poolers.iter().copied().collect::<Option<Vec<_>>>() {
            Some(poolers) => Some(GroupedLinear::of(&poolers)),
            None if poolers.iter().all(Option::is_none) => None,
            None => {
                return Err(BackboneError::invalid(
                    "members' pooling",
                    "some with a pooler and some without",
                    "members of one pooling (all mean, or all the [CLS] pooler)",
                ));
            }
        };
        let shared = all_equal(members, |e| {
            let norm = &e.layer_norm;
            let tables = [
                &e.word_embeddings,
                &e.position_embeddings,
                &e.token_type_embeddings,
            ]
            .map(|t| t.weight.val().into_data());
            let beta = norm.beta.as_ref().map(|b| b.val().into_data());
            // The Display shows the epsilon, which Burn keeps private.
            (tables, norm.gamma.val().into_data(), beta, norm.to_string())
        });
        let members = if shared { &members[..1] } else { members };
        let stack = |f: fn(&BertEmbeddings) -> Tensor<2>| {
            Param::from_tensor(Tensor::stack(members.iter().map(|e| f(e)).collect(), 0))
        };
        let norms: Vec<_> = members.iter().map(|e| &e.layer_norm).collect();
        Ok(Self {
            word: stack(|e| e.word_embeddings.weight.val()),
            position: stack(|e| e.position_embeddings.weight.val()),
            token_type: stack(|e| e.token_type_embeddings.weight.val()),
            norm: GroupedLayerNorm::of(&norms, "embeddings layer_norm")?,
            pooler,
        })
    }
}

impl GroupedStem for TokenStem {
    /// Ids `[B, T]` -> `[G, B·T, D]`: word + position + segment-0 embedding, then LayerNorm.
    fn embed(&self, input: &Input) -> Tensor<3> {
        let Input::Tokens { ids, .. } = input else {
            panic!("fused BERT classifiers take token sequences, not images")
        };
        let [groups, vocab, d] = self.word.dims();
        let [batch, tokens] = ids.dims();
        let rows = batch * tokens;
        // Group g's token i is row g·V + i of the tables flattened to [G·V, D].
        let offsets = Tensor::<1, Int>::arange(0..groups as i64, &ids.device())
            .mul_scalar(vocab as i64)
            .reshape([groups, 1])
            .expand([groups, rows]);
        let index = ids.clone().reshape([1, rows]).expand([groups, rows]) + offsets;
        let words = (self.word.val().reshape([groups * vocab, d]))
            .select(0, index.reshape([groups * rows]))
            .reshape([groups, batch, tokens, d]);
        let positions = self
            .position
            .val()
            .narrow(1, 0, tokens)
            .unsqueeze_dim::<4>(1);
        let segment = self.token_type.val().narrow(1, 0, 1).unsqueeze_dim::<4>(1);
        let x = words + positions + segment;
        self.norm.forward(x.reshape([groups, rows, d]))
    }

    fn features(&self, x: Tensor<3>, input: &Input) -> Tensor<3> {
        let Input::Tokens { mask, .. } = input else {
            panic!("fused BERT classifiers take token sequences, not images")
        };
        let [members, rows, d] = x.dims();
        let batch = input.batch_size();
        let tokens = rows / batch;
        if let Some(pooler) = &self.pooler {
            // Each sample's first token (row b·T of its member's stream), through the member's
            // pooler: as `cls_pool` per member.
            let first = x.reshape([members, batch, tokens, d]).narrow(2, 0, 1);
            return pooler.forward(first.reshape([members, batch, d])).tanh();
        }
        // [M, B·T, D] is [M·B, T, D]; the mask repeated member-major matches its rows.
        let x = x.reshape([members * batch, tokens, d]);
        mean_pool(x, mask.clone().repeat_dim(0, members)).reshape([members, batch, d])
    }

    fn shared(&self) -> bool {
        self.word.dims()[0] == 1
    }
}
