//! `uqformer embed`: token ids and sentence embeddings from a Hugging Face BERT checkpoint
//! (safetensors or ONNX), to check an import against one's own reference (e.g.
//! sentence-transformers).

use std::path::PathBuf;

use clap::Args;
use data::WordPiece;
use experiment::device::Backend;
use importers::load_hf_bert;
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
    let dir = &args.weights;
    if !dir.is_dir() {
        return Err(format!(
            "{}: not a directory; expected a BERT checkpoint folder with vocab.txt and \
             config.json + model.safetensors or one *.onnx graph (run `datasets/fetch \
             all-minilm-l6-v2` for datasets/all-minilm-l6-v2)",
            dir.display()
        )
        .into());
    }
    let tokenizer = WordPiece::from_vocab_file(&dir.join("vocab.txt"))?;
    let device = args.backend.device()?;
    let (config, model) = load_hf_bert(dir, &device)?;
    if tokenizer.vocab_size() != config.vocab_size {
        return Err(format!(
            "{}: {} tokens, but the checkpoint's vocab_size is {}",
            dir.join("vocab.txt").display(),
            tokenizer.vocab_size(),
            config.vocab_size
        )
        .into());
    }
    if args.max_len > config.max_position {
        return Err(format!(
            "--max-len {}: expected at most max_position_embeddings = {}",
            args.max_len, config.max_position
        )
        .into());
    }
    let ids = args
        .texts
        .iter()
        .map(|text| tokenizer.encode(text, args.max_len).map(|e| e.ids))
        .collect::<Result<Vec<_>, _>>()?;
    let embeddings = model.sentence_embeddings(&ids)?;
    let rows = args.texts.iter().zip(&ids).zip(&embeddings);
    if args.json {
        let list: Vec<Row> = rows
            .map(|((text, ids), embedding)| Row {
                text,
                ids,
                embedding,
            })
            .collect();
        println!("{}", serde_json::to_string(&list)?);
        return Ok(());
    }
    for ((text, ids), embedding) in rows {
        let tokens: Vec<&str> = ids
            .iter()
            .map(|&id| tokenizer.token(id).unwrap_or("?"))
            .collect();
        let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
        let head: Vec<String> = embedding
            .iter()
            .take(8)
            .map(|v| format!("{v:.6}"))
            .collect();
        println!("{text:?}");
        println!("  tokens ({}): {}", tokens.len(), tokens.join(" "));
        println!("  ids: {}", ids.join(" "));
        println!(
            "  embedding ({} values, L2-normalised): {} ...",
            embedding.len(),
            head.join(" ")
        );
    }
    Ok(())
}
