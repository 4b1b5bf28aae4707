//! Temperature scaling: recovery of a known temperature, the NLL guarantee, exact cases.

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use uq_metrics::{Logits, accuracy, fit_temperature, nll, scale_logits, softmax_probs};

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut StdRng) -> f64 {
    let u: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.random::<f64>()).cos()
}

fn random_logits(rng: &mut StdRng, n: usize, c: usize, scale: f64) -> Vec<f64> {
    (0..n * c).map(|_| scale * normal(rng)).collect()
}

/// A draw from the distribution `p` (inverse CDF).
fn categorical(rng: &mut StdRng, p: &[f64]) -> usize {
    let u: f64 = rng.random();
    let mut mass = 0.0;
    for (c, &pc) in p.iter().enumerate() {
        mass += pc;
        if u < mass {
            return c;
        }
    }
    p.len() - 1
}

/// NLL of `softmax(logits / t)` through the crate's other public functions.
fn nll_at(logits: &Logits, labels: &[usize], t: f64) -> f64 {
    nll(&softmax_probs(&scale_logits(logits, t).unwrap()), labels).unwrap()
}

#[test]
fn recovers_the_temperature_labels_were_drawn_at() {
    let (n, c) = (4000, 5);
    let mut rng = StdRng::seed_from_u64(21);
    let logits = Logits::new(random_logits(&mut rng, n, c, 3.0), n, c).unwrap();
    for t0 in [0.5, 2.0] {
        let truth = softmax_probs(&scale_logits(&logits, t0).unwrap());
        let labels: Vec<usize> = truth.rows().map(|p| categorical(&mut rng, p)).collect();
        let t = fit_temperature(&logits, &labels).unwrap();
        // With b = 1/T the model is an exponential family in b with statistic z[y], so the
        // maximum-likelihood b is asymptotically normal with variance 1 / I, the Fisher
        // information I = sum_i Var_{y ~ p_i}(z_i[y]), computable from the inputs. Four
        // standard errors: a false failure has probability about 6e-5 per draw.
        let information: f64 = truth
            .rows()
            .zip(logits.rows())
            .map(|(p, z)| {
                let mean: f64 = p.iter().zip(z).map(|(p, z)| p * z).sum();
                p.iter()
                    .zip(z)
                    .map(|(p, z)| p * (z - mean).powi(2))
                    .sum::<f64>()
            })
            .sum();
        let se = information.sqrt().recip();
        assert!(
            (1.0 / t - 1.0 / t0).abs() <= 4.0 * se,
            "T0 = {t0}: fitted {t}, 1/T off by {} with se {se}",
            (1.0 / t - 1.0 / t0).abs()
        );
    }
}

#[test]
fn fitted_nll_is_never_above_the_nll_at_t_1() {
    let mut rng = StdRng::seed_from_u64(22);
    for trial in 0..12 {
        let (n, c) = (rng.random_range(5..200), rng.random_range(2..12));
        let scale = [0.1, 1.0, 5.0, 20.0][trial % 4];
        let logits = Logits::new(random_logits(&mut rng, n, c, scale), n, c).unwrap();
        let labels: Vec<usize> = (0..n).map(|_| rng.random_range(0..c)).collect();
        let t = fit_temperature(&logits, &labels).unwrap();
        let (fitted, base) = (nll_at(&logits, &labels, t), nll_at(&logits, &labels, 1.0));
        assert!(
            fitted <= base + 1e-12,
            "trial {trial}: {fitted} > {base} at T = {t}"
        );
        // And it is a minimum: nudging T either way does not help.
        for nudge in [0.999, 1.001] {
            let t2 = (t * nudge).clamp(0.05, 20.0);
            assert!(
                fitted <= nll_at(&logits, &labels, t2) + 1e-12,
                "trial {trial}"
            );
        }
    }
}

#[test]
fn labels_at_the_argmax_drive_t_to_its_lower_bound() {
    // Every label is the (unique) argmax: the NLL falls as T falls, all the way to 0.05.
    let mut rng = StdRng::seed_from_u64(23);
    let (n, c) = (50, 4);
    let logits = Logits::new(random_logits(&mut rng, n, c, 1.0), n, c).unwrap();
    let probs = softmax_probs(&logits);
    let labels: Vec<usize> = probs
        .rows()
        .map(|p| (0..c).fold(0, |b, k| if p[k] > p[b] { k } else { b }))
        .collect();
    let t = fit_temperature(&logits, &labels).unwrap();
    assert!((t - 0.05).abs() < 1e-12, "{t}");
}

#[test]
fn a_flat_objective_leaves_t_at_1() {
    // Equal logits in every row: softmax is uniform at any T.
    let logits = Logits::new(vec![0.7; 12], 4, 3).unwrap();
    assert_eq!(fit_temperature(&logits, &[0, 1, 2, 0]).unwrap(), 1.0);
}

#[test]
fn scaling_by_1_is_the_identity_and_no_t_moves_the_argmax() {
    let mut rng = StdRng::seed_from_u64(24);
    let (n, c) = (40, 6);
    let logits = Logits::new(random_logits(&mut rng, n, c, 2.0), n, c).unwrap();
    assert_eq!(scale_logits(&logits, 1.0).unwrap(), logits);
    let labels: Vec<usize> = (0..n).map(|_| rng.random_range(0..c)).collect();
    let base = accuracy(&softmax_probs(&logits), &labels).unwrap();
    for t in [0.05, 0.7, 3.0, 20.0] {
        let scaled = softmax_probs(&scale_logits(&logits, t).unwrap());
        assert_eq!(accuracy(&scaled, &labels).unwrap(), base, "T = {t}");
    }
}

