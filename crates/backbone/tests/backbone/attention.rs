use backbone::{AttentionConfig, Dropout, Mode};
use burn::module::{Module, Param};
use burn::tensor::{Bool, Tensor};

use crate::{assert_close, randn, test_device, values};

const B: usize = 2;
const T: usize = 3;
const D: usize = 4;
const H: usize = 2;
const DH: usize = D / H;

/// y[b,t,:] = x[b,t,:] W + bias with W stored [in, out], in plain loops.
fn linear_ref(
    x: &[f32],
    w: &[f32],
    bias: &[f32],
    rows: usize,
    d_in: usize,
    d_out: usize,
) -> Vec<f32> {
    let mut y = vec![0.0; rows * d_out];
    for r in 0..rows {
        for j in 0..d_out {
            let mut acc = bias[j];
            for i in 0..d_in {
                acc += x[r * d_in + i] * w[i * d_out + j];
            }
            y[r * d_out + j] = acc;
        }
    }
    y
}

fn weights(l: &burn::nn::Linear) -> (Vec<f32>, Vec<f32>) {
    (
        values(&l.weight.val()),
        values(&l.bias.as_ref().unwrap().val()),
    )
}

#[test]
fn attention_matches_loop_reference_with_gate_and_padding() {
    let device = test_device();
    let attn = AttentionConfig::new(D, H).init(&device).unwrap();
    let x = randn([B, T, D], &device);
    let gate = [1.0f32, 0.5];
    // Sequence 1 has its last key padded.
    let pad = [[false, false, false], [false, false, true]];
    let out = attn.forward(
        x.clone(),
        Some(Tensor::from_floats(gate, &device)),
        Some(Tensor::<2, Bool>::from_data(pad, &device)),
        Mode::Deterministic,
    );

    let xs = values(&x);
    let proj = |l: &burn::nn::Linear| {
        let (w, b) = weights(l);
        linear_ref(&xs, &w, &b, B * T, D, D)
    };
    let (q, k, v) = (proj(&attn.query), proj(&attn.key), proj(&attn.value));
    let mut context = vec![0.0f32; B * T * D];
    for b in 0..B {
        for h in 0..H {
            for i in 0..T {
                let at = |m: &[f32], t: usize, c: usize| m[(b * T + t) * D + h * DH + c];
                let scores: Vec<f32> = (0..T)
                    .map(|j| {
                        if pad[b][j] {
                            return f32::NEG_INFINITY;
                        }
                        let dot: f32 = (0..DH).map(|c| at(&q, i, c) * at(&k, j, c)).sum();
                        dot / (DH as f32).sqrt()
                    })
                    .collect();
                let max = scores.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                let exp: Vec<f32> = scores.iter().map(|s| (s - max).exp()).collect();
                let total: f32 = exp.iter().sum();
                for c in 0..DH {
                    let ctx: f32 = (0..T).map(|j| exp[j] / total * at(&v, j, c)).sum();
                    context[(b * T + i) * D + h * DH + c] = gate[h] * ctx;
                }
            }
        }
    }
    let (wo, bo) = weights(&attn.output);
    let expected = linear_ref(&context, &wo, &bo, B * T, D, D);
    let expected = Tensor::<1>::from_floats(expected.as_slice(), &device).reshape([B, T, D]);
    assert_close(&out, &expected, 1e-5);
}

/// Evaluation on plain flex runs Burn's fused attention kernel, training (autodiff) the
/// explicit softmax path: the same module gives the same output on both, padding and head
/// gates included, and on autodiff the output still carries gradients.
#[test]
fn fused_attention_equals_the_explicit_path() {
    let device = test_device();
    let autodiff = device.clone().autodiff();
    let attn = AttentionConfig::new(D, H).init(&device).unwrap();
    let x = randn([B, T, D], &device);
    let pad = [[false, false, false], [false, true, true]];
    let run = |on: &burn::tensor::Device| {
        attn.clone().to_device(on).forward(
            Tensor::from_data(x.to_data(), on),
            Some(Tensor::from_floats([0.25f32, 2.0], on)),
            Some(Tensor::<2, Bool>::from_data(pad, on)),
            Mode::Deterministic,
        )
    };
    let (fused, explicit) = (run(&device), run(&autodiff));
    assert!(explicit.is_autodiff() && !fused.is_autodiff());
    assert_close(
        &fused,
        &Tensor::from_data(explicit.to_data(), &device),
        1e-5,
    );
}

