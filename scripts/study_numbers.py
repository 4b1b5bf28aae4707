#!/usr/bin/env python3
"""Prints the numbers docs/findings.md quotes, read from a study run's folder.

Usage: scripts/study_numbers.py RUN_DIR [RUN_DIR ...]

A run folder of `uqformer run` or `uqformer compare` (a study run in parts, joined); with several,
each one's decisions are printed (e.g. the same study compared against other references).

Means over seeds, paired differences by seed with a 95% t-interval (the report's own
comparisons use the same), Hydra's pruning analysis and HetDPT's choices. Standard library only.
"""
import csv
import glob
import json
import math
import os
import statistics
import sys
import tomllib

# Two-sided 95% t quantiles by degrees of freedom (seeds - 1).
T95 = dict(zip(range(1, 31), [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
]))


def t_interval(d):
    """Mean and paired 95% t-interval of the per-seed differences `d` (nan bounds for one seed)."""
    mean = statistics.mean(d)
    half = T95[len(d) - 1] * statistics.stdev(d) / math.sqrt(len(d)) if len(d) > 1 else float("nan")
    return mean, mean - half, mean + half


HEADLINE = ("id.accuracy", "id.nll", "id.ece", "ood.mean.auroc", "shift.mean.nll", "shift.mean.ece")


def decisions(run):
    """The report's decisions for the headline metrics: each method against the run's reference."""
    summary = json.load(open(os.path.join(run, "summary.json")))
    comparisons = summary.get("comparisons", [])
    if not comparisons:
        return
    sets = {c["metric"] for c in comparisons if c["metric"].startswith("ood.") and c["metric"].endswith(".auroc")}
    headline = [m if m != "ood.mean.auroc" or m in sets else next(iter(sorted(sets)), m) for m in HEADLINE]
    print(f"\n## decisions against `{comparisons[0]['reference']}` ({run}): "
          "mean diff [95% CI] raw verdict / Holm verdict (margin; detectable at these seeds; seeds needed)")
    for c in comparisons:
        if c["metric"] not in headline:
            continue
        d = c.get("decision", {})
        scale = 100 if c["metric"].endswith(("accuracy", "auroc")) else 1
        p = 2 if scale == 100 else 4
        # One seed has no interval: summary.json writes null there.
        low, high = (float("nan") if c[k] is None else c[k] for k in ("ci_low", "ci_high"))
        print(
            f"{c['method']:17} {c['metric']:16} {scale * c['mean_diff']:+.{p}f} "
            f"[{scale * low:+.{p}f}, {scale * high:+.{p}f}] "
            f"{d.get('verdict')} / {d.get('verdict_holm')} "
            f"(margin {scale * d.get('margin', float('nan')):.{p}f}; "
            f"detectable {scale * (d.get('detectable') or float('nan')):.{p}f}; "
            f"seeds {d.get('seeds_needed')}) n={c['n_seeds']}"
        )
    verdicts = {}
    for c in comparisons:
        d = c.get("decision", {})
        for key in ("verdict", "verdict_holm"):
            verdicts.setdefault(key, {}).setdefault(d.get(key), 0)
            verdicts[key][d.get(key)] += 1
    print("all comparisons:", verdicts)


def method_files(run, pattern):
    """A run's method files; for a `uqformer compare` folder, those of the runs it joined."""
    found = sorted(glob.glob(os.path.join(run, pattern)))
    record = os.path.join(run, "config.toml")
    if not found and open(record).readline().startswith("# uqformer compare"):
        runs = tomllib.load(open(record, "rb"))["runs"]
        found = sorted(f for r in runs for f in glob.glob(os.path.join(r, pattern)))
    return found


