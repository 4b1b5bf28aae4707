//! Every experiment file under `experiments/papers/` on a small stand-in of its own families:
//! the file as written, its paths pointed at generated data and the importers' random
//! checkpoints, its sizes cut down (seeds, epochs, members, image side) and the CPU backend; it
//! must validate, plan its jobs and run end to end, so that none of them can rot.

mod common;

use std::path::{Path, PathBuf};

use common::{image_trees, options};
use experiment::estimate::{DeviceSpec, Precision, estimate};
use experiment::plan::plan;
use experiment::{ExperimentConfig, run};
use toml::{Table, Value};

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../importers/tests/fixtures")
        .join(path)
}

/// The stand-ins of a run's paths, written under `dir`.
struct StandIns {
    images: PathBuf,
    ood_images: PathBuf,
    cifar100: PathBuf,
    train_tsv: PathBuf,
    dev_tsv: PathBuf,
    ood_csv: PathBuf,
    bert: PathBuf,
    /// The class names of `images` for a zero-shot classifier, one a line.
    classes: PathBuf,
}

fn stand_ins(dir: &Path) -> StandIns {
    let (images, ood_images) = image_trees(dir);
    // CIFAR-100's binary files: coarse label, fine label, 3,072 channel-major bytes per image.
    let cifar100 = dir.join("cifar-100-binary");
    std::fs::create_dir_all(&cifar100).unwrap();
    for (file, n) in [("train.bin", 24u8), ("test.bin", 9)] {
        let records: Vec<u8> = (0..n)
            .flat_map(|i| {
                let label = i % 3;
                let mut record = vec![0, label];
                record.extend((0..3072u32).map(|p| ((p / 1024) as u8 == label) as u8 * 200 + i));
                record
            })
            .collect();
        std::fs::write(cifar100.join(file), records).unwrap();
    }
    let names: String = (0..100).map(|i| format!("class_{i}\n")).collect();
    std::fs::write(cifar100.join("fine_label_names.txt"), names).unwrap();
    let rows = |n: usize| -> String {
        let words = ["good", "bad", "fine", "awful", "great", "dull"];
        (0..n)
            .map(|i| format!("{} {} film\t{}\n", words[i % 6], words[(i + 1) % 6], i % 2))
            .collect()
    };
    let (train_tsv, dev_tsv) = (dir.join("train.tsv"), dir.join("dev.tsv"));
    std::fs::write(&train_tsv, format!("sentence\tlabel\n{}", rows(24))).unwrap();
    std::fs::write(&dev_tsv, format!("sentence\tlabel\n{}", rows(8))).unwrap();
    let ood_csv = dir.join("ood.csv");
    let weather: String = (0..8).map(|i| format!("rain on day {i},0\n")).collect();
    std::fs::write(&ood_csv, format!("text,label\n{weather}")).unwrap();
    // The random BERT with a vocabulary of its size, as a checkpoint folder carries one.
    let bert = dir.join("bert");
    std::fs::create_dir_all(&bert).unwrap();
    for file in ["config.json", "model.safetensors"] {
        std::fs::copy(fixture("bert/bert_model").join(file), bert.join(file)).unwrap();
    }
    let special = [
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "good", "bad", "film",
    ];
    let vocab: Vec<String> = (special.iter().map(|s| s.to_string()))
        .chain((special.len()..100).map(|i| format!("w{i}")))
        .collect();
    std::fs::write(bert.join("vocab.txt"), vocab.join("\n") + "\n").unwrap();
    let classes = dir.join("classes.txt");
    std::fs::write(&classes, "a blue thing\na green thing\na red thing\n").unwrap();
    StandIns {
        images,
        ood_images,
        cifar100,
        train_tsv,
        dev_tsv,
        ood_csv,
        bert,
        classes,
    }
}

/// `table[section][key] = value` (the section made if the file has none).
fn set(table: &mut Table, section: &str, key: &str, value: impl Into<Value>) {
    let section = (table.entry(section))
        .or_insert_with(|| Table::new().into())
        .as_table_mut()
        .unwrap();
    section.insert(key.into(), value.into());
}

/// A path of the file replaced by its stand-in, by what the path names.
fn stand_in(path: &str, s: &StandIns) -> PathBuf {
    let pick = [
        ("classes", &s.classes),
        ("imagenet", &s.images),
        ("ood-images", &s.ood_images),
        ("cifar-100", &s.cifar100),
        ("train.tsv", &s.train_tsv),
        ("dev.tsv", &s.dev_tsv),
        ("ood-texts", &s.ood_csv),
        ("bert-base", &s.bert),
    ];
    let found = pick.iter().find(|(part, _)| path.contains(part));
    match found {
        Some((_, stand_in)) => stand_in.to_path_buf(),
        // A CLIP checkpoint (its path names ViT too): the random CLIP with its tokenizer (16x16
        // images, 4 heads a vision block).
        None if path.contains("clip") => fixture("clip/clip_tokenized"),
        // Every image checkpoint: the random ViT (16x16 images, 4 heads a block).
        None if path.contains("vit") || path.contains("deit") => fixture("vit/hf_vit_model"),
        None => panic!("no stand-in for {path}"),
    }
}

