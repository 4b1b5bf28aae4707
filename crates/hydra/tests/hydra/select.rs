//! Head selection on hand-made scores: `select_heads` against expectations written out by hand
//! or computed independently (exact Plackett–Luce probabilities), and `topk_share`.

use hydra::{
    HeadSet, Keep, MemberPlan, head_jaccard, mean_topk_share, select_heads, share_in_top,
    topk_share,
};
use pruning::Scores;

/// Heavy-tailed scores shaped like Taylor's on the quick start's ViT (4 blocks of 4 heads):
/// squared gradients spanning up to 10 orders of magnitude within a block, block maxima from
/// 2e-5 to 5, and every block's ranking in a different order of positions. All 16 values are
/// distinct. Descending, by (block, head): 5 (0,3), 9e-3 (3,1), 2e-3 (0,2), 5e-4 (3,3),
/// 4e-4 (1,0), 2e-5 (2,2), 1e-5 (1,3), 6e-6 (2,0), 3e-6 (0,1), 7e-7 (1,2), 2e-7 (3,0),
/// 1e-8 (0,0), 3e-9 (2,1), 2e-9 (1,1), 1e-9 (3,2), 1e-10 (2,3).
fn heavy() -> Scores {
    Scores(vec![
        vec![1e-8, 3e-6, 2e-3, 5.0],
        vec![4e-4, 2e-9, 7e-7, 1e-5],
        vec![6e-6, 3e-9, 2e-5, 1e-10],
        vec![2e-7, 9e-3, 1e-9, 5e-4],
    ])
}

/// The heads each budget keeps under plain top-k on `heavy()`, read off the list above.
fn top_k_by_hand() -> Vec<(Keep, Vec<Vec<usize>>)> {
    vec![
        (Keep::PerBlock(1), vec![vec![3], vec![0], vec![2], vec![1]]),
        (
            Keep::PerBlock(2),
            vec![vec![2, 3], vec![0, 3], vec![0, 2], vec![1, 3]],
        ),
        (
            Keep::PerBlock(3),
            vec![vec![1, 2, 3], vec![0, 2, 3], vec![0, 1, 2], vec![0, 1, 3]],
        ),
        (Keep::PerBlock(4), vec![vec![0, 1, 2, 3]; 4]),
        // Global: each block's best head, then the best of the rest across the model.
        (Keep::Global(4), vec![vec![3], vec![0], vec![2], vec![1]]),
        // + (0,2) = 2e-3
        (Keep::Global(5), vec![vec![2, 3], vec![0], vec![2], vec![1]]),
        // + (3,3) = 5e-4
        (
            Keep::Global(6),
            vec![vec![2, 3], vec![0], vec![2], vec![1, 3]],
        ),
        // + (1,3) = 1e-5, (2,0) = 6e-6
        (
            Keep::Global(8),
            vec![vec![2, 3], vec![0, 3], vec![0, 2], vec![1, 3]],
        ),
        // + (0,1) = 3e-6, (1,2) = 7e-7
        (
            Keep::Global(10),
            vec![vec![1, 2, 3], vec![0, 2, 3], vec![0, 2], vec![1, 3]],
        ),
        (Keep::Global(16), vec![vec![0, 1, 2, 3]; 4]),
    ]
}

#[test]
fn zero_and_tiny_temperatures_are_top_k_on_heavy_tailed_scores() {
    let scores = heavy();
    for (keep, expected) in top_k_by_hand() {
        let expected = HeadSet(expected);
        for temperature in [0.0, 1e-9] {
            for seed in 0..20 {
                let kept = select_heads(&scores, keep, temperature, seed).unwrap();
                assert_eq!(kept, expected, "{keep:?}, τ = {temperature}, seed {seed}");
                if let Keep::PerBlock(_) = keep {
                    let plan = MemberPlan {
                        kept,
                        scores: scores.clone(),
                    };
                    assert_eq!(topk_share(&plan).unwrap(), 1.0);
                }
            }
        }
    }
}

