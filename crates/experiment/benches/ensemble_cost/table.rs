//! `ensemble_cost -- --table`: the papers' cost claims as one markdown table. Single, Deep
//! Ensemble (M = 3), Hydra (M = 3), LoRA-Ensemble (N = 16) and HetDPT on one ViT, timed by the
//! runs' own harness (`experiment::eval::costs`: batch 1 and the batch, round-robin, paired
//! ratios to single) in each precision asked for, on any compiled backend.
//!
//! `--backend B` (default flex; `tch-cuda` for the GPU), `--model vit_b16|PRESET` (default
//! `vit_b16`: ViT-B/16 at 224x224, 1000 classes), `--batch N` (default 256), `--rounds R`
//! (default 5), `--dtypes f32,bf16` (default both). A method that fails in a precision (a kernel
//! the backend lacks, out of memory) is left out of that precision's timing and the table says
//! why. Weights are random: cost does not depend on their values.

use std::panic::{AssertUnwindSafe, catch_unwind};

use backbone::{Classifier, Input, ViTConfig};
use burn::tensor::{Device, Distribution, FloatDType, Tensor};
use ensembles::{DeepEnsemble, Single};
use hetdpt::Removal;
use hydra::Merge;
use lora_ensemble::LoraConfig;
use report::Cost;
use seam::EnsembleModel;

/// ViT-B/16: ViT-S/16's 224x224x3 and 12 blocks at width 768, 12 heads, MLP 3072.
fn vit_config(name: &str) -> ViTConfig {
    match name {
        "vit_b16" => ViTConfig::vit_s_16()
            .with_d_model(768)
            .with_n_heads(12)
            .with_d_mlp(3072),
        other => ViTConfig::preset(other).unwrap_or_else(|e| panic!("--model: {e}")),
    }
}

/// The five methods on `vit`, members seeded 0, 1, 2.
fn methods(vit: &ViTConfig, device: &Device) -> Vec<(&'static str, Box<dyn EnsembleModel>)> {
    let flops = vit.flops_per_sample();
    let member = |seed: u64| {
        device.seed(seed);
        vit.init(device).expect("init")
    };
    let base = member(0);
    let single = Classifier::from(base.clone());
    let heads = vit.n_heads;
    // Hydra: each member keeps half of every block's heads, each half starting a quarter further.
    let kept = |m: usize| {
        let keep: Vec<usize> = (0..heads / 2)
            .map(|j| (m * heads / 4 + j) % heads)
            .collect();
        vec![keep; vit.n_layers]
    };
    let pruned: Vec<_> = (0..3)
        .map(|m| pruning::prune_heads(&single, &kept(m)).expect("prune"))
        .collect();
    // HetDPT: a fixed choice standing in for a budget's (cost depends only on which layers go):
    // the last third of the blocks lose their attention branch and their GELU.
    let last_third: Vec<bool> = (0..vit.n_layers)
        .map(|l| l >= vit.n_layers - vit.n_layers / 3)
        .collect();
    let removal = Removal {
        attn: last_third.clone(),
        act: last_third,
    };
    vec![
        ("single", Box::new(Single::new(single.clone(), flops))),
        (
            "Deep Ensemble (M = 3)",
            Box::new(DeepEnsemble::new((0..3).map(member).collect(), flops)),
        ),
        (
            "Hydra (M = 3, half the heads, averaged MLP)",
            Box::new(hydra::fuse(&pruned, Merge::Average, 0).expect("fuse")),
        ),
        (
            "LoRA-Ensemble (N = 16, r = 8)",
            Box::new(LoraConfig::new(16).init(single, 1).expect("lora")),
        ),
        (
            "HetDPT (last third: attention and GELU removed)",
            Box::new(hetdpt::merge(&base, &removal).expect("merge")),
        ),
    ]
}

/// What a panic said.
fn message(panic: Box<dyn std::any::Any + Send>) -> String {
    let text = (panic.downcast_ref::<String>().cloned())
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic without a message".into());
    text.lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(120)
        .collect()
}

