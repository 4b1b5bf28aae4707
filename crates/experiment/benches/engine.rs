//! The engine's speed, and PyTorch's on the same models (`scripts/torch_twin.py`): training
//! throughput through `train::fit` (AdamW, grad clip 1, dropout 0.1: the real loop with its batch
//! preparation and host reads; the pool's threads spinning between ops, as in a run without
//! worker processes), evaluation latency at the model's evaluation batch and at batch 1, and for
//! `vit_tiny_28` one MC Dropout sample (dropout on) at batch 256.
//!
//! `cargo bench -p experiment --bench engine -- [ROUNDS] [--models a,b] [--threads 1,2]
//! [--backends flex,tch]` (defaults: 5 rounds, `vit_tiny_28`, 1 and 2 threads, flex; `tch` needs
//! `--features tch`, docs/backends.md). Models ([`PLANS`]: sizes, batches and timed calls):
//! `vit_tiny_28` (the quick start's), `vit_192x12` (32x32x3, patch 4, width 192, 12 blocks:
//! ViT-S-sized work per token), `minilm_l6` (all-MiniLM-L6-v2's shape, 64 tokens), and the
//! papers' scale: `vit_b16` (ViT-B/16 at 224x224, 1000 classes) and `bert_base` (BERT-base at
//! 128 tokens, 2 classes), with small batches so that a round stays within minutes on a CPU.
//! Every measurement runs in a child process
//! with `RAYON_NUM_THREADS` and `OMP_NUM_THREADS` set (flex's threads and LibTorch's), and when
//! `$UQFORMER_PYTHON` (default `python3`) imports torch, the twin runs right before it with as
//! many threads, so both meet the machine in the same state. Printed per figure:
//! `engine/model/threads/figure median q1 q3` over rounds (engine `flex`, `tch` or `torch`), and
//! for each round's pair the speed ratio uqformer / PyTorch per backend (above 1: uqformer
//! faster). Two builds are compared by copying this binary aside and running the copies
//! alternately. Each round also measures the machine's f32 FMA peak on as many threads
//! (`fma_peak`, [`fma`]) and prints the training step's GFLOP/s (three forward passes' FLOPs
//! per sample) and its share of that peak.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Instant;

use backbone::{BertConfig, Classifier, Gates, Input, Mode, ViTConfig};
use burn::module::Module;
use burn::tensor::Device;
use data::Normalization;
use train::{Data, FitOptions, ImageData, TextData, TrainConfig, fit};

#[path = "engine/fma.rs"]
mod fma;
#[path = "engine/synthetic.rs"]
mod synthetic;

const TWIN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/torch_twin.py");

/// How one model is timed (`scripts/torch_twin.py` keeps the same table): training samples per
/// round and their batch, the evaluation batch, how many calls are timed at it and at batch 1
/// (the median is printed), tokens per text (`[CLS]` and `[SEP]` included; images ignore it)
/// and classes.
struct Plan {
    name: &'static str,
    samples: usize,
    batch: usize,
    eval_batch: usize,
    eval_calls: usize,
    b1_calls: usize,
    tokens: usize,
    classes: usize,
}