def main(run):
    summary = json.load(open(os.path.join(run, "summary.json")))
    by = {}
    for m in summary["methods"]:
        by.setdefault(m["name"], {})[m["seed"]] = m
    seeds = summary["seeds"]

    def get(m, path):
        v = m
        for k in path.split("."):
            v = v[k]
        return v

    def shift(m, key):
        vals = [s[key] for s in m["shift"].values()] if isinstance(m["shift"], dict) else [s[key] for s in m["shift"]]
        # A study without shifted sets (text) has none to average.
        return statistics.mean(vals) if vals else float("nan")

    def auroc(m):
        return statistics.mean(o["auroc"] for o in m["ood"].values())

    metrics = {
        "acc": lambda m: 100 * m["id"]["accuracy"],
        "nll": lambda m: m["id"]["nll"],
        "ece": lambda m: m["id"]["ece"],
        "auroc": lambda m: 100 * auroc(m),
        "shift_nll": lambda m: shift(m, "nll"),
        "shift_ece": lambda m: shift(m, "ece"),
    }
    single = by["single"]

    # Latency ratios paired by timing round where the run has them (cost.latency_x_single,
    # cost.latency_b1_x_single), otherwise per-seed ratios of the medians; mean over seeds.
    paired_key = {"latency_ms": "latency_x_single", "latency_ms_b1": "latency_b1_x_single"}

    def ratio(name, key):
        def one(s):
            cost = by[name][s]["cost"]
            if cost.get(paired_key.get(key)) is not None:
                return cost[paired_key[key]]
            return cost[key] / single[s]["cost"][key]

        return statistics.mean(one(s) for s in seeds)

    print("## overview (means over seeds)")
    print("method acc nll ece auroc shift_nll | lat256x lat1x params_x samples_x | wall_s")
    for name, runs in by.items():
        row = [statistics.mean(f(runs[s]) for s in seeds) for f in metrics.values()]
        tc = [runs[s].get("train_cost") or {} for s in seeds]
        samples = statistics.mean(
            (t.get("samples", 0) / (single[s].get("train_cost") or {}).get("samples", 1)) for t, s in zip(tc, seeds)
        )
        wall = statistics.mean(t.get("wall_seconds", 0) for t in tc)
        print(
            f"{name:17} {row[0]:6.2f} {row[1]:.4f} {row[2]:.4f} {row[3]:6.2f} {row[4]:.4f} | "
            f"{ratio(name, 'latency_ms'):5.2f} {ratio(name, 'latency_ms_b1'):5.2f} "
            f"{ratio(name, 'params'):4.2f} {samples:4.2f} | {wall:6.1f}"
        )

    def paired(a, b, f):
        d = [f(by[a][s]) - f(by[b][s]) for s in seeds]
        if any(math.isnan(x) for x in d):
            return (float("nan"),) * 3
        return t_interval(d)

    pairs = [
        ("hydra_taylor", "deep_ensemble"),
        ("hydra_circuit", "deep_ensemble"),
        ("hydra_taylor", "single"),
        ("lora_ensemble", "deep_ensemble"),
        ("hetdpt", "single"),
        ("single+ts", "deep_ensemble"),
        ("batch_ensemble", "deep_ensemble"),
        ("packed_ensemble", "deep_ensemble"),
        ("mimo", "deep_ensemble"),
        ("mc_dropout", "single"),
    ]
    print("\n## paired differences (mean [95% CI])")
    for a, b in pairs:
        if a not in by or b not in by:
            continue
        cells = []
        for key, f in metrics.items():
            m, lo, hi = paired(a, b, f)
            p = 2 if key in ("acc", "auroc") else 3
            cells.append(f"{key} {m:+.{p}f} [{lo:+.{p}f}, {hi:+.{p}f}]")
        print(f"{a} - {b}: " + "; ".join(cells))

    print("\n## diversity (test set, means over seeds)")
    for name, runs in by.items():
        d = [runs[s].get("diversity") for s in seeds]
        if all(d):
            keys = ("disagreement", "mutual_info", "ensemble_gain", "member_accuracy")
            print(name, {k: round(statistics.mean(x[k] for x in d), 4) for k in keys})

    print("\n## conformal")
    for name, runs in by.items():
        c = [runs[s].get("conformal") for s in seeds]
        if all(c):
            cov = [x["coverage"] for x in c]
            size = [x["set_size"] for x in c]
            print(f"{name:17} coverage {min(cov):.3f}-{max(cov):.3f} size {statistics.mean(size):.3f}")

    scores = summary.get("ood_scores", [])
    if scores:
        print("\n## OOD AUROC by score (means over seeds and OOD sets; feature detectors per member)")

        def by_score(score):
            return lambda m: 100 * statistics.mean(o["auroc"] for o in m["ood_scores"][score].values())

        print("method " + " ".join(scores))
        for name, runs in by.items():
            cells = [statistics.mean(by_score(sc)(runs[s]) for s in seeds) for sc in scores]
            print(f"{name:17} " + " ".join(f"{c:6.2f}" for c in cells))
        features = [sc for sc in scores if sc in ("mahalanobis", "relative_mahalanobis", "vim", "knn")]
        if features and "single" in by:
            # The single model's best detector, chosen by its mean over seeds.
            best = max(features, key=lambda sc: statistics.mean(by_score(sc)(single[s]) for s in seeds))
            print(f"single's best feature detector: {best}")
            print("method - single with its best detector, OOD AUROC (mean [95% CI]): "
                  "the method's own msp, and its own best score")
            for name in by:
                if name == "single" or "+" in name:
                    continue
                own_best = max(scores, key=lambda sc: statistics.mean(by_score(sc)(by[name][s]) for s in seeds))
                cells = []
                for label, sc in (("msp", "msp"), (f"best={own_best}", own_best)):
                    d = [by_score(sc)(by[name][s]) - by_score(best)(single[s]) for s in seeds]
                    mean, low, high = t_interval(d)
                    cells.append(f"{label} {mean:+.2f} [{low:+.2f}, {high:+.2f}]")
                print(f"  {name:17} " + "; ".join(cells))

    print("\n## hydra_taylor pruning (means over seeds; shift = mean over corruptions)")
    rows = {}
    for path in sorted(method_files(run, "hydra_taylor-seed*-pruning.csv")):
        for r in csv.DictReader(open(path)):
            rows.setdefault(float(r["ratio"]), []).append(r)
    base = rows.get(0.0, [])

    def col(r, suffix):
        return statistics.mean(float(v) for k, v in r.items() if k.endswith(suffix) and not k.startswith("clean") and "auroc" not in k and "confidence" not in k)

    for ratio_, rs in sorted(rows.items()) if base else []:
        d = lambda f: statistics.mean(f(r) - f(b) for r, b in zip(rs, base))
        dd = [(col(r, "_nll") - col(b, "_nll")) - (float(r["clean_nll"]) - float(b["clean_nll"])) for r, b in zip(rs, base)]
        mean = statistics.mean(dd)
        half = T95[len(dd) - 1] * statistics.stdev(dd) / math.sqrt(len(dd))
        print(
            f"{ratio_:.1f} acc {100 * statistics.mean(float(r['clean_acc']) for r in rs):.2f} "
            f"dNLL clean {d(lambda r: float(r['clean_nll'])):+.3f} shift {d(lambda r: col(r, '_nll')):+.3f} "
            f"dECE clean {d(lambda r: float(r['clean_ece'])):+.3f} shift {d(lambda r: col(r, '_ece')):+.3f} "
            f"dAUROC {100 * d(lambda r: statistics.mean(float(v) for k, v in r.items() if k.endswith('_auroc'))):+.1f} "
            f"| shift-clean dNLL {mean:+.3f} [{mean - half:+.3f}, {mean + half:+.3f}]"
        )

    print("\n## hetdpt")
    for path in sorted(method_files(run, "hetdpt-seed*-hetdpt.json")):
        h = json.load(open(path))
        c = h["choice"]
        fit = h["fit"]
        print(
            os.path.basename(path),
            f"chose ({c['n_attn']}, {c['n_act']}) measured_point={c['measured_point']} predicted {100 * c['predicted_accuracy']:.1f} "
            f"speedup {c['speedup']:.2f} searched {c['searched']} checked {len(c['checked'])}",
            "checked:", [(k["n_attn"], k["n_act"], round(k["flop_speedup"], 2), round(k["speedup"], 2)) for k in c["checked"]],
            "fit:", {k: v for k, v in fit.items() if not isinstance(v, list)},
        )
        print("  points measured:", sorted({(p["n_attn"], p["n_act"]) for p in h["points"]}),
              "added by the search:", [(p["n_attn"], p["n_act"]) for p in h["points"] if p.get("added_by_search")])
        print("  final:", {k: h[k] for k in ("pruned", "speedup", "achieved_speedup", "budget_met", "prediction_cap", "training") if k in h})

    print("\n## hydra selection (per seed: whole-set top-keep share per member, own criterion / Taylor; mean Jaccard)")
    for name, runs in by.items():
        if "+" in name or "topk_share_whole" not in next(iter(runs.values())).get("extra", {}):
            continue
        for s in seeds:
            e = runs[s]["extra"]
            print(f"{name:17} seed {s}: whole {[round(x, 2) for x in e['topk_share_whole']]} "
                  f"taylor {[round(x, 2) for x in e['topk_share_taylor']]} jaccard {e['head_jaccard_mean']:.3f}")


if __name__ == "__main__":
    main(sys.argv[1])
    for run in sys.argv[1:]:
        decisions(run)
