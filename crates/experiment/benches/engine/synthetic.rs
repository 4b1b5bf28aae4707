//! The engine bench's training sets: random images, and texts of made-up one-token words.

use data::{ImageDataset, Pixels, TextDataset, WordPiece};

/// A xorshift stream: speed does not depend on the pixel values or the words.
fn stream(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// `n` images of `dims` with labels below `classes`.
pub fn images(n: usize, dims: [usize; 3], classes: usize, seed: u64) -> ImageDataset {
    let mut next = stream(seed);
    ImageDataset {
        name: "synthetic".into(),
        pixels: Pixels::U8(
            (0..n * dims.iter().product::<usize>())
                .map(|_| next() as u8)
                .collect(),
        ),
        labels: (0..n).map(|_| (next() % classes as u64) as u32).collect(),
        dims,
        num_classes: classes,
    }
}

/// `n` texts of `tokens - 2` words (`[CLS]` and `[SEP]` make `tokens`) from a BERT-sized
/// vocabulary of made-up words, one token each, with labels below `classes`.
pub fn texts(n: usize, tokens: usize, classes: usize, seed: u64) -> (TextDataset, WordPiece) {
    let vocab_size = importers::minilm_l6().vocab_size;
    let specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"];
    let words: Vec<String> = (specials.len()..vocab_size)
        .map(|i| format!("w{i}"))
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("vocab.txt");
    let vocab: Vec<&str> = specials
        .iter()
        .copied()
        .chain(words.iter().map(String::as_str))
        .collect();
    std::fs::write(&path, vocab.join("\n")).expect("vocab");
    let tokenizer = WordPiece::from_vocab_file(&path).expect("vocab");
    let mut next = stream(seed);
    let texts = (0..n)
        .map(|_| {
            let picked: Vec<&str> = (0..tokens - 2)
                .map(|_| words[next() as usize % words.len()].as_str())
                .collect();
            picked.join(" ")
        })
        .collect();
    let set = TextDataset {
        name: "synthetic".into(),
        texts,
        labels: (0..n).map(|_| (next() % classes as u64) as u32).collect(),
        num_classes: classes,
    };
    (set, tokenizer)
}
