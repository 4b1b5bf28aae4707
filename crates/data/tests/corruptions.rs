//! Corruptions: severity tables, determinism and closed-form behaviour.

use data::{Corruption, ImageDataset, Pixels, corrupt};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

fn dataset(values: Vec<f32>, dims: [usize; 3]) -> ImageDataset {
    let n = values.len() / dims.iter().product::<usize>();
    ImageDataset {
        name: "toy".into(),
        pixels: Pixels::F32(values),
        labels: vec![0; n],
        dims,
        num_classes: 1,
    }
}

/// Six random 3x12x12 images with values in [0.2, 0.6], away from the clipping bounds.
fn random_images() -> ImageDataset {
    let dims = [3, 12, 12];
    let mut rng = StdRng::seed_from_u64(9);
    let values = (0..6 * 3 * 144)
        .map(|_| rng.random_range(0.2f32..0.6))
        .collect();
    dataset(values, dims)
}

fn floats(d: &ImageDataset) -> &[f32] {
    match &d.pixels {
        Pixels::F32(v) => v,
        Pixels::U8(_) => panic!("corruptions return float pixels"),
    }
}

fn mean_abs_change(a: &ImageDataset, b: &ImageDataset) -> f64 {
    let (a, b) = (floats(a), floats(b));
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from((x - y).abs()))
        .sum::<f64>()
        / a.len() as f64
}

#[test]
fn change_grows_with_severity_for_every_corruption() {
    let clean = random_images();
    for c in Corruption::ALL {
        let changes: Vec<f64> = (1..=5)
            .map(|s| mean_abs_change(&clean, &corrupt(&clean, c, s, 1).unwrap()))
            .collect();
        assert!(changes[0] > 0.0, "{c}: {changes:?}");
        assert!(changes.windows(2).all(|w| w[0] < w[1]), "{c}: {changes:?}");
    }
}

#[test]
fn output_is_named_clipped_and_seed_deterministic() {
    let clean = random_images();
    for c in Corruption::ALL {
        let a = corrupt(&clean, c, 3, 42).unwrap();
        assert_eq!(a.name, format!("toy-{c}-3"));
        assert_eq!(
            (a.labels.clone(), a.dims, a.num_classes),
            (clean.labels.clone(), clean.dims, 1)
        );
        assert!(floats(&a).iter().all(|x| (0.0..=1.0).contains(x)));
        assert_eq!(corrupt(&clean, c, 3, 42).unwrap(), a);
        let other = corrupt(&clean, c, 3, 43).unwrap();
        let noisy = matches!(c, Corruption::GaussianNoise | Corruption::ShotNoise);
        assert_eq!(other != a, noisy, "{c}: seed dependence");
    }
    // Large noise on bright pixels is clipped at 1.
    let bright = dataset(vec![0.99; 64], [1, 8, 8]);
    let noisy = corrupt(&bright, Corruption::GaussianNoise, 5, 0).unwrap();
    assert!(floats(&noisy).contains(&1.0));
}

#[test]
fn byte_datasets_are_scaled_before_corruption() {
    let bytes = ImageDataset {
        name: "b".into(),
        pixels: Pixels::U8(vec![51; 16]),
        labels: vec![0],
        dims: [1, 4, 4],
        num_classes: 1,
    };
    let out = corrupt(&bytes, Corruption::Brightness, 1, 0).unwrap();
    assert!(floats(&out).iter().all(|&x| (x - 0.25).abs() < 1e-6));
}

#[test]
fn brightness_and_contrast_match_closed_forms_on_constant_images() {
    let grey = dataset(vec![0.4; 25], [1, 5, 5]);
    for (severity, delta) in [(1, 0.05), (3, 0.15), (5, 0.3)] {
        let out = corrupt(&grey, Corruption::Brightness, severity, 0).unwrap();
        assert!(
            floats(&out)
                .iter()
                .all(|&x| (x - (0.4 + delta)).abs() < 1e-6)
        );
        // Contrast pulls towards the mean, which a constant image already is.
        let out = corrupt(&grey, Corruption::Contrast, severity, 0).unwrap();
        assert!(floats(&out).iter().all(|&x| (x - 0.4).abs() < 1e-6));
    }
    // A colour pixel keeps hue and saturation: its HSV value 0.5 rises to 0.8, so every channel
    // scales by 1.6; a value near 1 is clipped.
    let colour = dataset(
        [vec![0.2; 4], vec![0.4; 4], vec![0.5; 4]].concat(),
        [3, 2, 2],
    );
    let out = corrupt(&colour, Corruption::Brightness, 5, 0).unwrap();
    let expected = [[0.32; 4], [0.64; 4], [0.8; 4]].concat();
    assert!(
        floats(&out)
            .iter()
            .zip(&expected)
            .all(|(x, e)| (x - e).abs() < 1e-6)
    );
    let near_white = dataset(vec![0.9; 4], [1, 2, 2]);
    let out = corrupt(&near_white, Corruption::Brightness, 5, 0).unwrap();
    assert!(floats(&out).iter().all(|&x| x == 1.0));
    // Two-valued image: mean 0.4, contrast 0.5 at severity 2 maps 0.2 -> 0.3 and 0.6 -> 0.5.
    let two = dataset(vec![0.2, 0.6, 0.2, 0.6], [1, 2, 2]);
    let out = corrupt(&two, Corruption::Contrast, 2, 0).unwrap();
    let expected = [0.3, 0.5, 0.3, 0.5];
    assert!(
        floats(&out)
            .iter()
            .zip(expected)
            .all(|(x, e)| (x - e).abs() < 1e-6)
    );
}

