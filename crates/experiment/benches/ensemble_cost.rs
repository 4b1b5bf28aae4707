//! What the ensembles cost, side by side, on `vit_tiny_28` (patch 7, 10 classes): parameters,
//! median latency at batch 1 and 64 (after warm-up) and the peak heap memory of one batch-64
//! pass, with the ratios the issues ask for. Weights are freshly initialised: cost does not
//! depend on their values. `cargo bench -p experiment --bench ensemble_cost`

use backbone::{Classifier, ViTConfig};
use burn::tensor::{Device, Distribution, Tensor};
use ensembles::{DeepEnsemble, Single};
use experiment::eval::costs;
use experiment::results::Cost;
use hydra::{HeadSet, Merge};
use lora_ensemble::LoraConfig;
use seam::EnsembleModel;

#[global_allocator]
static ALLOCATOR: experiment::memory::PeakAlloc = experiment::memory::PeakAlloc;

fn main() {
    experiment::memory::keep_freed_memory();
    let device = Device::flex();
    let vit = ViTConfig::preset("vit_tiny_28").expect("preset");
    let flops = backbone::flops_per_sample(&vit);
    let images = Tensor::<4>::random([64, 1, 28, 28], Distribution::Normal(0.0, 1.0), &device);
    // Burn draws weights at first use: run each model once so later timings see drawn weights.
    let model = |seed: u64| -> Classifier {
        device.seed(seed);
        let m = vit.init(&device).expect("init");
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
    let kept = |m: usize| HeadSet(vec![vec![m % 4, (m + 1) % 4]; vit.n_layers]);
    let pruned: Vec<_> = (0..3)
        .map(|m| hydra::prune(&base, &kept(m)).expect("prune"))
        .collect();
    let hydra = hydra::fuse(&pruned, Merge::Average, 0).expect("fuse");
    let lora = LoraConfig::new(16).init(base.clone(), 1).expect("lora");

    let rows: Vec<(&str, Box<dyn EnsembleModel>)> = vec![
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
}
