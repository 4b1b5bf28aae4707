//! `uqformer embed`: token ids and sentence embeddings from a Hugging Face BERT checkpoint
//! (safetensors or ONNX), to check an import against one's own reference (e.g.
//! sentence-transformers).

use std::path::PathBuf;

use clap::Args;
use experiment::embed::embed;
use runtime::Backend;
use serde::Serialize;

#[derive(Args, Debug)]
pub struct EmbedArgs {
    /// Checkpoint folder with vocab.txt and config.json + model.safetensors or one *.onnx
    /// graph (e.g. datasets/all-minilm-l6-v2, from `datasets/fetch`).
    #[arg(long)]
    weights: PathBuf,
    /// Print a JSON list of {"text", "ids", "embedding"} instead of a summary.
    #[arg(long)]
    json: bool,
    /// Longest token sequence, [CLS] and [SEP] included; longer texts are truncated
    /// (256 is sentence-transformers' limit for all-MiniLM-L6-v2).
    #[arg(long, default_value_t = 256)]
    max_len: usize,
    /// Compute device: flex, ndarray, wgpu, cuda, tch or tch-cuda (as compiled in).
    #[arg(long, default_value = "flex")]
    backend: Backend,
    /// The texts to embed.
    #[arg(required = true)]
    texts: Vec<String>,
}

/// One `--json` entry, keys in this order.
#[derive(Serialize)]
struct Row<'a> {
    text: &'a str,
    ids: &'a [u32],
    embedding: &'a [f32],
}

pub fn run(args: &EmbedArgs) -> crate::error::Result<()> {
    let embedded = embed(&args.weights, &args.texts, args.max_len, args.backend)?;
    let rows = args.texts.iter().zip(&embedded);
    if args.json {
        let list: Vec<Row> = rows
            .map(|(text, e)| Row {
                text,
                ids: &e.ids,
                embedding: &e.embedding,
            })
            .collect();
        println!("{}", serde_json::to_string(&list)?);
        return Ok(());
    }
    for (text, e) in rows {
        let ids: Vec<String> = e.ids.iter().map(u32::to_string).collect();
        let head: Vec<String> = (e.embedding.iter())
            .take(8)
            .map(|v| format!("{v:.6}"))
            .collect();
        println!("{text:?}");
        println!("  tokens ({}): {}", e.tokens.len(), e.tokens.join(" "));
        println!("  ids: {}", ids.join(" "));
        println!(
            "  embedding ({} values, L2-normalised): {} ...",
            e.embedding.len(),
            head.join(" ")
        );
    }
    Ok(())
}
