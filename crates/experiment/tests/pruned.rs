//! The `pruned` kind and methods built on other methods (`base = "<name>"`): a sweep's unpruned
//! point is the base model itself, a pruned model's cost is its physical form's, and a composed
//! method is built on its base method's model, its training cost the sum of both.

#[macro_use]
mod common;

use common::{bundled, serial};
use experiment::{ExperimentConfig, run};
use report::summary::MethodResult;

const BASE: &str = concat!(
    r#"
[experiment]
name = "pruned"
seeds = [1]

[data]
dataset = "fashion_mnist_small"
val_fraction = 0.1
ood = ["mnist_small"]
train_limit = 200
test_limit = 60
eval_batch_size = 32

"#,
    tiny_vit!(2),
    r#"
[train]
epochs = 1
batch_size = 50
"#
);

const METHODS: &str = r#"
[[method]]
kind = "single"

[[method]]
kind = "pruned"
name = "pruned_neurons"
criterion = "wanda"
unit = "neuron"
ratio = 0.25
sweep = [0.0, 0.5]
calibration_samples = 16

[[method]]
kind = "pruned"
name = "pruned_attention"
criterion = "taylor"
unit = "attention"
ratio = 0.5
calibration_samples = 16

[[method]]
kind = "hydra"
members = 2
keep = 1
calibration_samples = 16
train = { epochs = 0 }

[[method]]
kind = "hydra"
name = "hydra_on_pruned"
base = "pruned_neurons"
members = 2
keep = 1
calibration_samples = 16
train = { epochs = 0 }

[[method]]
kind = "lora_ensemble"
name = "lora_on_pruned"
base = "pruned_neurons"
members = 2
rank = 2
"#;

fn result<'a>(methods: &'a [MethodResult], name: &str) -> &'a MethodResult {
    methods.iter().find(|m| m.name == name).unwrap()
}

#[test]
fn pruned_models_and_methods_built_on_them() {
    let _rng = serial();
    let config = ExperimentConfig::parse(&format!("{BASE}{METHODS}")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = run(&config, &bundled(dir.path())).unwrap();
    let methods = &out.summary.methods;
    let single = result(methods, "single");

    // The sweep's point at ratio 0 removes nothing: the base model itself, every metric equal.
    let sweep = std::fs::read_to_string(out.dir.join("pruned_neurons-seed1-pruned.csv")).unwrap();
    let mut rows = sweep.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    assert_eq!(
        &header[..4],
        ["params_kept", "flops_kept", "ratio", "clean_acc"]
    );
    let row = |line: &str| -> Vec<f64> { line.split(',').map(|v| v.parse().unwrap()).collect() };
    let (none, half) = (row(rows.next().unwrap()), row(rows.next().unwrap()));
    assert_eq!((none[0], none[1]), (1.0, 1.0));
    assert_eq!(none[3], single.id.accuracy);
    assert!(half[0] < 1.0 && half[1] < 1.0, "{half:?}");

    // Neurons go physically: the evaluated model is smaller, and the sweep's share at the
    // method's own ratio sits between the unpruned and the halved model.
    let neurons = result(methods, "pruned_neurons");
    assert!(neurons.cost.params < single.cost.params);
    assert!(neurons.cost.flops < single.cost.flops);
    // An attention branch goes through its gate; its cost is the physical form's.
    let attention = result(methods, "pruned_attention");
    assert!(attention.cost.params < single.cost.params);
    assert!(attention.cost.flops < single.cost.flops);

    // Hydra on the pruned model: its members come from the smaller model.
    let (hydra, on_pruned) = (result(methods, "hydra"), result(methods, "hydra_on_pruned"));
    assert!(on_pruned.cost.params < hydra.cost.params);
    assert!(on_pruned.cost.flops < hydra.cost.flops);
    // Training costs compose: the base model's, then nothing more (no fine-tune, no scoring
    // counted as training); LoRA adds its adapters' training to the pruned model's.
    let cost = |m: &MethodResult| m.train_cost.unwrap();
    assert_eq!(cost(on_pruned), cost(neurons));
    assert_eq!(cost(neurons), cost(single));
    let lora = cost(result(methods, "lora_on_pruned"));
    assert_eq!(lora.trainings, cost(single).trainings + 1);
    assert!(lora.steps > cost(single).steps);
}

#[test]
fn bases_that_cannot_be_built_on_are_refused_naming_both_methods() {
    let refused = |methods: &str| {
        let text = format!("{BASE}\n[[method]]\nkind = \"single\"\n{methods}");
        data::error_chain(&ExperimentConfig::parse(&text).unwrap_err())
    };
    let pruned = "[[method]]\nkind = \"pruned\"\nname = \"p\"\nunit = \"head\"\nratio = 0.5\n";
    let hydra_on = |base: &str| {
        format!("[[method]]\nkind = \"hydra\"\nname = \"h\"\nbase = \"{base}\"\nmembers = 2\n")
    };
    let err = refused(&format!("{pruned}{}", hydra_on("q")));
    assert!(
        err.contains("method `h`: base = \"q\": no [[method]] has that name"),
        "{err}"
    );
    // Declared after: a circle could form, so the base must come first.
    let err = refused(&format!("{}{pruned}", hydra_on("p")));
    assert!(
        err.contains("method `p` is not declared before `h`"),
        "{err}"
    );
    let gated = pruned.replace("\"head\"", "\"gelu\"");
    let err = refused(&format!("{gated}{}", hydra_on("p")));
    assert!(
        err.contains("method `p` (kind `pruned`) cannot be built on: its gelu units"),
        "{err}"
    );
    let err = refused(&format!(
        "{pruned}[[method]]\nkind = \"mimo\"\nname = \"m\"\nbase = \"p\"\nmembers = 2\n"
    ));
    assert!(
        err.contains("method `m` (kind `mimo`) cannot be built on another method's model"),
        "{err}"
    );
    let err = refused("[[method]]\nkind = \"pruned\"\nname = \"p\"\nunit = \"head\"\n");
    assert!(err.contains("give `ratio`"), "{err}");
    let err = refused(
        "[[method]]\nkind = \"pruned\"\nunit = \"neuron\"\ncriterion = \"confidence\"\nratio = 0.5\n",
    );
    assert!(
        err.contains("criterion \"confidence\" does not score neuron units: it scores head"),
        "{err}"
    );
    let latency = |unit: &str, keep: &str| {
        format!(
            "[[method]]\nkind = \"pruned\"\nunit = \"{unit}\"\nbudget = {{ latency = {keep} }}\n"
        )
    };
    let err = refused(&latency("gelu", "0.8"));
    assert!(
        err.contains("budget.latency = 0.8 with unit = \"gelu\"") && err.contains("saves no time"),
        "{err}"
    );
    let err = refused(&latency("head", "0"));
    assert!(err.contains("a share in (0, 1]"), "{err}");
    let both =
        "[[method]]\nkind = \"pruned\"\nunit = \"head\"\nbudget = { flops = 0.8, latency = 0.8 }\n";
    assert!(refused(both).contains("exactly one of `params`, `flops` and `latency`"));
    assert!(ExperimentConfig::parse(&format!("{BASE}{}", latency("block", "0.8"))).is_ok());
    let err = refused("[[method]]\nkind = \"pruned\"\nunit = \"layer\"\nratio = 0.5\n");
    assert!(err.contains("`layer`") && err.contains("neuron"), "{err}");
}
