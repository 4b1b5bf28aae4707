//! The BERT encoder and sequence classifier: config, modules, and what makes the classifier a
//! [`Backbone`].

mod embeddings;
mod model;
mod pooling;
mod sentence;
mod stem;

pub use embeddings::BertEmbeddings;
pub use model::{BertClassifier, BertConfig, BertModel};
pub use pooling::{Pooling, cls_pool, mean_pool};
pub use stem::TokenStem;
