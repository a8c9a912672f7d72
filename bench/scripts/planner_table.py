#!/usr/bin/env python3
"""The planner against the best forced algorithm (issue #13), from JSON written by
osu_sparse_allreduce --forced (bench/scripts/cluster_planner.sh): per size and density, what auto
chose and its time over the fastest forced algorithm's, measured in the same run, call by call
(<= 1.10 is within the 10% the issue asks for). Usage: planner_table.py RUN.json [RUN.json...]
(rows of several files are merged; a row in several files: the median of its ratios). A last line
judges the choice alone: the forced time of the algorithms auto ran over the fastest forced (each
algorithm's forced time weighted by the timed calls auto ran it, where the JSON counts them,
auto_calls_*; else the algorithm of auto's last call); another the cost of choosing: auto's time
over that forced time. Where the JSON has each timed call's time (forced_*_calls_us and
auto_call_algorithms, from 2026-12-07), a last line per cell pools the calls of all runs and puts
a bootstrap interval around the choice's ratio, so a cell outside 10% is told apart from one whose
difference the calls' own noise could make."""
import json
import random
import statistics
import sys


ALGORITHMS = ("dense", "aggregator", "allgather")


def calls_of(r):
    """Timed calls of auto per algorithm, or None where the run did not count them."""
    if not all(f"auto_calls_{a}" in r for a in ALGORITHMS):
        return None
    calls = {a: r[f"auto_calls_{a}"] for a in ALGORITHMS}
    return calls if sum(calls.values()) > 0 else None


def chosen_name(r):
    """What auto ran most in the timed calls (with its share), else the algorithm of its last call."""
    calls = calls_of(r)
    if calls is None:
        return r["algorithm_name"]
    top = max(ALGORITHMS, key=lambda a: calls[a])
    total = sum(calls.values())
    return top if calls[top] == total else f"{top} {calls[top]}/{total}"


def chosen_forced_us(r):
    """The forced time of auto's choices: weighted by its timed calls, else its last call's."""
    calls = calls_of(r)
    if calls is None:
        return r[f"forced_{r['algorithm_name']}_avg_us"] if f"forced_{r['algorithm_name']}_avg_us" in r else None
    return sum(n * r[f"forced_{a}_avg_us"] for a, n in calls.items()) / sum(calls.values())


def call_pairs(r):
    """Per timed iteration: (algorithm auto ran, {algorithm: its forced call's time}), or None."""
    names = r.get("auto_call_algorithms")
    forced = {a: r.get(f"forced_{a}_calls_us") for a in ALGORITHMS}
    if not names or any(v is None or len(v) != len(names) for v in forced.values()):
        return None
    return [(n, {a: forced[a][i] for a in ALGORITHMS}) for i, n in enumerate(names) if n in ALGORITHMS]


def choice_ratio(pairs):
    """The forced time of what auto ran, call by call, over the fastest forced algorithm's in the
    same iterations (the fastest by its mean over them)."""
    best = min(ALGORITHMS, key=lambda a: sum(p[1][a] for p in pairs))
    return sum(times[n] for n, times in pairs) / sum(times[best] for _, times in pairs)


def choice_interval(pairs, rounds=2000, seed=1):
    """The choice's ratio with a 90% bootstrap interval: iterations drawn again with replacement,
    the fastest chosen anew in each draw (seeded: the same table on every run)."""
    rng = random.Random(seed)
    draws = sorted(choice_ratio([pairs[rng.randrange(len(pairs))] for _ in pairs]) for _ in range(rounds))
    return choice_ratio(pairs), draws[int(0.05 * rounds)], draws[int(0.95 * rounds) - 1]


