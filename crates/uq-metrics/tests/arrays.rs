//! The ndarray side of the API: arrays of any memory layout give the inputs built from row-major
//! vectors, the views read back what was given, and metrics agree with the same quantities
//! computed here with ndarray's own operations.

use ndarray::{Array2, Array3, Axis, ShapeBuilder};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use uq_metrics::{Logits, MemberProbs, Probs, accuracy, softmax_probs};

/// Member probabilities `[M, N, C]` from random logits, row-major.
fn members(m: usize, n: usize, c: usize, seed: u64) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(m * n * c);
    for _ in 0..m * n {
        let logits: Vec<f64> = (0..c).map(|_| rng.random_range(-3.0..3.0)).collect();
        let max = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let exp: Vec<f64> = logits.iter().map(|x| (x - max).exp()).collect();
        let sum: f64 = exp.iter().sum();
        out.extend(exp.iter().map(|e| e / sum));
    }
    out
}

#[test]
fn any_layout_gives_the_row_major_input_and_views_read_it_back() {
    let (m, n, c) = (3, 7, 4);
    let data = members(m, n, c, 1);
    let rows = MemberProbs::new(data.clone(), m, n, c).unwrap();
    let standard = Array3::from_shape_vec((m, n, c), data.clone()).unwrap();
    // The same logical array stored column-major (Fortran order, as numpy may save it).
    let mut fortran = Array3::<f64>::zeros((m, n, c).f());
    fortran.assign(&standard);
    assert!(!fortran.is_standard_layout());
    assert_eq!(MemberProbs::from_array(fortran.view()).unwrap(), rows);
    assert_eq!(rows.view(), standard.view());

    // One member [N, C], also from a transposed [C, N] array and from f32.
    let first = standard.index_axis(Axis(0), 0).to_owned();
    let probs = Probs::new(first.iter().copied().collect(), n, c).unwrap();
    let transposed = first.t().to_owned();
    assert_eq!(Probs::from_array(transposed.t()).unwrap(), probs);
    assert_eq!(probs.view(), first.view());
    let narrow = first.mapv(|p| p as f32);
    let widened = Probs::from_array(narrow.view()).unwrap();
    assert_eq!(
        widened,
        Probs::from_f32(narrow.as_slice().unwrap(), n, c).unwrap()
    );

    let logits = Array2::from_shape_fn((n, c), |(i, j)| (i * c + j) as f64 / 10.0 - 1.0);
    assert_eq!(
        Logits::from_array(logits.view()).unwrap().view(),
        logits.view()
    );
}

#[test]
fn the_ensemble_mean_and_accuracy_agree_with_ndarray() {
    let (m, n, c) = (4, 50, 5);
    let members = MemberProbs::new(members(m, n, c, 2), m, n, c).unwrap();
    let mean = members.view().mean_axis(Axis(0)).unwrap();
    let ours = members.mean();
    for (a, b) in ours.view().iter().zip(mean.iter()) {
        assert!((a - b).abs() < 1e-15);
    }
    let labels: Vec<usize> = (0..n).map(|i| i % c).collect();
    let argmax = |row: ndarray::ArrayView1<f64>| {
        (0..c).fold(0, |best, j| if row[j] > row[best] { j } else { best })
    };
    let correct = (mean.axis_iter(Axis(0)).zip(&labels))
        .filter(|(row, y)| argmax(*row) == **y)
        .count();
    assert_eq!(accuracy(&ours, &labels).unwrap(), correct as f64 / n as f64);
}

#[test]
fn a_bad_array_is_refused_as_a_bad_vector_is() {
    let bad = Array2::from_shape_vec((2, 2), vec![0.5, 0.5, 0.9, 0.3]).unwrap();
    let from_array = Probs::from_array(bad.view()).unwrap_err().to_string();
    let from_vec = Probs::new(bad.iter().copied().collect(), 2, 2)
        .unwrap_err()
        .to_string();
    assert_eq!(from_array, from_vec);
    let empty = Array2::<f64>::zeros((0, 3));
    assert!(Probs::from_array(empty.view()).is_err());
    // Softmax output comes back as a view of the right shape.
    let logits = Logits::from_array(Array2::<f64>::zeros((3, 2)).view()).unwrap();
    let p = softmax_probs(&logits);
    assert_eq!(p.view().dim(), (3, 2));
    assert!(p.view().iter().all(|&x| (x - 0.5).abs() < 1e-15));
}
