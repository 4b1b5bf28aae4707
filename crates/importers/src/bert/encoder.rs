//! The name mapping of a BERT encoder's weights (embeddings and blocks), shared by every
//! layout and head the imports read.

use backbone::BertModel;
use burn::nn::Embedding;

use crate::mapping::{Loader, Source, set};

/// The checkpoint's common prefix (`bert.`, `roberta.`, or none), found before its word table.
pub(super) fn prefix(file: &dyn Source) -> &str {
    (file.names().into_iter())
        .find_map(|name| name.strip_suffix("embeddings.word_embeddings.weight"))
        .unwrap_or("")
}

/// Loads the embeddings and blocks under the loader's prefix (`embeddings.*`,
/// `encoder.layer.N.*`), the position table from row `offset` on.
pub(super) fn map_encoder(load: &mut Loader, model: &mut BertModel, offset: usize) {
    let e = &mut model.embeddings;
    let tables: [(&str, &mut Embedding); 2] = [
        ("word_embeddings", &mut e.word_embeddings),
        ("token_type_embeddings", &mut e.token_type_embeddings),
    ];
    for (name, table) in tables {
        load.param(
            &format!("embeddings.{name}.weight"),
            &mut table.weight,
            false,
        );
    }
    let positions = &mut e.position_embeddings.weight;
    let [rows, width] = positions.dims();
    let stored = [offset + rows, width];
    if let Some(values) = load.take("embeddings.position_embeddings.weight", &stored) {
        set(positions, values[offset * width..].to_vec());
    }
    load.layer_norm("embeddings.LayerNorm", &mut e.layer_norm);
    for (i, block) in model.encoder.layer.iter_mut().enumerate() {
        let name = |suffix: &str| format!("encoder.layer.{i}.{suffix}");
        let attention = &mut block.attention;
        load.linear(&name("attention.self.query"), &mut attention.query);
        load.linear(&name("attention.self.key"), &mut attention.key);
        load.linear(&name("attention.self.value"), &mut attention.value);
        load.linear(&name("attention.output.dense"), &mut attention.output);
        load.layer_norm(&name("attention.output.LayerNorm"), &mut block.norm1);
        load.linear(&name("intermediate.dense"), &mut block.mlp.fc1);
        load.linear(&name("output.dense"), &mut block.mlp.fc2);
        load.layer_norm(&name("output.LayerNorm"), &mut block.norm2);
    }
}