/// Selection sees only the order of the scores, within a block (per-block budget) or over the
/// model (global budget): a strictly increasing transform of all scores (here `ln s + 30`, and
/// `s^0.05`, which squash the heavy tail) changes no draw. Under min-max scaling it would.
#[test]
fn selection_depends_only_on_the_order_of_the_scores() {
    let scores = heavy();
    let map = |f: fn(f64) -> f64| {
        Scores(
            scores
                .0
                .iter()
                .map(|r| r.iter().map(|&s| f(s)).collect())
                .collect(),
        )
    };
    let transformed = [map(|s| s.ln() + 30.0), map(|s| s.powf(0.05))];
    for keep in [Keep::PerBlock(2), Keep::Global(6)] {
        for temperature in [0.5, 2.0] {
            for seed in 0..50 {
                let kept = select_heads(&scores, keep, temperature, seed).unwrap();
                for other in &transformed {
                    assert_eq!(
                        select_heads(other, keep, temperature, seed).unwrap(),
                        kept,
                        "{keep:?}, τ = {temperature}, seed {seed}"
                    );
                }
            }
        }
    }
}

/// Exact distribution of one block's top-k share when k of `h` heads are drawn by sequential
/// sampling without replacement (Plackett–Luce) with weights `exp(r/τ)`, r the normalised rank
/// (best = 1, then (h-2)/(h-1), …, worst = 0): the documented equivalent of Gumbel-top-k on the
/// keys r/τ + Gumbel. Enumerates every ordered draw. Returns (mean share, variance of the share,
/// probability of drawing exactly the top-k set).
fn plackett_luce_share(h: usize, k: usize, tau: f64) -> (f64, f64, f64) {
    let weights: Vec<f64> = (0..h)
        .map(|i| ((h - 1 - i) as f64 / (h - 1) as f64 / tau).exp())
        .collect();
    fn walk(w: &[f64], k: usize, drawn: &mut Vec<usize>, p: f64, out: &mut (f64, f64, f64)) {
        if drawn.len() == k {
            // Heads are indexed by rank, so the top-k set is 0..k.
            let share = drawn.iter().filter(|&&i| i < k).count() as f64 / k as f64;
            out.0 += p * share;
            out.1 += p * share * share;
            if share == 1.0 {
                out.2 += p;
            }
            return;
        }
        let left: f64 = (0..w.len())
            .filter(|i| !drawn.contains(i))
            .map(|i| w[i])
            .sum();
        for i in 0..w.len() {
            if !drawn.contains(&i) {
                drawn.push(i);
                walk(w, k, drawn, p * w[i] / left, out);
                drawn.pop();
            }
        }
    }
    let mut out = (0.0, 0.0, 0.0);
    walk(&weights, k, &mut Vec::new(), 1.0, &mut out);
    (out.0, out.1 - out.0 * out.0, out.2)
}

/// At the quick start's τ = 0.5, with 2 of 4 heads kept per block, members follow the scores:
/// the mean top-2 share over 2000 seeded draws matches the exact Plackett–Luce expectation
/// under rank normalisation (0.732; the best head is e^2 times as likely as the worst to be
/// drawn first), far above uniform choice (k/H = 0.5). Under the old min-max scaling over the
/// model, blocks 1–3 of these scores (all below 0.01 of the maximum) were chosen uniformly.
#[test]
fn quick_start_temperature_follows_heavy_tailed_scores() {
    let (heads, k, tau, draws) = (4, 2, 0.5, 2000);
    let scores = heavy();
    let blocks = scores.0.len();
    let (expected, variance, exact) = plackett_luce_share(heads, k, tau);
    let (uniform, _, _) = plackett_luce_share(heads, k, f64::INFINITY);
    assert!(
        (uniform - k as f64 / heads as f64).abs() < 1e-12,
        "{uniform}"
    );
    assert!((expected - 0.7322).abs() < 1e-4, "{expected}");

    let top = select_heads(&scores, Keep::PerBlock(k), 0.0, 0).unwrap();
    let mut shares = 0.0;
    let mut exact_blocks = 0usize;
    for seed in 0..draws {
        let kept = select_heads(&scores, Keep::PerBlock(k), tau, seed).unwrap();
        let plan = MemberPlan {
            kept,
            scores: scores.clone(),
        };
        shares += topk_share(&plan).unwrap();
        exact_blocks += (plan.kept.0.iter().zip(&top.0))
            .filter(|(a, b)| a == b)
            .count();
    }
    let mean = shares / draws as f64;
    // Blocks draw independent Gumbels, so a member's share is the mean of 4 independent block
    // shares, and the mean over draws has standard error sqrt(var / (blocks · draws)).
    let trials = (blocks * draws as usize) as f64;
    let se = (variance / trials).sqrt(); // 0.003
    assert!(
        (mean - expected).abs() < 4.0 * se,
        "mean share {mean} vs expected {expected} ± {se}"
    );
    assert!(expected - uniform > 50.0 * se, "{expected} vs {uniform}");
    let rate = exact_blocks as f64 / trials;
    let se_exact = (exact * (1.0 - exact) / trials).sqrt();
    assert!(
        (rate - exact).abs() < 4.0 * se_exact,
        "top-2 kept whole in {rate} of blocks vs {exact} ± {se_exact}"
    );
}