#[test]
fn softmax_by_hand_and_for_huge_logits() {
    let three = 3f64.ln();
    let p = softmax_probs(&Logits::new(vec![0.0, three, 1000.0, 999.0], 2, 2).unwrap());
    assert!((p.row(0)[0] - 0.25).abs() < 1e-15 && (p.row(0)[1] - 0.75).abs() < 1e-15);
    // Naive exp(1000) overflows; the stable form gives 1 / (1 + e^-1) and its complement.
    let top = 1.0 / (1.0 + (-1f64).exp());
    assert!((p.row(1)[0] - top).abs() < 1e-15 && (p.row(1)[1] - (1.0 - top)).abs() < 1e-15);
    // Shifting a row's logits changes nothing.
    let mut rng = StdRng::seed_from_u64(25);
    let z = random_logits(&mut rng, 10, 7, 3.0);
    let shifted: Vec<f64> = z.iter().map(|x| x + 500.0).collect();
    let (a, b) = (
        softmax_probs(&Logits::new(z, 10, 7).unwrap()),
        softmax_probs(&Logits::new(shifted, 10, 7).unwrap()),
    );
    for (ra, rb) in a.rows().zip(b.rows()) {
        assert!((ra.iter().sum::<f64>() - 1.0).abs() < 1e-14);
        assert!(ra.iter().zip(rb).all(|(x, y)| (x - y).abs() < 1e-12));
    }
}

/// NLL of the ensemble `mean_m softmax(z_m / t)` through the crate's other public functions.
fn ensemble_nll_at(members: &[Logits], labels: &[usize], t: f64) -> f64 {
    let (n, c) = (members[0].n(), members[0].c());
    let mut mean = vec![0.0; n * c];
    for z in members {
        let p = softmax_probs(&scale_logits(z, t).unwrap());
        for (m, &x) in mean.iter_mut().zip(p.rows().flatten()) {
            *m += x / members.len() as f64;
        }
    }
    nll(&uq_metrics::Probs::new(mean, n, c).unwrap(), labels).unwrap()
}

#[test]
fn one_member_ensembles_fit_the_single_model_temperature() {
    let (n, c) = (500, 4);
    let mut rng = StdRng::seed_from_u64(5);
    let logits = Logits::new(random_logits(&mut rng, n, c, 2.0), n, c).unwrap();
    let labels: Vec<usize> = (0..n).map(|_| rng.random_range(0..c)).collect();
    let single = fit_temperature(&logits, &labels).unwrap();
    let ensemble = uq_metrics::fit_ensemble_temperature(&[logits], &labels).unwrap();
    assert_eq!(single, ensemble);
}

#[test]
fn ensemble_temperature_is_the_minimum_of_a_dense_search() {
    let (n, c, m) = (1500, 5, 3);
    let mut rng = StdRng::seed_from_u64(8);
    // Members share a signal and differ by noise; labels come from their mean softmax at T0 = 2.
    let shared = random_logits(&mut rng, n, c, 3.0);
    let members: Vec<Logits> = (0..m)
        .map(|_| {
            let z = shared.iter().map(|&s| s + normal(&mut rng)).collect();
            Logits::new(z, n, c).unwrap()
        })
        .collect();
    let mut probs = vec![0.0; n * c];
    for z in &members {
        let p = softmax_probs(&scale_logits(z, 2.0).unwrap());
        for (q, &x) in probs.iter_mut().zip(p.rows().flatten()) {
            *q += x / m as f64;
        }
    }
    let labels: Vec<usize> = probs.chunks(c).map(|p| categorical(&mut rng, p)).collect();
    let fitted = uq_metrics::fit_ensemble_temperature(&members, &labels).unwrap();
    // An independent minimiser: 2001 points on ln T over the same range.
    let (lo, hi) = (0.05f64.ln(), 20f64.ln());
    let step = (hi - lo) / 2000.0;
    let (best_t, best_nll) = (0..=2000)
        .map(|i| (lo + step * i as f64).exp())
        .map(|t| (t, ensemble_nll_at(&members, &labels, t)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    let fitted_nll = ensemble_nll_at(&members, &labels, fitted);
    assert!(fitted_nll <= best_nll + 1e-12, "{fitted_nll} vs {best_nll}");
    assert!(
        (fitted.ln() - best_t.ln()).abs() <= step,
        "fitted {fitted}, dense search {best_t}"
    );
    assert!(fitted_nll <= ensemble_nll_at(&members, &labels, 1.0));
    // Drawn at T0 = 2 with N = 1500: far from 1, and near 2.
    assert!((fitted - 2.0).abs() < 0.4, "{fitted}");
    // Members of different shapes are an error, not a panic.
    let short = Logits::new(vec![0.0; c], 1, c).unwrap();
    let err = uq_metrics::fit_ensemble_temperature(&[members[0].clone(), short], &labels);
    assert!(err.unwrap_err().to_string().contains("member's logits"));
    assert!(uq_metrics::fit_ensemble_temperature(&[], &labels).is_err());
}
