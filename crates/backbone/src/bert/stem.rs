//! Fused BERT members' input end: the embedding tables read by one gather, and masked mean
//! pooling per member.

use burn::module::{Module, Param};
use burn::tensor::{Int, Tensor};

use crate::bert::{BertEmbeddings, mean_pool};
use crate::error::BackboneError;
use crate::grouped::{GroupedLayerNorm, all_equal};
use crate::input::Input;
use crate::traits::GroupedStem;

/// BERT members: the embedding tables and LayerNorm stored once (G = 1) when every member has
/// the same ones (members whose embeddings stayed frozen), else each member's own (G = M;
/// members fine-tuned apart differ there), stacked and read by one gather; readout = masked
/// mean pooling.
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
}

impl TokenStem {
    /// The members' embedding tables and LayerNorms.
    pub(crate) fn of(members: &[&BertEmbeddings]) -> Result<Self, BackboneError> {
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
        // [M, B·T, D] is [M·B, T, D]; the mask repeated member-major matches its rows.
        let x = x.reshape([members * batch, rows / batch, d]);
        mean_pool(x, mask.clone().repeat_dim(0, members)).reshape([members, batch, d])
    }

    fn shared(&self) -> bool {
        self.word.dims()[0] == 1
    }
}