/// The two paths differ on one input only, a sequence whose every key is masked: the explicit
/// path's -1e4 scores are all equal, so each head's context is the mean of its values, while the
/// fused kernel's -∞ scores give no such mean. So this shows which path ran: the explicit one on
/// autodiff, the fused one on plain flex evaluation (and the test above compares the two).
#[test]
fn the_fused_kernel_runs_in_plain_evaluation() {
    let device = test_device();
    let qkv = [0, 1, 2].map(|i| randn([1, T, D], &device).mul_scalar(1.0 + i as f32));
    let mean_of_values = qkv[2].clone().mean_dim(1).repeat_dim(1, T);
    let all_masked = || Some(Tensor::<2, Bool>::from_data([[true; T]], &device));
    let run = |on: &burn::tensor::Device| {
        let qkv = qkv.clone().map(|t| Tensor::from_data(t.to_data(), on));
        let out = backbone::attend(
            qkv,
            H,
            None,
            all_masked().map(|m| m.to_device(on)),
            &Dropout { prob: 0.0 },
            Mode::Deterministic,
        );
        Tensor::<3>::from_data(out.to_data(), &device)
    };
    let explicit = run(&device.clone().autodiff());
    assert_close(&explicit, &mean_of_values, 1e-5);
    let fused = run(&device);
    let gap: f32 = (fused - mean_of_values).abs().max().into_scalar();
    assert!(
        gap >= 1e-3 || gap.is_nan(),
        "plain flex took the explicit path (gap {gap})"
    );
}

#[test]
fn head_gate_of_ones_equals_no_gate() {
    let device = test_device();
    let attn = AttentionConfig::new(D, H).init(&device).unwrap();
    let x = randn([B, T, D], &device);
    let plain = attn.forward(x.clone(), None, None, Mode::Deterministic);
    let gated = attn.forward(
        x,
        Some(Tensor::ones([H], &device)),
        None,
        Mode::Deterministic,
    );
    assert_close(&gated, &plain, 1e-6);
}

#[test]
fn zero_head_gate_equals_zeroing_that_heads_output_rows() {
    let device = test_device();
    let mut attn = AttentionConfig::new(D, H).init(&device).unwrap();
    let x = randn([B, T, D], &device);
    let gated = attn.forward(
        x.clone(),
        Some(Tensor::from_floats([1.0, 0.0], &device)),
        None,
        Mode::Deterministic,
    );
    // Burn stores the output weight [in = H·d_h, out = D]: head 1 feeds rows DH..2·DH.
    let mut w = values(&attn.output.weight.val());
    w[DH * D..2 * DH * D].iter_mut().for_each(|e| *e = 0.0);
    let w = Tensor::<1>::from_floats(w.as_slice(), &device).reshape([D, D]);
    attn.output.weight = Param::from_tensor(w);
    let pruned = attn.forward(x, None, None, Mode::Deterministic);
    assert_close(&gated, &pruned, 1e-6);
}

#[test]
fn attention_dropout_only_acts_in_stochastic_mode() {
    let device = test_device();
    let mut attn = AttentionConfig::new(D, H)
        .with_dropout(0.5)
        .init(&device)
        .unwrap();
    let x = randn([B, 8, D], &device);
    let a = attn.forward(x.clone(), None, None, Mode::Deterministic);
    attn.dropout = Dropout { prob: 0.0 };
    let reference = attn.forward(x.clone(), None, None, Mode::Stochastic);
    assert_close(&a, &reference, 1e-6);
    attn.dropout = Dropout { prob: 0.5 };
    let noisy = attn.forward(x, None, None, Mode::Stochastic);
    assert_ne!(values(&noisy), values(&reference));
}

#[test]
fn invalid_head_count_is_an_error_naming_the_field() {
    let err = AttentionConfig::new(6, 4).init(&test_device()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("AttentionConfig.n_heads") && text.contains("d_model = 6"),
        "{text}"
    );
}