def main(paths):
    runs = [{(r["size"], r["density"]): r for r in json.load(open(p))["rows"]} for p in paths]
    keys = sorted(set().union(*runs))
    sizes = sorted({k[0] for k in keys})
    densities = sorted({k[1] for k in keys})
    print("auto's choice, auto / fastest forced (the fastest forced)" +
          "\n")
    print("| size | " + " | ".join(f"{x * 100:g}%" for x in densities) + " |")
    print("|---|" + "---|" * len(densities))
    ratios = []
    for s in sizes:
        cells = []
        for x in densities:
            rows = [r[(s, x)] for r in runs if (s, x) in r]
            if not rows:
                cells.append("-")
                continue
            ratio = statistics.median(r["auto_over_best"] for r in rows)
            ratios.append(ratio)
            chose = "/".join(sorted({chosen_name(r) for r in rows}))
            best = "/".join(sorted({r["best_forced"] for r in rows}))
            valid = all(r.get("valid", False) for r in rows)
            mark = "**" if ratio > 1.10 else ""
            cells.append(f"{chose} {mark}{ratio:.2f}{mark} ({best})" + ("" if valid else " INVALID"))
        print(f"| {s // 1048576} MiB | " + " | ".join(cells) + " |")
    within = sum(r <= 1.10 for r in ratios)
    print(f"\nwithin 10%: {within} of {len(ratios)}; worst {max(ratios):.2f}, median {statistics.median(ratios):.2f}")
    # The choice alone: the forced time of what auto ran over the fastest forced, so the spread
    # between two communicators running the same algorithm drops out.
    chosen, per_cell, twin = [], {}, []
    for k in keys:
        for r in (run[k] for run in runs if k in run):
            forced = chosen_forced_us(r)
            if forced is not None:
                best = min(r[f"forced_{a}_avg_us"] for a in ALGORITHMS)
                chosen.append(forced / best)
                twin.append(r["sparse_avg_us"] / forced)
                per_cell.setdefault(k, []).append(chosen[-1])
    if chosen:
        print(f"choice within 10% (the forced time of what auto ran, by its timed calls where counted, over the "
              f"fastest forced): "
              f"{sum(c <= 1.10 for c in chosen)} of {len(chosen)}; worst {max(chosen):.2f}, "
              f"median {statistics.median(chosen):.2f}")
        # What learning costs on top of the choice: auto's calls include the ones that measure the
        # other algorithms, so auto over its own algorithm forced (its twin) is above 1 by that cost.
        print(f"auto / its algorithm forced: median {statistics.median(twin):.2f}, "
              f"mean {statistics.mean(twin):.2f}, above 1.10 in {sum(t > 1.10 for t in twin)} of {len(twin)}")
    if any(len(v) > 1 for v in per_cell.values()):
        # With repeated runs, each cell's median choice ratio: a cell whose fastest algorithm flips
        # from run to run is judged on its typical run, not on its worst.
        med = {k: statistics.median(v) for k, v in per_cell.items()}
        misses = ", ".join(f"{k[0] // 1048576} MiB {k[1] * 100:g}% {m:.2f}" for k, m in sorted(med.items())
                           if m > 1.10)
        print(f"choice within 10%, median per cell over runs: {sum(m <= 1.10 for m in med.values())} of "
              f"{len(med)}" + (f"; outside: {misses}" if misses else ""))
    pooled = {}
    for k in keys:
        for r in (run[k] for run in runs if k in run):
            pairs = call_pairs(r)
            if pairs:
                pooled.setdefault(k, []).extend(pairs)
    if pooled:
        # A cell outside 10% whose interval reaches down to 1.10 could be a draw of the calls' noise;
        # one whose interval lies above 1.10 is a wrong choice.
        judged = {k: choice_interval(v) for k, v in pooled.items()}
        def listed(cells):
            return ", ".join(f"{k[0] // 1048576} MiB {k[1] * 100:g}% {r:.2f} [{lo:.2f}, {hi:.2f}] ({len(pooled[k])} calls)"
                             for k, (r, lo, hi) in sorted(cells.items()))
        outside = {k: v for k, v in judged.items() if v[0] > 1.10}
        beyond = {k: v for k, v in outside.items() if v[1] > 1.10}
        noise = {k: v for k, v in outside.items() if v[1] <= 1.10}
        print(f"choice within 10%, each cell's calls of all runs in pairs: {len(judged) - len(outside)} of {len(judged)}; "
              f"outside beyond the noise (90% interval above 1.10): {len(beyond)}"
              + (f" ({listed(beyond)})" if beyond else "")
              + f"; outside within it: {len(noise)}" + (f" ({listed(noise)})" if noise else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