#[test]
fn topk_share_counts_kept_heads_in_each_blocks_top_k() {
    // Block 1 ties three heads: its top-2 is heads 0 and 1 (the earlier head first).
    let scores = Scores(vec![vec![0.1, 0.9, 0.5, 0.3], vec![2.0, 2.0, 2.0, 1.0]]);
    let plan = |kept: Vec<Vec<usize>>| MemberPlan {
        kept: HeadSet(kept),
        scores: scores.clone(),
    };
    // Top-2 {1, 2} and {0, 1}: 2 + 1 of 4.
    let a = plan(vec![vec![1, 2], vec![1, 2]]);
    assert_eq!(topk_share(&a).unwrap(), 0.75);
    // Uneven (global) budget: block 0's top-1 is {1}, block 1's top-3 {0, 1, 2}: 0 + 2 of 4.
    let b = plan(vec![vec![0], vec![0, 1, 3]]);
    assert_eq!(topk_share(&b).unwrap(), 0.5);
    assert_eq!(mean_topk_share(&[a, b]).unwrap(), 0.625);
    assert_eq!(
        topk_share(&plan(vec![vec![0, 1, 2, 3], vec![3]])).unwrap(),
        0.8
    );

    for bad in [
        vec![vec![4], vec![0]],
        vec![vec![1, 0], vec![0]],
        vec![vec![0]],
        vec![vec![], vec![]],
    ] {
        assert!(topk_share(&plan(bad.clone())).is_err(), "{bad:?}");
    }
    assert!(mean_topk_share(&[]).is_err());
}

#[test]
fn select_heads_rejects_bad_inputs() {
    let scores = heavy();
    for (keep, temperature, needle) in [
        (Keep::PerBlock(2), -0.5, "temperature = -0.5"),
        (Keep::PerBlock(2), f64::INFINITY, "temperature = inf"),
        (Keep::PerBlock(5), 0.5, "SelectConfig.keep (per block) = 5"),
        (Keep::Global(3), 0.5, "SelectConfig.keep (global) = 3"),
    ] {
        let err = select_heads(&scores, keep, temperature, 0)
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{keep:?}, τ = {temperature}: {err}");
    }
    let bad = Scores(vec![vec![0.1, f64::NAN]]);
    let err = select_heads(&bad, Keep::PerBlock(1), 0.5, 0).unwrap_err();
    assert!(err.to_string().contains("Scores[0][1]"), "{err}");
}

/// `share_in_top` and `head_jaccard` on head sets counted by hand.
#[test]
fn share_against_another_ranking_and_jaccard_by_hand() {
    let scores = Scores(vec![vec![0.9, 0.1, 0.5], vec![0.2, 0.8]]);
    // Block 0 keeps heads 1 and 2 (its top 2 are 0 and 2: one hit), block 1 head 1 (a hit).
    let kept = HeadSet(vec![vec![1, 2], vec![1]]);
    assert!((share_in_top(&kept, &scores).unwrap() - 2.0 / 3.0).abs() < 1e-15);
    // The same as topk_share of a plan holding those scores.
    let plan = MemberPlan {
        kept: kept.clone(),
        scores: scores.clone(),
    };
    assert_eq!(
        topk_share(&plan).unwrap(),
        share_in_top(&kept, &scores).unwrap()
    );
    assert!(share_in_top(&HeadSet(vec![vec![], vec![]]), &scores).is_err());
    // {(0,1), (0,2), (1,1)} and {(0,0), (0,2), (1,1)}: 2 common of 4; with itself 1.
    let other = HeadSet(vec![vec![0, 2], vec![1]]);
    let far = HeadSet(vec![vec![0], vec![0]]);
    assert_eq!(
        head_jaccard(&[kept.clone(), other, kept.clone(), far]),
        vec![0.5, 1.0, 0.0, 0.5, 0.25, 0.0]
    );
    assert!(head_jaccard(&[kept]).is_empty());
}
