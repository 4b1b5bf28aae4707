//! A method's raw predictions as `.npy` files (`[eval] save_predictions`), for `uqformer
//! metrics` or any numpy code: per set, the members' probabilities and logits `[M, N, C]`
//! (float32, as the model computed them) and the labels `[N]` (int64); where a feature-space
//! detector ran, the members' features `[M, N, D]` too (float32), of the training split the
//! detectors were fitted on as well, so a detector can be checked against another
//! implementation on the run's own features.

use uq_metrics::Logits;

use super::predict::Predictions;

/// `<set>-probs.npy`, `<set>-logits.npy` and `<set>-labels.npy` of each named set, and
/// `<set>-features.npy` of each that has features.
pub fn prediction_files(sets: &[(String, &Predictions)]) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::with_capacity(4 * sets.len());
    for (set, p) in sets {
        if let Some(first) = p.member_features.first() {
            let (m, n, d) = (p.member_features.len(), first.n(), first.d());
            let values =
                (p.member_features.iter()).flat_map(|f| f.as_slice().iter().map(|&v| v as f32));
            files.push((
                format!("{set}-features.npy"),
                npy("<f4", &[m, n, d], values.flat_map(f32::to_le_bytes)),
            ));
        }
        let (m, n, c) = (p.members.m(), p.members.n(), p.members.c());
        // Both were f32 widened to f64: narrowing gives back the model's values exactly.
        let view = p.members.view();
        let probs = view.iter().map(|&v| v as f32);
        let logits = (p.member_logits.iter())
            .flat_map(Logits::rows)
            .flatten()
            .map(|&v| v as f32);
        let labels = p.labels.iter().map(|&y| y as i64);
        files.push((
            format!("{set}-probs.npy"),
            npy("<f4", &[m, n, c], probs.flat_map(f32::to_le_bytes)),
        ));
        files.push((
            format!("{set}-logits.npy"),
            npy("<f4", &[m, n, c], logits.flat_map(f32::to_le_bytes)),
        ));
        files.push((
            format!("{set}-labels.npy"),
            npy("<i8", &[n], labels.flat_map(i64::to_le_bytes)),
        ));
    }
    files
}

/// An `.npy` file (format 1.0) of a C-order array: the magic string, the header dict padded
/// with spaces so the data starts at a multiple of 64 bytes, then the little-endian values.
/// Written here rather than through ndarray-npy: this crate has no ndarray (its `ndarray`
/// feature is Burn's backend), and the format of a plain array is these few lines. Also what
/// `uqformer predict` writes.
pub fn npy(descr: &str, shape: &[usize], data: impl Iterator<Item = u8>) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    let shape = match dims.as_slice() {
        [one] => format!("({one},)"),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // 6 magic bytes, 2 version bytes, 2 length bytes, the header and its closing newline.
    let unpadded = 10 + header.len() + 1;
    header.extend(std::iter::repeat_n(
        ' ',
        unpadded.next_multiple_of(64) - unpadded,
    ));
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.bytes());
    out.extend(data);
    out
}