/// The paths of a data source table replaced by their stand-ins.
fn point(source: &mut Value, s: &StandIns) {
    let table = source.as_table_mut().unwrap();
    for key in ["path", "test"] {
        if let Some(Value::String(path)) = table.get(key) {
            let replaced = stand_in(path, s).display().to_string();
            table.insert(key.into(), replaced.into());
        }
    }
}

/// The file as written, at the stand-in's paths and sizes.
fn cut_down(text: &str, s: &StandIns) -> Table {
    let mut table: Table = text.parse().unwrap();
    set(&mut table, "experiment", "seeds", vec![Value::from(0)]);
    set(&mut table, "experiment", "backend", "flex");
    let data = table.get_mut("data").and_then(Value::as_table_mut).unwrap();
    point(data.get_mut("dataset").unwrap(), s);
    for ood in data
        .get_mut("ood")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        point(ood, s);
    }
    if data.contains_key("image_size") {
        data.insert("image_size".into(), 16.into());
    }
    data.insert("val_fraction".into(), 0.25.into());
    data.insert("eval_batch_size".into(), 16.into());
    let checkpoint = table["backbone"]["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    set(
        &mut table,
        "backbone",
        "checkpoint",
        stand_in(&checkpoint, s).display().to_string(),
    );
    let backbone = table["backbone"].as_table_mut().unwrap();
    if let Some(Value::Table(zero_shot)) = backbone.get_mut("zero_shot")
        && let Some(Value::String(path)) = zero_shot.get("classes_file")
    {
        let replaced = stand_in(path, s).display().to_string();
        zero_shot.insert("classes_file".into(), replaced.into());
    }
    set(&mut table, "train", "epochs", 1);
    set(&mut table, "train", "batch_size", 8);
    let cuts = [
        ("members", Value::from(2)),
        ("samples", 2.into()),
        ("keep", 2.into()),
        ("calibration_samples", 8.into()),
        ("map_images", 16.into()),
        ("finetune_epochs", 1.into()),
    ];
    let methods = table
        .get_mut("method")
        .and_then(Value::as_array_mut)
        .unwrap();
    for method in methods.iter_mut().map(|m| m.as_table_mut().unwrap()) {
        for (key, value) in &cuts {
            if method.contains_key(*key) {
                method.insert(key.to_string(), value.clone());
            }
        }
        if method["kind"].as_str() == Some("hetdpt") {
            // The random ViT has 3 blocks: a degree-2 predictor needs 3 values of each ratio.
            method.insert("max_attn".into(), 2.into());
            method.insert("max_act".into(), 2.into());
        }
        if let Some(Value::Table(params)) = method.get_mut("importance_params") {
            params.insert("samples".into(), 4.into());
        }
    }
    table
}

/// The plan's estimate on an H100: every job and every method's evaluation costs something,
/// a base model's training is 3 forwards of each training sample a epoch (a zero-shot one is
/// not trained), and the totals add up.
fn estimates_add_up(config: &ExperimentConfig, data: &Path, file: &Path) {
    let h100 = DeviceSpec::named("h100").unwrap();
    let e = estimate(config, data, h100, Precision::Bf16)
        .unwrap_or_else(|err| panic!("{}: {err}", file.display()));
    assert_eq!(e.jobs.len(), plan(config).len(), "{}", file.display());
    assert_eq!(e.evaluation.len(), config.methods.len());
    let base = e
        .jobs
        .iter()
        .find(|j| j.job.id.ends_with("base:0"))
        .unwrap();
    let per_epoch = 3.0 * e.flops_per_sample as f64 * e.train_samples as f64;
    match config.backbone.zero_shot {
        // Made from its prompts, never trained (tests/zero_shot.rs counts the prompts).
        Some(_) => assert!(base.job.what.contains("not trained") && base.job.cost == 0.0),
        None => assert_eq!(base.cost.flops, per_epoch * config.train.epochs as f64),
    }
    let costs = (e.jobs.iter().map(|j| &j.cost)).chain(e.evaluation.iter().map(|v| &v.cost));
    let mut total = 0.0;
    for cost in costs {
        assert!(
            cost.flops > 0.0 && cost.memory_bytes > 0,
            "{}",
            file.display()
        );
        assert!(!cost.over_memory, "{}: a stand-in fits", file.display());
        total += cost.flops;
    }
    assert!((e.total_flops / total - 1.0).abs() < 1e-12);
    assert_eq!(
        e.total_seconds,
        h100.seconds(e.total_flops, Precision::Bf16)
    );
}

#[test]
fn every_paper_experiment_validates_plans_and_runs_on_a_stand_in() {
    let papers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/papers");
    let mut files: Vec<PathBuf> = (std::fs::read_dir(&papers).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    for file in files {
        let dir = tempfile::tempdir().unwrap();
        let s = stand_ins(dir.path());
        let text = std::fs::read_to_string(&file).unwrap();
        let table = cut_down(&text, &s);
        let config = ExperimentConfig::parse(&toml::to_string(&table).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(!plan(&config).is_empty(), "{}", file.display());
        estimates_add_up(&config, dir.path(), &file);
        let out = run(&config, &options(dir.path(), dir.path()))
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let methods = &out.summary.methods;
        assert_eq!(methods.len(), config.methods.len(), "{}", file.display());
        for result in methods {
            assert!(
                result.id.nll.is_finite(),
                "{}: {}",
                file.display(),
                result.name
            );
        }
    }
}