/// The papers' scale (`vit_b16`, `bert_base`) trains 2 steps of 8 and evaluates batches of 8:
/// one forward pass of either costs about 20 GFLOPs per sample, seconds per batch on a CPU core.
const PLANS: &[Plan] = &[
    Plan {
        name: "vit_tiny_28",
        samples: 960,
        batch: 32,
        eval_batch: 256,
        eval_calls: 5,
        b1_calls: 50,
        tokens: 0,
        classes: 10,
    },
    Plan {
        name: "vit_192x12",
        samples: 320,
        batch: 32,
        eval_batch: 64,
        eval_calls: 5,
        b1_calls: 50,
        tokens: 0,
        classes: 10,
    },
    Plan {
        name: "minilm_l6",
        samples: 320,
        batch: 32,
        eval_batch: 64,
        eval_calls: 5,
        b1_calls: 50,
        tokens: 64,
        classes: 10,
    },
    Plan {
        name: "vit_b16",
        samples: 16,
        batch: 8,
        eval_batch: 8,
        eval_calls: 3,
        b1_calls: 7,
        tokens: 0,
        classes: 1000,
    },
    Plan {
        name: "bert_base",
        samples: 16,
        batch: 8,
        eval_batch: 8,
        eval_calls: 3,
        b1_calls: 7,
        tokens: 128,
        classes: 2,
    },
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
    };
    if let Some(threads) = flag("--fma-peak") {
        let threads = threads.parse().expect("--fma-peak THREADS");
        if let Some(peak) = fma::peak_gflop_per_s(threads) {
            println!("fma_peak_gflop_per_s {peak:.3}");
        }
        return;
    }
    if let Some(model) = flag("--one") {
        let seed = flag("--seed").and_then(|s| s.parse().ok()).unwrap_or(0);
        let backend = flag("--backend").map_or("flex", String::as_str);
        runtime::memory::keep_freed_memory();
        return runtime::pool::on_pool(|| measure(model, backend, seed));
    }
    // ROUNDS is the first argument that is not a flag's value (`--threads 2` is not 2 rounds).
    let rounds: usize = (args.iter().enumerate())
        .find(|(i, a)| !a.starts_with("--") && (*i == 0 || !args[i - 1].starts_with("--")))
        .and_then(|(_, a)| a.parse().ok())
        .unwrap_or(5);
    let models: Vec<&str> =
        flag("--models").map_or(vec!["vit_tiny_28"], |m| m.split(',').collect());
    if let Some(bad) = models.iter().find(|m| !PLANS.iter().any(|p| p.name == **m)) {
        let names: Vec<_> = PLANS.iter().map(|p| p.name).collect();
        eprintln!("engine: unknown model {bad}; expected one of {names:?}");
        std::process::exit(2);
    }
    let threads: Vec<&str> = flag("--threads").map_or(vec!["1", "2"], |t| t.split(',').collect());
    let backends: Vec<&str> = flag("--backends").map_or(vec!["flex"], |b| b.split(',').collect());
    let python = std::env::var("UQFORMER_PYTHON").unwrap_or_else(|_| "python3".into());
    let torch = Command::new(&python)
        .args(["-c", "import torch"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !torch {
        eprintln!("engine: {python} cannot import torch; timing uqformer alone");
    }
    let me = std::env::current_exe().expect("own path");
    let mut figures: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for round in 0..rounds {
        for model in &models {
            for t in &threads {
                let seed = round.to_string();
                let theirs = torch.then(|| {
                    run(
                        Command::new(&python).args([
                            TWIN,
                            "--model",
                            model,
                            "--threads",
                            t,
                            "--seed",
                            &seed,
                        ]),
                        t,
                    )
                });
                let peak = run(Command::new(&me).args(["--fma-peak", t]), t)
                    .get("fma_peak_gflop_per_s")
                    .copied();
                if let Some(peak) = peak {
                    figures
                        .entry(format!("fma_peak/t{t}/gflop_per_s"))
                        .or_default()
                        .push(peak);
                }
                for backend in &backends {
                    let ours = run(
                        Command::new(&me).args([
                            "--one",
                            model,
                            "--backend",
                            backend,
                            "--seed",
                            &seed,
                        ]),
                        t,
                    );
                    // The training step against the FMA peak measured right before it.
                    if let (Some(peak), Some(gflops)) = (peak, ours.get("train_gflop_per_s")) {
                        figures
                            .entry(format!("{backend}/{model}/t{t}/train_share_of_fma_peak"))
                            .or_default()
                            .push(gflops / peak);
                    }
                    for (figure, value) in &ours {
                        let key = format!("{model}/t{t}/{figure}");
                        figures
                            .entry(format!("{backend}/{key}"))
                            .or_default()
                            .push(*value);
                        let Some(twin) = theirs.as_ref().and_then(|r| r.get(figure)) else {
                            continue;
                        };
                        // Throughput ours/theirs, latency theirs/ours: above 1, uqformer is faster.
                        let speed = if figure.ends_with("_per_s") {
                            value / twin
                        } else {
                            twin / value
                        };
                        figures
                            .entry(format!("speed_ratio_{backend}/{key}"))
                            .or_default()
                            .push(speed);
                    }
                }
                for (figure, value) in theirs.iter().flatten() {
                    figures
                        .entry(format!("torch/{model}/t{t}/{figure}"))
                        .or_default()
                        .push(*value);
                }
            }
        }
    }
    for (name, values) in &mut figures {
        report(name, values);
    }
}

/// Runs a child with `threads` threads (rayon's for flex, OpenMP's for LibTorch) and reads its
/// `figure value` lines.
fn run(command: &mut Command, threads: &str) -> BTreeMap<String, f64> {
    let out = command
        .env("RAYON_NUM_THREADS", threads)
        .env("OMP_NUM_THREADS", threads)
        .output()
        .expect("start child");
    assert!(
        out.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(' ')?;
            Some((name.to_string(), value.trim().parse().ok()?))
        })
        .collect()
}

