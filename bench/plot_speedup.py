#!/usr/bin/env python3
"""Plot the speedup of MPIX_Sparse_allreduce from osu_sparse_allreduce --json files.

    python3 bench/plot_speedup.py -o out.png a.json [b.json ...]

Panel 1: speedup against density (log x), one line per message size, from the run with the most
ranks. Panel 2: speedup against the number of ranks, one line per density, at the largest message
size all runs share (give one JSON file per rank count). Both panels draw a dashed line at 1.

Uses the standard library and gnuplot (Debian package gnuplot-nox), so it runs under any python3.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

METRICS = {
    "speedup": "speedup vs MPI_Allreduce",
    "speedup_vs_allgather": "speedup vs allgather of pairs",
}


def human_size(n):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d%s" % (n >> shift, unit)
    return "%d" % n


def load_runs(paths, metric):
    runs = []
    for path in paths:
        with open(path) as f:
            run = json.load(f)
        rows = [r for r in run.get("rows", []) if isinstance(r.get(metric), (int, float)) and r[metric] > 0]
        if not rows:
            sys.exit("%s: no rows with a positive '%s'" % (path, metric))
        if not run.get("complete", True):
            print("warning: %s is from a run that did not finish" % path, file=sys.stderr)
        run["path"] = path
        run["rows"] = rows
        runs.append(run)
    return runs


def describe(run):
    return "%s, %s, %s, block %s" % (run.get("variant", "?"), run.get("pattern", "?"), run.get("type", "?"),
                                     run.get("block_size", "?"))


def gnuplot_string(s):
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')


def write_series(directory, name, points):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        for x, y in sorted(points):
            f.write("%.17g %.17g\n" % (x, y))
    return path


# Enough distinct colours (with point shapes cycling beside them) for a full 4 B..64 MiB sweep.
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#000000", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5"]
POINT_TYPES = [7, 5, 9, 11, 13, 15]


def plot_command(series):
    """series: [(path, title)] -> one gnuplot plot command, with the dashed line at 1 first."""
    parts = ["1 with lines dt 2 lw 1.5 lc rgb 'black' notitle"]
    for i, (path, title) in enumerate(series):
        parts.append("%s using 1:2 with linespoints lw 1.5 pt %d ps 0.9 lc rgb '%s' title %s"
                     % (gnuplot_string(path), POINT_TYPES[i % len(POINT_TYPES)], COLOURS[i % len(COLOURS)],
                        gnuplot_string(title)))
    return "plot " + ", \\\n     ".join(parts)


def y_range(points, linear_y):
    """A y range holding every point and the line at 1, with a margin."""
    values = [y for _, y in points] + [1.0]
    lo, hi = min(values), max(values)
    if linear_y:
        pad = 0.08 * (hi - lo or 1.0)
        return "set yrange [%g:%g]" % (max(0.0, lo - pad), hi + pad)
    lo, hi = lo / 1.4, hi * 1.4
    # Log axes label only decades by default; label 1-2-3-5 steps so short ranges are readable.
    tics = [m * 10.0 ** e for e in range(-4, 5) for m in (1, 2, 3, 5) if lo <= m * 10.0 ** e <= hi]
    return "set yrange [%g:%g]\nset ytics (%s)" % (lo, hi, ", ".join('"%g" %g' % (t, t) for t in tics))


def build_script(runs, metric, output, linear_y, tmp):
    # Panel 1: the run with the most ranks.
    main_run = max(runs, key=lambda r: r.get("ranks", 0))
    same = [r["path"] for r in runs if r.get("ranks") == main_run.get("ranks") and r is not main_run]
    if same:
        print("note: panel 1 shows %s; %s have as many ranks" % (main_run["path"], ", ".join(same)),
              file=sys.stderr)
    by_size = {}
    skipped_zero = False
    for r in main_run["rows"]:
        if r["density"] <= 0:
            skipped_zero = True
            continue
        by_size.setdefault(r["size"], []).append((r["density"], r[metric]))
    if skipped_zero:
        print("note: density 0 is left out of panel 1 (log axis)", file=sys.stderr)
    panel1 = [(write_series(tmp, "size_%d.dat" % size, pts), human_size(size) + "B")
              for size, pts in sorted(by_size.items())]

    # Panel 2: the largest size every run measured.
    common = set.intersection(*({r["size"] for r in run["rows"]} for run in runs))
    if common:
        largest = max(common)
    else:
        largest = max(r["size"] for r in main_run["rows"])
        print("warning: no message size common to all files; panel 2 uses %d bytes where present" % largest,
              file=sys.stderr)
    by_density = {}
    for run in runs:
        for r in run["rows"]:
            if r["size"] == largest:
                by_density.setdefault(r["density"], []).append((run.get("ranks", 0), r[metric]))
    panel2 = [(write_series(tmp, "density_%d.dat" % i, pts), "density %g" % d)
              for i, (d, pts) in enumerate(sorted(by_density.items()))]
    rank_counts = sorted({run.get("ranks", 0) for run in runs})

    label = METRICS[metric]
    lines = [
        "set terminal pngcairo size 1500,600 enhanced font ',11'",
        "set output %s" % gnuplot_string(output),
        "set multiplot layout 1,2 title %s" % gnuplot_string(
            "MPIX\\_Sparse\\_allreduce " + label.replace("_", "\\_") + " (" + describe(main_run) + ")"),
        "set grid",
        "set key outside right top",
        "set ylabel %s" % gnuplot_string(label.replace("_", "\\_")),
        "" if linear_y else "set logscale y",
        # Panel 1
        "set logscale x",
        "set xlabel 'density (fraction of non-zero %s per rank)'"
        % ("elements" if main_run.get("variant") == "elements" else "blocks"),
        "set title %s" % gnuplot_string("speedup vs density, %s ranks" % main_run.get("ranks", "?")),
        y_range([p for pts in by_size.values() for p in pts], linear_y),
        plot_command(panel1),
        # Panel 2
        "unset logscale x",
        "set logscale x 2" if len(rank_counts) > 2 else "",
        "set xtics (%s)" % ", ".join('"%d" %d' % (p, p) for p in rank_counts),
        "set xrange [%g:%g]" % ((rank_counts[0] / 1.3, rank_counts[-1] * 1.3) if len(rank_counts) > 2
                                else (rank_counts[0] - 1, rank_counts[-1] + 1)),
        "set xlabel 'ranks'",
        "set title %s" % gnuplot_string("speedup vs ranks, %sB messages" % human_size(largest)),
        y_range([p for pts in by_density.values() for p in pts], linear_y),
        plot_command(panel2),
        "unset multiplot",
    ]
    return "\n".join(line for line in lines if line) + "\n"


def run_gnuplot(script):
    result = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    return result.returncode, result.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    parser.add_argument("--metric", choices=sorted(METRICS), default="speedup",
                        help="which speedup to plot (speedup_vs_allgather: --variant elements runs)")
    parser.add_argument("--linear-y", action="store_true", help="linear instead of logarithmic y axis")
    parser.add_argument("json", nargs="+", help="files written by osu_sparse_allreduce --json")
    args = parser.parse_args()

    if shutil.which("gnuplot") is None:
        sys.exit("gnuplot not found (Debian: apt-get install gnuplot-nox)")
    runs = load_runs(args.json, args.metric)
    with tempfile.TemporaryDirectory() as tmp:
        script = build_script(runs, args.metric, args.output, args.linear_y, tmp)
        rc, err = run_gnuplot(script)
        if rc != 0 and "pngcairo" in err:  # gnuplot built without cairo: libgd's png terminal
            rc, err = run_gnuplot(script.replace("set terminal pngcairo", "set terminal png", 1))
        if rc != 0:
            sys.exit("gnuplot failed:\n" + err)
        if err.strip():
            print(err.strip(), file=sys.stderr)
    print("wrote %s" % args.output)


if __name__ == "__main__":
    main()