/// Each model's cost in one precision, or why it could not run: every model first runs once at
/// batch 1 and at the batch (drawing lazily initialised weights), and those that fail are left
/// out of the timed rounds.
fn timed(
    models: &[&dyn EnsembleModel],
    sample: &Input,
    batch: usize,
    rounds: usize,
) -> Vec<Result<Cost, String>> {
    let probes: Vec<Result<(), String>> = (models.iter())
        .map(|m| {
            catch_unwind(AssertUnwindSafe(|| {
                let _ = m.member_logits(sample.clone().narrow(0, 1)).into_data();
                let _ = m.member_logits(sample.clone()).into_data();
            }))
            .map_err(message)
        })
        .collect();
    let running: Vec<&dyn EnsembleModel> = (models.iter().zip(&probes))
        .filter(|(_, p)| p.is_ok())
        .map(|(m, _)| *m)
        .collect();
    // Paired ratios to single when single itself runs.
    let baseline = probes[0].is_ok().then_some(0);
    let mut costs = experiment::eval::costs(&running, sample, batch, rounds, baseline).into_iter();
    (probes.into_iter())
        .map(|p| p.map(|()| costs.next().expect("a cost per running model")))
        .collect()
}

/// One table cell: median ms and its ratio to single.
fn cell(cost: &Result<Cost, String>, b1: bool) -> String {
    match cost {
        Ok(c) if b1 => format!(
            "{:.2} ({:.2}x)",
            c.latency_ms_b1,
            c.latency_b1_x_single.unwrap_or(f64::NAN)
        ),
        Ok(c) => format!(
            "{:.1} ({:.2}x)",
            c.latency_ms,
            c.latency_x_single.unwrap_or(f64::NAN)
        ),
        Err(why) => format!("not run: {}", why.replace('|', "/")),
    }
}

/// Reads the flags, times every method in every precision asked for, prints the table.
pub fn run(args: &[String]) {
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(String::as_str)
    };
    let number = |name: &str, default: usize| {
        flag(name).map_or(default, |v| {
            v.parse().unwrap_or_else(|_| panic!("{name} {v}"))
        })
    };
    let backend = flag("--backend").unwrap_or("flex");
    let model = flag("--model").unwrap_or("vit_b16");
    let (batch, rounds) = (number("--batch", 256), number("--rounds", 5));
    let dtypes: Vec<&str> =
        flag("--dtypes").map_or(vec!["f32", "bf16"], |d| d.split(',').collect());
    let device = (backend.parse::<runtime::Backend>())
        .and_then(|b| b.device())
        .unwrap_or_else(|e| panic!("{e}"));
    let vit = vit_config(model);
    let dims = [batch, vit.channels, vit.image_size, vit.image_size];
    let sample = Input::Images(Tensor::<4>::random(
        dims,
        Distribution::Normal(0.0, 1.0),
        &device,
    ));
    let rows = methods(&vit, &device);
    let mut columns = Vec::new();
    for dtype in &dtypes {
        let cast: Vec<Box<dyn EnsembleModel>> = match *dtype {
            "f32" => Vec::new(),
            "bf16" => rows
                .iter()
                .map(|(_, m)| m.in_precision(FloatDType::BF16))
                .collect(),
            other => panic!("--dtypes: {other} (expected f32 or bf16)"),
        };
        let models: Vec<&dyn EnsembleModel> = if cast.is_empty() {
            rows.iter().map(|(_, m)| m.as_ref()).collect()
        } else {
            cast.iter().map(|m| m.as_ref()).collect()
        };
        columns.push(timed(&models, &sample, batch, rounds));
    }
    println!(
        "\n{model} on `{backend}`, median latency in ms (ratio to single, paired by round), \
         {rounds} rounds\n"
    );
    let mut header = "| method | parameters (M) | GFLOPs / image |".to_string();
    for dtype in &dtypes {
        header += &format!(" {dtype}, batch 1 | {dtype}, batch {batch} |");
    }
    println!(
        "{header}\n|---|---:|---:|{}",
        "---|---|".repeat(dtypes.len())
    );
    for (i, (name, m)) in rows.iter().enumerate() {
        let mut line = format!(
            "| {name} | {:.2} | {:.2} |",
            m.num_params() as f64 / 1e6,
            m.flops_per_sample() as f64 / 1e9
        );
        for column in &columns {
            line += &format!(
                " {} | {} |",
                cell(&column[i], true),
                cell(&column[i], false)
            );
        }
        println!("{line}");
    }
}
