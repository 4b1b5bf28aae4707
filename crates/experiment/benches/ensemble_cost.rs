//! What the ensembles cost, side by side, on `vit_tiny_28` (patch 7, 10 classes): parameters,
//! median latency at batch 1 and 64 (after warm-up) and the peak heap memory of one batch-64
//! pass, with the ratios the issues ask for; then the memory of training LoRA-Ensemble N = 16
//! against 16 explicit members, trained together or one after another. Weights are freshly
//! initialised: cost does not depend on their values.
//! `cargo bench -p experiment --bench ensemble_cost`
//!
//! With `-- --table [...]` it prints instead the papers' cost claims on ViT-B/16 as one markdown
//! table, on any backend and in f32 and bf16 ([`table`]; `scripts/gpu_check.sh` runs it).
//!
//! With `-- --loop NAME --batch B --passes N` it runs only the model whose name starts with NAME
//! (`single`, `deep_ensemble M=3`, `hydra`, ...) N times at batch B, with the pool's threads
//! spinning as timed passes run: the loop to profile (`perf record`, docs/performance.md).

use backbone::{Classifier, Input, ViTConfig};
use burn::module::Module;
use burn::optim::{AdamWConfig, GradientsParams};
use burn::tensor::{Device, Distribution, Int, Tensor, TensorData};
use ensembles::{DeepEnsemble, Single};
use experiment::eval::costs;
use hydra::Merge;
use lora_ensemble::LoraConfig;
use report::Cost;
use runtime::memory::{peak_bytes, reset_peak};
use seam::{EnsembleModel, Trainable};

#[global_allocator]
static ALLOCATOR: runtime::memory::PeakAlloc = runtime::memory::PeakAlloc;

#[path = "ensemble_cost/table.rs"]
mod table;

fn main() {
    runtime::memory::keep_freed_memory();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--table") {
        return runtime::pool::on_pool(|| table::run(&args));
    }
    if args.iter().any(|a| a == "--loop") {
        return runtime::pool::on_pool(|| run_loop(&args));
    }
    runtime::pool::on_pool(measure);
}