#[test]
fn blur_preserves_constants_and_pixelate_preserves_block_constants() {
    let constant = dataset(vec![0.7; 2 * 9 * 7], [2, 9, 7]);
    for s in 1..=5 {
        let out = corrupt(&constant, Corruption::GaussianBlur, s, 0).unwrap();
        assert!(floats(&out).iter().all(|&x| (x - 0.7).abs() < 1e-6));
    }
    // Severity 5 halves the resolution: 28 -> 14 groups of 2 rows and 2 columns.
    let mut rng = StdRng::seed_from_u64(4);
    let blocks: Vec<f32> = (0..14 * 14).map(|_| rng.random::<f32>()).collect();
    let image: Vec<f32> = (0..28 * 28)
        .map(|i| blocks[(i / 28 / 2) * 14 + (i % 28) / 2])
        .collect();
    let blocky = dataset(image, [1, 28, 28]);
    let out = corrupt(&blocky, Corruption::Pixelate, 5, 0).unwrap();
    assert_eq!(floats(&out), floats(&blocky));
    // The same image shifted by one pixel is not block-constant and does change.
    let shifted: Vec<f32> = (0..28 * 28)
        .map(|i| floats(&blocky)[(i + 1) % 784])
        .collect();
    let shifted = dataset(shifted, [1, 28, 28]);
    assert!(
        mean_abs_change(
            &shifted,
            &corrupt(&shifted, Corruption::Pixelate, 5, 0).unwrap()
        ) > 0.01
    );
}

#[test]
fn blur_matches_a_direct_two_dimensional_convolution() {
    // Impulse in the middle of a 9x9 image: the output is the normalised 2-d Gaussian kernel,
    // and with sigma 1 (severity 5) the truncation radius 4 keeps it inside the image.
    let mut image = vec![0.0; 81];
    image[40] = 1.0;
    let out = corrupt(&dataset(image, [1, 9, 9]), Corruption::GaussianBlur, 5, 0).unwrap();
    let g: Vec<f64> = (-4..=4)
        .map(|d: i32| (-f64::from(d * d) / 2.0).exp())
        .collect();
    let z: f64 = g.iter().sum();
    for y in 0..9 {
        for x in 0..9 {
            let expected = g[y] * g[x] / (z * z);
            assert!((f64::from(floats(&out)[y * 9 + x]) - expected).abs() < 1e-6);
        }
    }
}

#[test]
fn names_parse_and_bad_inputs_are_errors() {
    for c in Corruption::ALL {
        assert_eq!(c.to_string().parse::<Corruption>().unwrap(), c);
    }
    assert_eq!(
        "shot_noise".parse::<Corruption>().unwrap(),
        Corruption::ShotNoise
    );
    let err = "fog".parse::<Corruption>().unwrap_err().to_string();
    assert!(
        err.contains("unknown corruption `fog`")
            && err.contains("gaussian_noise")
            && err.contains("pixelate"),
        "{err}"
    );
    let clean = random_images();
    for s in [0, 6] {
        let err = corrupt(&clean, Corruption::Contrast, s, 0)
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("severity {s}")), "{err}");
    }
}

#[test]
fn shot_noise_is_unbiased() {
    // Poisson(x c) / c has mean x: averaged over many pixels the image mean is kept.
    let flat = dataset(vec![0.3; 4000], [1, 40, 100]);
    let out = corrupt(&flat, Corruption::ShotNoise, 5, 7).unwrap();
    let mean = floats(&out).iter().map(|&x| f64::from(x)).sum::<f64>() / 4000.0;
    // Per-pixel std sqrt(0.3 / 50) ~ 0.077; standard error of the mean ~ 0.0012.
    assert!((mean - 0.3).abs() < 0.006, "{mean}");
}
