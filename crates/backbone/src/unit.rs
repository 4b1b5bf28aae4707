//! Rows scaled to unit length: CLIP's embeddings before their cosine similarities, shared by
//! the CLIP models and the fused ViT stems that read them out.

use burn::tensor::Tensor;

/// Each row `[.., E]` divided by its Euclidean norm (as transformers, without an epsilon).
pub fn normalize(x: Tensor<2>) -> Tensor<2> {
    let norm = (x.clone() * x.clone()).sum_dim(1).sqrt();
    x / norm
}