/// Models by name.
type Named = Vec<(&'static str, Box<dyn EnsembleModel>)>;

/// The models this bench compares, by name, and the sample batch they run on.
fn models(device: &Device, vit: &ViTConfig, batch: usize) -> (Named, Tensor<4>) {
    let flops = vit.flops_per_sample();
    let images = Tensor::<4>::random([batch, 1, 28, 28], Distribution::Normal(0.0, 1.0), device);
    // Burn draws weights at first use: run each model once so later timings see drawn weights.
    let model = |seed: u64| -> Classifier {
        device.seed(seed);
        let m = vit.init(device).expect("init");
        let _ = m
            .forward(
                images.clone().narrow(0, 0, 1),
                &backbone::Gates::none(),
                backbone::Mode::Deterministic,
            )
            .into_data();
        m.into()
    };
    let base = model(0);
    let members = |m: usize| (0..m as u64).map(model).collect::<Vec<_>>();
    // Hydra M = 3: each member keeps 2 of the 4 heads of every block, a different pair each.
    let kept = |m: usize| vec![vec![m % 4, (m + 1) % 4]; vit.n_layers];
    let pruned: Vec<_> = (0..3)
        .map(|m| pruning::prune_heads(&base, &kept(m)).expect("prune"))
        .collect();
    let hydra = hydra::fuse(&pruned, Merge::Average, 0).expect("fuse");
    let lora = LoraConfig::new(16).init(base.clone(), 1).expect("lora");
    let rows: Named = vec![
        ("single", Box::new(Single::new(base.clone(), flops))),
        (
            "deep_ensemble M=3",
            Box::new(DeepEnsemble::new(members(3), flops)),
        ),
        ("hydra M=3 (2/4 heads, average)", Box::new(hydra)),
        (
            "deep_ensemble M=16",
            Box::new(DeepEnsemble::new(members(16), flops)),
        ),
        ("lora_ensemble N=16 (r=8)", Box::new(lora)),
    ];
    (rows, images)
}

/// `--loop NAME --batch B --passes N`: one model's forward passes, for a profiler.
fn run_loop(args: &[String]) {
    let value = |flag: &str, default: &str| {
        let at = args.iter().position(|a| a == flag);
        at.and_then(|i| args.get(i + 1))
            .cloned()
            .unwrap_or(default.into())
    };
    let (name, batch, passes) = (
        value("--loop", "hydra"),
        value("--batch", "1"),
        value("--passes", "2000"),
    );
    let batch: usize = batch.parse().expect("--batch: a positive integer");
    let passes: usize = passes.parse().expect("--passes: a positive integer");
    let device = Device::flex();
    let vit = ViTConfig::preset("vit_tiny_28").expect("preset");
    let (rows, images) = models(&device, &vit, batch);
    let (_, model) = (rows.iter().find(|(n, _)| n.starts_with(name.as_str())))
        .unwrap_or_else(|| panic!("--loop {name}: no such model"));
    let input: backbone::Input = images.into();
    let start = std::time::Instant::now();
    runtime::pool::hot(|| {
        for _ in 0..passes {
            let _ = model.member_logits(input.clone()).into_data();
        }
    });
    let ms = start.elapsed().as_secs_f64() * 1e3 / passes as f64;
    println!("{name} at batch {batch}: {passes} passes, {ms:.3} ms a pass");
}

fn measure() {
    let device = Device::flex();
    let vit = ViTConfig::preset("vit_tiny_28").expect("preset");
    let (rows, images) = models(&device, &vit, 64);
    // Every model timed round-robin in the same rounds, so machine noise hits them alike.
    let models: Vec<&dyn EnsembleModel> = rows.iter().map(|(_, m)| m.as_ref()).collect();
    let costs: Vec<(&str, Cost)> = (rows.iter().map(|(name, _)| *name))
        .zip(costs(&models, &images.clone().into(), 64, 9, None))
        .collect();
    println!(
        "{:<32} {:>10} {:>20} {:>20} {:>14}",
        "model", "params", "ms b=1 [q1, q3]", "ms b=64 [q1, q3]", "peak MB (b=64)"
    );
    for (name, c) in &costs {
        println!(
            "{name:<32} {:>10} {:>6.3} [{:.3}, {:.3}] {:>6.2} [{:.2}, {:.2}] {:>14.1}",
            c.params,
            c.latency_ms_b1,
            c.latency_ms_b1_q1,
            c.latency_ms_b1_q3,
            c.latency_ms,
            c.latency_ms_q1,
            c.latency_ms_q3,
            c.peak_mem_bytes.unwrap_or(0) as f64 / 1e6
        );
    }
    let get = |name: &str| {
        &costs
            .iter()
            .find(|(n, _)| n.starts_with(name))
            .expect(name)
            .1
    };
    let (single, de3, hydra, de16, lora) = (
        get("single"),
        get("deep_ensemble M=3"),
        get("hydra"),
        get("deep_ensemble M=16"),
        get("lora"),
    );
    let mem = |c: &Cost| c.peak_mem_bytes.unwrap_or(0) as f64;
    println!();
    println!(
        "hydra / single latency:        b1 {:.2}x  b64 {:.2}x",
        hydra.latency_ms_b1 / single.latency_ms_b1,
        hydra.latency_ms / single.latency_ms
    );
    println!(
        "deep ensemble / hydra latency: b1 {:.2}x  b64 {:.2}x",
        de3.latency_ms_b1 / hydra.latency_ms_b1,
        de3.latency_ms / hydra.latency_ms
    );
    println!(
        "lora N=16 / explicit 16:       params {:.3}  peak memory {:.2}  latency b64 {:.2}",
        lora.params as f64 / de16.params as f64,
        mem(lora) / mem(de16),
        lora.latency_ms / de16.latency_ms
    );
    training_memory(&vit, &device);
}

/// Live bytes once gradients exist (weights, gradients and, from the second step, AdamW's two
/// moments: the parameter states) and the peak of whole training steps, activations included,
/// both above the live bytes before the models were built.
#[derive(Default)]
struct Trace {
    states: usize,
    peak: usize,
}

/// Two AdamW steps (the moments exist from the first) of `models` on one batch, trained
/// together: one summed loss, one backward pass, every model's states and activations live.
fn train_steps<M: Trainable>(
    mut models: Vec<M>,
    input: &Input,
    labels: &Tensor<1, Int>,
    baseline: usize,
    trace: &mut Trace,
) -> Vec<M> {
    let mut optims: Vec<_> = models.iter().map(|_| AdamWConfig::new().init()).collect();
    for _ in 0..2 {
        let loss = (models.iter())
            .map(|m| train::cross_entropy(m.train_logits(input.clone()), labels.clone(), 0.0))
            .reduce(|a, b| a + b)
            .expect("a model");
        let mut grads = loss.backward();
        trace.peak = trace.peak.max(peak_bytes(baseline).unwrap_or(0) as usize);
        trace.states = trace.states.max(reset_peak() - baseline);
        models = (models.into_iter().zip(&mut optims))
            .map(|(m, optim)| {
                let g = GradientsParams::from_module(&mut grads, &m);
                optim.step(1e-3, m, g)
            })
            .collect();
        trace.peak = trace.peak.max(peak_bytes(baseline).unwrap_or(0) as usize);
    }
    models
}

/// LoRA-Ensemble N = 16 (r = 8) against 16 explicit members at batch 32: the parameter states
/// (measured, and counted as 4 bytes a weight plus 12 a trainable one) and the training peak.
fn training_memory(vit: &ViTConfig, device: &Device) {
    let autodiff = device.clone().autodiff();
    let images = Tensor::<4>::random([32, 1, 28, 28], Distribution::Normal(0.0, 1.0), &autodiff);
    let input = Input::Images(images);
    let labels: Vec<i64> = (0..32).map(|i| i % 10).collect();
    let labels = Tensor::<1, Int>::from_data(TensorData::new(labels, [32]), &autodiff);
    let member = |seed: u64| -> Classifier {
        autodiff.seed(seed);
        vit.init(&autodiff).expect("init").into()
    };
    let counted = |total: usize, trainable: usize| (4 * total + 12 * trainable) as f64 / 1e6;

    let baseline = reset_peak();
    let mut lora = Trace::default();
    let model = LoraConfig::new(16).init(member(0), 1).expect("lora");
    let model = train_steps(vec![model], &input, &labels, baseline, &mut lora);
    let lora_counted = counted(
        Module::num_params(&model[0]),
        train::trainable_params(&model[0]),
    );
    drop(model);

    let baseline = reset_peak();
    let mut together = Trace::default();
    let members = train_steps(
        (0..16).map(member).collect(),
        &input,
        &labels,
        baseline,
        &mut together,
    );
    let params: usize = members.iter().map(|m| m.num_params()).sum();
    drop(members);

    let baseline = reset_peak();
    let mut sequential = Trace::default();
    let mut kept = Vec::new();
    for seed in 0..16 {
        kept.extend(train_steps(
            vec![member(seed)],
            &input,
            &labels,
            baseline,
            &mut sequential,
        ));
    }
    drop(kept);

    println!();
    println!("training, batch 32, AdamW    states MB (counted)   peak MB");
    let row = |name: &str, t: &Trace, c: f64| {
        println!(
            "{name:<28} {:>9.2} ({c:>6.2}) {:>9.2}",
            t.states as f64 / 1e6,
            t.peak as f64 / 1e6
        );
    };
    row("lora_ensemble N=16 (r=8)", &lora, lora_counted);
    row("16 members together", &together, counted(params, params));
    row(
        "16 members one by one",
        &sequential,
        counted(params, params / 16),
    );
    println!(
        "16 together / lora:           states {:.2}x  peak {:.2}x",
        together.states as f64 / lora.states as f64,
        together.peak as f64 / lora.peak as f64
    );
}