/// The model called `name`, freshly initialised, and its image dimensions (`None`: text).
fn build(name: &str, plan: &Plan, device: &Device) -> (Classifier, Option<[usize; 3]>) {
    let vit = |config: ViTConfig| {
        let dims = [config.channels, config.image_size, config.image_size];
        let config = config.with_num_classes(plan.classes).with_dropout(0.1);
        (
            Classifier::Vit(config.init(device).expect("init")),
            Some(dims),
        )
    };
    let bert = |config: BertConfig| {
        let model = config.init_classifier(plan.classes, device).expect("bert");
        (Classifier::Bert(model), None)
    };
    match name {
        "vit_tiny_28" => vit(ViTConfig::vit_tiny_28()),
        "vit_192x12" => vit(ViTConfig::vit_tiny_32().with_n_layers(12)),
        // ViT-B/16: ViT-S/16's 224x224x3 and 12 blocks at width 768, 12 heads, MLP 3072.
        "vit_b16" => {
            vit((ViTConfig::vit_s_16().with_d_model(768).with_n_heads(12)).with_d_mlp(3072))
        }
        "minilm_l6" => bert(importers::minilm_l6()),
        "bert_base" => {
            bert((importers::minilm_l6().with_d_model(768).with_n_layers(12)).with_d_mlp(3072))
        }
        other => panic!("unknown model {other}"),
    }
}

/// One round of one model in this process: train, then time evaluation.
fn measure(name: &str, backend: &str, seed: u64) {
    let device = (backend.parse::<runtime::Backend>())
        .and_then(|b| b.device())
        .unwrap_or_else(|e| panic!("{e}"));
    let autodiff = device.clone().autodiff();
    autodiff.seed(seed);
    let plan = PLANS
        .iter()
        .find(|p| p.name == name)
        .expect("a known model");
    let (classifier, image_dims) = build(name, plan, &autodiff);
    let config = TrainConfig {
        epochs: 1,
        batch_size: plan.batch,
        lr: 1.5e-3,
        warmup_epochs: 0.1,
        ..TrainConfig::default()
    };
    let opts = FitOptions {
        device: autodiff,
        seed,
        label: "bench".into(),
        checkpoint: None,
        quiet: true,
        stop_after: None,
        distill: None,
        validation: None,
    };
    // Either modality's training set, and an evaluation batch of the same kind.
    let images = image_dims.map(|dims| synthetic::images(plan.samples, dims, plan.classes, seed));
    let texts = (image_dims.is_none())
        .then(|| synthetic::texts(plan.samples, plan.tokens, plan.classes, seed));
    let norm = images
        .as_ref()
        .map(|set| Normalization::fit(set).expect("norm"));
    let data: Data = match (&images, &texts) {
        (Some(set), _) => ImageData {
            set,
            norm: norm.as_ref().expect("norm"),
        }
        .into(),
        (_, Some((set, tokenizer))) => TextData {
            set,
            tokenizer,
            max_tokens: plan.tokens,
        }
        .into(),
        _ => unreachable!(),
    };
    // A training step costs about three forward passes: the forward, and the two products of
    // each layer's backward pass (input and weight gradients).
    let train_flops = 3 * classifier.flops(plan.tokens);
    let t = Instant::now();
    // With the pool's threads spinning, as a run without worker processes trains.
    let trained = runtime::pool::hot(|| fit(classifier, data, &config, &opts)).expect("fit");
    let per_s = plan.samples as f64 / t.elapsed().as_secs_f64();
    println!("train_samples_per_s {per_s:.3}");
    println!("train_gflop_per_s {:.3}", per_s * train_flops as f64 / 1e9);
    evaluate(&trained.valid(), &data, plan, &device);
}

/// Evaluation latency at the plan's batch and at batch 1 (and for `vit_tiny_28` one MC Dropout
/// sample), timed with the pool's threads spinning between ops, as PyTorch's OpenMP threads do
/// (`runtime::pool::hot`).
fn evaluate(model: &Classifier, data: &Data, plan: &Plan, device: &Device) {
    let indices: Vec<usize> = (0..plan.eval_batch).collect();
    let batch = data.batch(&indices, None, device).expect("batch");
    let one = data.batch(&[0], None, device).expect("batch");
    let run = |x: &Input, mode| {
        let _ = model.forward(x.clone(), &Gates::none(), mode).into_data();
    };
    runtime::pool::hot(|| {
        run(&batch, Mode::Deterministic);
        let ms = median_ms(plan.eval_calls, || run(&batch, Mode::Deterministic));
        println!("eval_ms {ms:.4}");
        run(&one, Mode::Deterministic);
        let ms = median_ms(plan.b1_calls, || run(&one, Mode::Deterministic));
        println!("eval_b1_ms {ms:.4}");
        if plan.name == "vit_tiny_28" {
            let ms = median_ms(5, || run(&batch, Mode::Stochastic));
            println!("mc_dropout_sample_ms {ms:.4}");
        }
    });
}

fn median_ms(calls: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..calls)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[calls / 2]
}

fn report(name: &str, values: &mut [f64]) {
    values.sort_by(f64::total_cmp);
    // Quartiles interpolated between order statistics, so three rounds give three figures.
    let q = |p: f64| {
        let at = (values.len() - 1) as f64 * p;
        let (lo, hi) = (values[at.floor() as usize], values[at.ceil() as usize]);
        lo + (hi - lo) * at.fract()
    };
    println!("{name} {:.3} {:.3} {:.3}", q(0.5), q(0.25), q(0.75));
}
