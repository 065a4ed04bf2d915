#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""report.py: the host side of the file benchmark (tools/bench/files-bench.sh).

    report.py --out DIR [--readme FILE] [--dispatch-log FILE]
              [--no-plots] [--title TEXT] [--note TEXT] LOG...

Parses the guest console logs (BENCH-* lines; anything else is ignored),
writes CSV files and PNG plots to DIR and a README (default DIR/README.md),
and prints one line per cell and per order comparison:

    bench cell device=D size=S best_fixed=N best_fixed_mbps=F
        adaptive_policy=P adaptive_pct_of_best=F pct_of_fio=F
    bench order device=hdd size=S fifo_mbps=F sorted_mbps=F

(each on one line).  Figures are means over a cell's runs; the adaptive
policy is the better of iopa and hillclimb by that mean; pct_of_fio is
that policy's mean over fio's best MB/s for the device and the file size
(nan without fio figures).  MB = 10^6 bytes.  Exit status 1, with a
message, if a log has no runs, a BENCH line is malformed, or a cell lacks
a fixed or an adaptive mode.
"""
import argparse
import csv
import math
import os
import re
import statistics
import sys

SIZES = ["10k", "100k", "1m"]
DEVICES = ["ssd", "hdd"]
POLICIES = ["iopa", "hillclimb"]
GOAL_PCT_OF_BEST = 95.0
GOAL_PCT_OF_FIO_1M = 90.0
GOAL_ORDER_RATIO_10K = 1.3
OUTLIER = 0.25      # a run this far (relative) from its group's median

LINE_RE = re.compile(r"(BENCH-(?:CONF|SET|FIO|RUN|TS|EVENT|DIR)) (.*)$")
DISPATCH_RE = re.compile(r"^bench dispatch (.*)$")
RUN_KEYS = ["device", "size", "kind", "run", "rid", "mode", "order", "files",
            "bytes", "secs", "mbps", "limit_final", "limit_mean"]


class ParseError(Exception):
    pass


def kv(text, where):
    """key=value words of text as a dict (words without '=' are skipped)."""
    out = {}
    for w in text.split():
        if "=" in w:
            k, v = w.split("=", 1)
            out[k] = v
    if not out:
        raise ParseError("%s: no key=value in %r" % (where, text))
    return out


def num(d, key, where, conv=float):
    try:
        return conv(d[key])
    except (KeyError, ValueError):
        raise ParseError("%s: bad or missing %s in %r" % (where, key, d))


def size_key(s):
    return SIZES.index(s) if s in SIZES else len(SIZES)


def dev_key(d):
    return DEVICES.index(d) if d in DEVICES else len(DEVICES)


def mode_key(m):
    if m.startswith("fixed:"):
        return (0, int(m[6:]))
    return (1, POLICIES.index(m[6:]) if m[6:] in POLICIES else 9)


class Data:
    def __init__(self):
        self.conf = []          # (device, dict or text)
        self.sets = []
        self.fio = []
        self.runs = []
        self.ts = {}            # rid -> list of tuples
        self.events = {}        # rid -> list of dicts
        self.dirs = {}          # rid -> dict (BENCH-DIR)
        self.dispatch = []

    def parse(self, path):
        nruns = len(self.runs)
        with open(path, errors="replace") as f:
            for lineno, raw in enumerate(f, 1):
                line = raw.rstrip("\n").rstrip("\r")
                where = "%s:%d" % (path, lineno)
                m = DISPATCH_RE.match(line)
                if m:
                    self.dispatch.append(kv(m.group(1), where))
                    continue
                m = LINE_RE.search(line)
                if not m:
                    continue
                tag, rest = m.group(1), m.group(2)
                if tag == "BENCH-TS":
                    self.parse_ts(rest, where)
                elif tag == "BENCH-RUN":
                    self.parse_run(rest, where)
                elif tag == "BENCH-FIO":
                    d = kv(rest, where)
                    self.fio.append({
                        "device": d.get("device", "?"),
                        "size": d.get("size", "?"),
                        "bs": num(d, "bs", where, int),
                        "qd": num(d, "qd", where, int),
                        "mbps": num(d, "mbps", where),
                        "iops": num(d, "iops", where),
                    })
                elif tag == "BENCH-DIR":
                    d = kv(rest, where)
                    if "rid" not in d:
                        raise ParseError("%s: BENCH-DIR without rid" % where)
                    for k in ("up_files", "down_files", "reversals"):
                        d[k] = num(d, k, where, int)
                    for k in ("up_secs", "down_secs"):
                        d[k] = num(d, k, where)
                    self.dirs[d["rid"]] = d
                elif tag == "BENCH-SET":
                    self.sets.append(kv(rest, where))
                elif tag == "BENCH-EVENT":
                    d = kv(rest, where)
                    if "rid" not in d:
                        raise ParseError("%s: event without rid" % where)
                    num(d, "t_ms", where, int)
                    self.events.setdefault(d["rid"], []).append(d)
                else:
                    dev = re.match(r"device=(\S+)\s*(.*)$", rest)
                    if not dev:
                        raise ParseError("%s: BENCH-CONF without device" % where)
                    self.conf.append((dev.group(1), dev.group(2)))
        if len(self.runs) == nruns:
            raise ParseError("%s: no BENCH-RUN lines" % path)

    def parse_run(self, rest, where):
        d = kv(rest, where)
        for k in RUN_KEYS:
            if k not in d:
                raise ParseError("%s: BENCH-RUN without %s" % (where, k))
        r = dict(d)
        for k in ("run", "files", "bytes"):
            r[k] = num(d, k, where, int)
        for k in ("secs", "mbps", "limit_mean"):
            r[k] = num(d, k, where)
        r["limit_final"] = num(d, "limit_final", where, int)
        if r["kind"] not in ("cell", "order", "compete"):
            raise ParseError("%s: unknown kind %s" % (where, r["kind"]))
        if not (r["mode"].startswith("fixed:") or
                r["mode"] in ("adapt:iopa", "adapt:hillclimb")):
            raise ParseError("%s: unknown mode %s" % (where, r["mode"]))
        if r["secs"] <= 0 or r["mbps"] < 0:
            raise ParseError("%s: impossible secs/mbps" % where)
        self.runs.append(r)

    def parse_ts(self, rest, where):
        w = rest.split()
        if len(w) != 8:
            raise ParseError("%s: BENCH-TS needs 8 fields: %r" % (where, rest))
        try:
            row = (int(w[1]), int(w[2]), int(w[3]), int(w[4]), w[5],
                   int(w[6]), int(w[7]))
        except ValueError:
            raise ParseError("%s: bad BENCH-TS %r" % (where, rest))
        self.ts.setdefault(w[0], []).append(row)


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def stdev(xs):
    return statistics.stdev(xs) if len(xs) > 1 else 0.0


def fmt(x, nd=3):
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) \
        else "%.*f" % (nd, x)


def analyse(data):
    """Cells, order comparisons, fio bests, compete runs."""
    res = {"cells": [], "modes": [], "order": [], "fio_best": {},
           "compete": [], "outliers": []}
    # Runs far from the median of their group (same device, size, kind,
    # mode, order; 3 runs or more): shown, not dropped (figures are means).
    og = {}
    for r in data.runs:
        og.setdefault((r["device"], r["size"], r["kind"], r["mode"],
                       r["order"]), []).append(r)
    for key, rs in og.items():
        if len(rs) < 3:
            continue
        med = statistics.median([r["mbps"] for r in rs])
        for r in rs:
            r["outlier"] = int(med > 0 and abs(r["mbps"] - med) > OUTLIER * med)
            if r["outlier"]:
                res["outliers"].append(dict(r, median=med))
    for f in data.fio:
        key = (f["device"], f["size"])
        if key not in res["fio_best"] or f["mbps"] > res["fio_best"][key][0]:
            res["fio_best"][key] = (f["mbps"], f["qd"])

    groups = {}
    for r in data.runs:
        if r["kind"] == "cell":
            groups.setdefault((r["device"], r["size"]), {}) \
                  .setdefault(r["mode"], []).append(r)
    for (dev, size) in sorted(groups, key=lambda k: (dev_key(k[0]),
                                                      size_key(k[1]))):
        modes = groups[(dev, size)]
        fixed = {m: v for m, v in modes.items() if m.startswith("fixed:")}
        adapt = {m: v for m, v in modes.items() if m.startswith("adapt:")}
        if not fixed or not adapt:
            raise ParseError("cell %s %s: needs fixed and adaptive runs, has %s"
                             % (dev, size, " ".join(sorted(modes))))
        fio = res["fio_best"].get((dev, size))
        means = {m: mean([r["mbps"] for r in v]) for m, v in modes.items()}
        best_fixed = max(fixed, key=lambda m: (means[m], -int(m[6:])))
        best_mbps = means[best_fixed]
        best_pol = max(adapt, key=lambda m: means[m])
        cell = {
            "device": dev, "size": size,
            "best_fixed": int(best_fixed[6:]), "best_fixed_mbps": best_mbps,
            "adaptive_policy": best_pol[6:],
            "adaptive_mbps": means[best_pol],
            "adaptive_pct_of_best": 100.0 * means[best_pol] / best_mbps
            if best_mbps > 0 else float("nan"),
            "pct_of_fio": 100.0 * means[best_pol] / fio[0]
            if fio and fio[0] > 0 else float("nan"),
            "best_fixed_pct_of_fio": 100.0 * best_mbps / fio[0]
            if fio and fio[0] > 0 else float("nan"),
            "fio_best_mbps": fio[0] if fio else float("nan"),
            "fio_best_qd": fio[1] if fio else "",
            "runs": min(len(v) for v in modes.values()),
        }
        for p in POLICIES:
            m = "adapt:" + p
            cell[p + "_mbps"] = means.get(m, float("nan"))
            cell[p + "_pct_of_best"] = 100.0 * means[m] / best_mbps \
                if m in means and best_mbps > 0 else float("nan")
            cell[p + "_limit_mean"] = mean([r["limit_mean"]
                                            for r in modes.get(m, [])])
        res["cells"].append(cell)
        for m in sorted(modes, key=mode_key):
            xs = [r["mbps"] for r in modes[m]]
            res["modes"].append({
                "device": dev, "size": size, "mode": m, "runs": len(xs),
                "mbps_mean": means[m], "mbps_stdev": stdev(xs),
                "mbps_min": min(xs), "mbps_max": max(xs),
                "limit_mean": mean([r["limit_mean"] for r in modes[m]]),
                "limit_final_mean": mean([r["limit_final"] for r in modes[m]]),
                "pct_of_best_fixed": 100.0 * means[m] / best_mbps
                if best_mbps > 0 else float("nan"),
                "pct_of_fio": 100.0 * means[m] / fio[0]
                if fio and fio[0] > 0 else float("nan"),
            })

    ogroups = {}
    for r in data.runs:
        if r["kind"] == "order":
            ogroups.setdefault((r["device"], r["size"], r["mode"]), {}) \
                   .setdefault(r["order"], []).append(r)
    for (dev, size, mode) in sorted(ogroups, key=lambda k: (
            dev_key(k[0]), size_key(k[1]), mode_key(k[2]))):
        o = ogroups[(dev, size, mode)]
        if "fifo" not in o or "sorted" not in o:
            raise ParseError("order %s %s %s: needs fifo and sorted runs"
                             % (dev, size, mode))
        fm = mean([r["mbps"] for r in o["fifo"]])
        sm = mean([r["mbps"] for r in o["sorted"]])
        dirs = [data.dirs[r["rid"]] for r in o["sorted"] if r["rid"] in data.dirs]
        sweep = {}
        if dirs:
            us = sum(d["up_secs"] for d in dirs)
            ds = sum(d["down_secs"] for d in dirs)
            sweep = {
                "sorted_up_files_per_s": sum(d["up_files"] for d in dirs) / us
                if us > 0 else float("nan"),
                "sorted_down_files_per_s": sum(d["down_files"] for d in dirs) / ds
                if ds > 0 else float("nan"),
                "sorted_down_time_pct": 100.0 * ds / (us + ds)
                if us + ds > 0 else float("nan"),
                "sorted_reversals": sum(d["reversals"] for d in dirs),
            }
        res["order"].append(dict(sweep, **{
            "device": dev, "size": size, "mode": mode,
            "runs": min(len(o["fifo"]), len(o["sorted"])),
            "fifo_mbps": fm, "sorted_mbps": sm,
            "fifo_stdev": stdev([r["mbps"] for r in o["fifo"]]),
            "sorted_stdev": stdev([r["mbps"] for r in o["sorted"]]),
            "ratio": sm / fm if fm > 0 else float("nan"),
            "sorted_exhausted": sum(r.get("stopped") == "done"
                                    for r in o["sorted"]),
        }))

    for r in data.runs:
        if r["kind"] != "compete":
            continue
        ev = {e.get("event"): e for e in data.events.get(r["rid"], [])}
        start = int(ev["compete-start"]["t_ms"]) if "compete-start" in ev \
            else None
        c = {"device": r["device"], "size": r["size"], "rid": r["rid"],
             "mode": r["mode"], "mbps": r["mbps"], "secs": r["secs"],
             "compete_start_ms": start if start is not None else "",
             "fio_mbps": ev.get("compete-end", {}).get("fio_mbps", ""),
             "fio_qd": ev.get("compete-start", {}).get("qd", "")}
        ts = data.ts.get(r["rid"], [])
        if start is not None and ts:
            for part, sel in (("before", lambda t: t < start),
                              ("after", lambda t: t >= start)):
                pts = [x for x in ts if sel(x[0]) and
                       x[0] <= r["secs"] * 1000 + 1]
                if len(pts) >= 2:
                    c["mbps_" + part] = (pts[-1][1] - pts[0][1]) / \
                        ((pts[-1][0] - pts[0][0]) / 1000.0) / 1e6
                    c["limit_mean_" + part] = mean([x[3] for x in pts])
        res["compete"].append(c)
    return res


def write_csv(path, rows, fields):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (fmt(v) if isinstance(v, float) else v)
                        for k, v in r.items()})


def write_csvs(out, data, res):
    write_csv(os.path.join(out, "runs.csv"), data.runs,
              ["device", "size", "kind", "run", "mode", "order", "files",
               "bytes", "secs", "mbps", "limit_final", "limit_mean",
               "limit_min", "limit_max", "stopped", "outlier", "rid"])
    write_csv(os.path.join(out, "cells.csv"), res["cells"],
              ["device", "size", "runs", "best_fixed", "best_fixed_mbps",
               "adaptive_policy", "adaptive_mbps", "adaptive_pct_of_best",
               "pct_of_fio", "best_fixed_pct_of_fio", "fio_best_mbps",
               "fio_best_qd", "iopa_mbps", "iopa_pct_of_best",
               "iopa_limit_mean", "hillclimb_mbps", "hillclimb_pct_of_best",
               "hillclimb_limit_mean"])
    write_csv(os.path.join(out, "modes.csv"), res["modes"],
              ["device", "size", "mode", "runs", "mbps_mean", "mbps_stdev",
               "mbps_min", "mbps_max", "limit_mean", "limit_final_mean",
               "pct_of_best_fixed", "pct_of_fio"])
    write_csv(os.path.join(out, "fio.csv"), data.fio,
              ["device", "size", "bs", "qd", "mbps", "iops"])
    write_csv(os.path.join(out, "order.csv"), res["order"],
              ["device", "size", "mode", "runs", "fifo_mbps", "fifo_stdev",
               "sorted_mbps", "sorted_stdev", "ratio", "sorted_exhausted",
               "sorted_up_files_per_s", "sorted_down_files_per_s",
               "sorted_down_time_pct", "sorted_reversals"])
    write_csv(os.path.join(out, "compete.csv"), res["compete"],
              ["device", "size", "mode", "mbps", "secs", "compete_start_ms",
               "mbps_before", "mbps_after", "limit_mean_before",
               "limit_mean_after", "fio_qd", "fio_mbps", "rid"])
    rows = []
    for rid in sorted(data.ts):
        prev = None
        for x in data.ts[rid]:
            mb = ""
            if prev and x[0] > prev[0]:
                mb = fmt((x[1] - prev[1]) / ((x[0] - prev[0]) / 1000.0) / 1e6)
            rows.append({"rid": rid, "t_ms": x[0], "bytes": x[1],
                         "files": x[2], "limit": x[3], "mode": x[4],
                         "inflight": x[5], "pending": x[6],
                         "mbps_interval": mb})
            prev = x
    write_csv(os.path.join(out, "timeseries.csv"), rows,
              ["rid", "t_ms", "bytes", "files", "limit", "mode", "inflight",
               "pending", "mbps_interval"])


# ---- plots ------------------------------------------------------------------

def smooth_rate(ts, window_ms=500):
    """(t_s, MB/s over the window ending at t) for a BENCH-TS series."""
    out = []
    j = 0
    for i, x in enumerate(ts):
        while ts[j][0] < x[0] - window_ms:
            j += 1
        if i > j and x[0] > ts[j][0]:
            out.append((x[0] / 1000.0,
                        (x[1] - ts[j][1]) / ((x[0] - ts[j][0]) / 1000.0) / 1e6))
    return out


def plot_series(ax, ts, secs, title, best=None, event=None, fio=None):
    ts = [x for x in ts if x[0] <= secs * 1000 + 1]
    rate = smooth_rate(ts)
    ax.plot([t for t, _ in rate], [v for _, v in rate], color="tab:blue",
            label="throughput (500 ms window)")
    if best is not None:
        ax.axhline(best[1], color="tab:green", linestyle=":",
                   label="best fixed (%d) mean" % best[0])
    if fio:
        ax.axhline(fio, color="tab:gray", linestyle="--", linewidth=0.8,
                   label="fio best")
    if event is not None:
        ax.axvline(event / 1000.0, color="tab:red", linestyle="--",
                   label="competing fio starts")
    ax.set_xlabel("seconds")
    ax.set_ylabel("MB/s")
    ax.set_ylim(bottom=0)
    ax.set_title(title, fontsize=9)
    ax2 = ax.twinx()
    ax2.step([x[0] / 1000.0 for x in ts], [x[3] for x in ts], where="post",
             color="tab:orange", label="limit")
    ax2.set_ylabel("limit")
    ax2.set_ylim(bottom=0)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=7, loc="lower right")


def plots(out, data, res):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    runs_by_rid = {r["rid"]: r for r in data.runs}
    cells = {(c["device"], c["size"]): c for c in res["cells"]}
    devices = sorted({c["device"] for c in res["cells"]}, key=dev_key)

    # Throughput over time with the limit, per device and policy: the
    # first cell run of each size (the paper's figures 8 and 14).
    for dev in devices:
        for pol in POLICIES:
            sel = []
            for size in sorted({c["size"] for c in res["cells"]
                                if c["device"] == dev}, key=size_key):
                rs = sorted([r for r in data.runs if r["kind"] == "cell" and
                             r["device"] == dev and r["size"] == size and
                             r["mode"] == "adapt:" + pol and r["rid"] in data.ts],
                            key=lambda r: r["run"])
                if rs:
                    sel.append((size, rs[0]))
            if not sel:
                continue
            fig, axes = plt.subplots(len(sel), 1, figsize=(8, 3 * len(sel)),
                                     squeeze=False)
            for ax, (size, r) in zip(axes[:, 0], sel):
                c = cells[(dev, size)]
                plot_series(ax, data.ts[r["rid"]], r["secs"],
                            "%s, %s files, adapt:%s, run %d: %.2f MB/s, "
                            "mean limit %.1f" % (dev, size, pol, r["run"],
                                                 r["mbps"], r["limit_mean"]),
                            best=(c["best_fixed"], c["best_fixed_mbps"]),
                            fio=c["fio_best_mbps"]
                            if not math.isnan(c["fio_best_mbps"]) else None)
            fig.tight_layout()
            name = "ts-%s-%s.png" % (dev, pol)
            fig.savefig(os.path.join(out, name), dpi=90)
            plt.close(fig)
            made.append(name)

    # Competing load.
    for dev in devices:
        cs = [c for c in res["compete"] if c["device"] == dev and
              c["rid"] in data.ts]
        if not cs:
            continue
        fig, axes = plt.subplots(len(cs), 1, figsize=(8, 3 * len(cs)),
                                 squeeze=False)
        for ax, c in zip(axes[:, 0], cs):
            r = runs_by_rid[c["rid"]]
            cell = cells.get((dev, c["size"]))
            plot_series(ax, data.ts[c["rid"]], r["secs"],
                        "%s, %s files, %s, fio random reads (qd %s) from "
                        "%.1f s" % (dev, c["size"], c["mode"], c["fio_qd"],
                                    (c["compete_start_ms"] or 0) / 1000.0),
                        best=(cell["best_fixed"], cell["best_fixed_mbps"])
                        if cell else None,
                        event=c["compete_start_ms"]
                        if c["compete_start_ms"] != "" else None)
        fig.tight_layout()
        name = "compete-%s.png" % dev
        fig.savefig(os.path.join(out, name), dpi=90)
        plt.close(fig)
        made.append(name)

    # Fixed against adaptive, per device: one panel per size.
    for dev in devices:
        sizes = sorted({c["size"] for c in res["cells"] if c["device"] == dev},
                       key=size_key)
        fig, axes = plt.subplots(1, len(sizes), figsize=(4.5 * len(sizes), 3.6),
                                 squeeze=False)
        for ax, size in zip(axes[0], sizes):
            ms = [m for m in res["modes"] if m["device"] == dev and
                  m["size"] == size]
            labels = [m["mode"].replace("fixed:", "").replace("adapt:", "")
                      for m in ms]
            vals = [m["mbps_mean"] for m in ms]
            errs = [[m["mbps_mean"] - m["mbps_min"] for m in ms],
                    [m["mbps_max"] - m["mbps_mean"] for m in ms]]
            colors = ["tab:blue" if m["mode"].startswith("fixed:") else
                      "tab:orange" for m in ms]
            ax.bar(range(len(ms)), vals, yerr=errs, color=colors, capsize=2)
            ax.set_xticks(range(len(ms)))
            ax.set_xticklabels(labels, rotation=45, fontsize=8)
            c = cells[(dev, size)]
            if not math.isnan(c["fio_best_mbps"]):
                ax.axhline(c["fio_best_mbps"], color="tab:gray",
                           linestyle="--", linewidth=0.8, label="fio best")
                ax.legend(fontsize=7, loc="lower right")
            ax.set_title("%s, %s files (mean of %d, min-max)"
                         % (dev, size, c["runs"]), fontsize=9)
            ax.set_ylabel("MB/s")
            ax.set_xlabel("fixed limit / adaptive policy")
        fig.tight_layout()
        name = "bars-%s.png" % dev
        fig.savefig(os.path.join(out, name), dpi=90)
        plt.close(fig)
        made.append(name)

    if res["order"]:
        fig, ax = plt.subplots(figsize=(6, 3.6))
        xs = range(len(res["order"]))
        ax.bar([x - 0.2 for x in xs], [o["fifo_mbps"] for o in res["order"]],
               width=0.4, label="FIFO")
        ax.bar([x + 0.2 for x in xs], [o["sorted_mbps"] for o in res["order"]],
               width=0.4, label="SORTED")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(["%s %s\n%s" % (o["device"], o["size"], o["mode"])
                            for o in res["order"]], fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("MB/s (log)")
        ax.set_title("dispatch order, FIFO against SORTED", fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "order.png"), dpi=90)
        plt.close(fig)
        made.append("order.png")
    return made


# ---- text ---------------------------------------------------------------------

def cell_lines(res):
    out = []
    for c in res["cells"]:
        out.append("bench cell device=%s size=%s best_fixed=%d "
                   "best_fixed_mbps=%s adaptive_policy=%s "
                   "adaptive_pct_of_best=%s pct_of_fio=%s"
                   % (c["device"], c["size"], c["best_fixed"],
                      fmt(c["best_fixed_mbps"]), c["adaptive_policy"],
                      fmt(c["adaptive_pct_of_best"], 1),
                      fmt(c["pct_of_fio"], 1)))
    for o in res["order"]:
        out.append("bench order device=%s size=%s fifo_mbps=%s sorted_mbps=%s"
                   % (o["device"], o["size"], fmt(o["fifo_mbps"]),
                      fmt(o["sorted_mbps"])))
    return out


def goals(res):
    """(text, met) per goal of issue 5."""
    out = []
    cells = res["cells"]
    if cells:
        bad = [c for c in cells if not c["adaptive_pct_of_best"] >=
               GOAL_PCT_OF_BEST]
        out.append(("the better adaptive policy at >= %.0f%% of the best "
                    "fixed limit in every cell: %s" % (
                        GOAL_PCT_OF_BEST,
                        "; ".join("%s %s %s%%" % (c["device"], c["size"],
                                                  fmt(c["adaptive_pct_of_best"], 1))
                                  for c in cells)), not bad))
    big = [c for c in cells if c["size"] == "1m"]
    if big:
        bad = [c for c in big if not c["pct_of_fio"] >= GOAL_PCT_OF_FIO_1M]
        out.append(("the better adaptive policy at >= %.0f%% of fio's best on "
                    "1 MB files: %s" % (
                        GOAL_PCT_OF_FIO_1M,
                        "; ".join("%s %s%%" % (c["device"], fmt(c["pct_of_fio"], 1))
                                  for c in big)), not bad))
    small = [o for o in res["order"] if o["size"] == "10k"]
    if small:
        bad = [o for o in small if not o["ratio"] >= GOAL_ORDER_RATIO_10K]
        out.append(("SORTED >= %.1fx FIFO on the HDD model with 10 KB files: "
                    "%s" % (GOAL_ORDER_RATIO_10K, "; ".join(
                        "%s %s: %sx" % (o["device"], o["mode"],
                                         fmt(o["ratio"], 2)) for o in small)),
                    not bad))
    return out


def conf_by_device(data):
    out = {}
    for dev, text in data.conf:
        out.setdefault(dev, []).append(text)
    return out


def readme(path, title, data, res, pngs, out_rel, note=None):
    cells = res["cells"]
    conf = conf_by_device(data)
    L = []
    a = L.append
    a("<!-- SPDX-License-Identifier: GPL-2.0 -->")
    a("<!-- Generated by tools/bench/report.py from a bench run: do not edit. -->")
    a("# %s" % title)
    a("")
    a("The IOPA paper's microbenchmark through `/dev/iopa` (issue 5): read and "
      "checksum every file of a set of 10 KB, 100 KB or 1 MB files, with the "
      "in-flight limit pinned at 1, 2, 4, 8, 16, 32, 64 or adapted by the "
      "kernel (policies `iopa` and `hillclimb`), on an SSD-like and an "
      "HDD-like device, against fio's best on the same device and block "
      "size; plus dispatch in on-disk order (`IOPA_IOC_SET_ORDER`) against "
      "FIFO on the HDD model, and a run where a competing fio load starts "
      "halfway.")
    a("")
    if note:
        a("**Note on this run:** %s" % note)
        a("")
    a("## How to run")
    a("")
    a("```sh")
    a("make bench         # dispatch bench + ssd full + hdd full (3 guest boots);")
    a("                   # writes bench/results/ and this file")
    a("make bench-quick   # 100 KB files only, 1 run per mode (2 guest boots);")
    a("                   # writes build/bench-quick/, prints the cell lines")
    a("make -C tools/bench test   # report.py against the canned logs")
    a("```")
    a("")
    a("Knobs (environment of `make bench`, read by "
      "`tools/bench/files-bench.sh`): `BENCH_SECS` (run length, 8), "
      "`BENCH_RUNS` (3), `BENCH_SIZES`, `BENCH_MODES`, `BENCH_SYSFS` (the "
      "controller parameters written to `/sys/class/misc/iopa/`), "
      "`BENCH_SSD_NSEC`/`BENCH_SSD_QD`/`BENCH_SSD_MBPS` (the SSD model), "
      "`BENCH_HDD_PARAMS` (iopa_hdd module parameters), `BENCH_ORDER_LIMIT`, "
      "`BENCH_NFILES_<dev>_<size>`, `BENCH_FIO_QDS`, `BENCH_TS`; see the "
      "header of `files-bench.sh`.  The guest console logs are kept in "
      "`build/bench/` (`build/bench-quick/`); `report.py --out DIR LOG...` "
      "redraws everything from them.")
    a("")
    a("On a real Linux host (as root: the script drops the page cache and "
      "writes the controller's sysfs parameters, restoring them at the end; "
      "it loads `$IOPA_KO` if `/dev/iopa` is missing, e.g. "
      "`IOPA_KO=kernel/iopa.ko` after `make`):")
    a("")
    a("```sh")
    a("make -C tools/bench")
    a("sudo tools/bench/files-bench.sh hdd full --dir /mnt/disk/iopa-bench "
      "--fio-dev /dev/sdb 2>&1 | tee hdd.log")
    a("/usr/bin/python3 tools/bench/report.py --out /tmp/bench-hdd hdd.log")
    a("```")
    a("")
    a("`--dir` is a directory on a mounted file system of the device under "
      "test (the file sets are created there once and reused); `--fio-dev` "
      "is the block device that file system is on (the partition, since "
      "FIEMAP offsets are relative to it), which fio only reads (`--readonly`, O_DIRECT, over "
      "the region the files occupy, from FIEMAP); without it the fio "
      "characterisation and the competing-load run are skipped and "
      "`pct_of_fio` is `nan`.  `ssd`/`hdd` names the device in the results "
      "(`hdd` adds the FIFO/SORTED comparison).  Set `BENCH_SYSFS=` (empty) "
      "to keep the module's parameters: on a real host the default cycles "
      "(0.5 s / 1 s) suit runs of a minute or more (`BENCH_SECS=60`).")
    a("")
    a("## Devices and settings")
    a("")
    for dev in sorted(conf, key=dev_key):
        a("**%s**" % dev)
        a("")
        for t in conf[dev]:
            a("- `%s`" % t)
        a("")
    if data.sets:
        a("File sets (10k, 100k, 1m = 10 KiB, 100 KiB, 1 MiB per file; "
          "pseudo-random content; 1000 files per directory; ext4):")
        a("")
        a("| device | size | files | bytes | region on the device (MB) |")
        a("| --- | --- | ---: | ---: | --- |")
        for s in data.sets:
            a("| %s | %s | %s | %s | %.0f - %.0f |" % (
                s.get("device"), s.get("size"), s.get("files"), s.get("bytes"),
                int(s.get("span_lo", 0)) / 1e6, int(s.get("span_hi", 0)) / 1e6))
        a("")
    a("Each run: one submitter walking the set's directories in readdir "
      "(hash) order, submitting one job per file; 64 worker threads in "
      "every mode (only the kernel's limit differs); each job is a "
      "`pread()` of the whole file and a 64-bit Fletcher-like checksum; "
      "page cache dropped before every run; the run stops at its time cap "
      "(pending jobs cancelled) and its MB/s is the bytes read until then "
      "over the elapsed time.  Modes run interleaved (run 1 of every mode, "
      "then run 2, ...).  **The controller's cycles are shortened** (see "
      "`sysfs_changed` above, a fifth of the module's defaults) so that a "
      "run of seconds holds tens of cycles, and `max_limit` is raised to "
      "64, the largest fixed limit (its default, 4 x CPUs, is 8 in the "
      "2-vCPU guest).  Every other controller parameter is the module's "
      "default (`sysfs` above), in particular `fast_cap` (90% of the CPUs: "
      "2 in the guest) and `init_limit` (30%: 1).")
    a("")
    a("## Results")
    a("")
    if cells:
        a("MB/s (10^6 bytes per second), mean over %d run(s); `adaptive` is "
          "the better policy; `%% of best` is its mean over the best fixed "
          "limit's; `%% of fio` its mean over fio's best." % min(
              c["runs"] for c in cells))
        a("")
        a("| device | size | best fixed | best fixed MB/s | iopa MB/s (mean limit) "
          "| hillclimb MB/s (mean limit) | adaptive | % of best | fio best MB/s (qd) "
          "| % of fio |")
        a("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
        for c in cells:
            a("| %s | %s | %d | %s | %s (%s) | %s (%s) | %s | %s | %s (%s) | %s |" % (
                c["device"], c["size"], c["best_fixed"],
                fmt(c["best_fixed_mbps"], 2), fmt(c["iopa_mbps"], 2),
                fmt(c["iopa_limit_mean"], 1), fmt(c["hillclimb_mbps"], 2),
                fmt(c["hillclimb_limit_mean"], 1), c["adaptive_policy"],
                fmt(c["adaptive_pct_of_best"], 1), fmt(c["fio_best_mbps"], 2),
                c["fio_best_qd"], fmt(c["pct_of_fio"], 1)))
        a("")
        a("Every mode (MB/s, mean and min-max over the runs):")
        a("")
        hdr = sorted({m["mode"] for m in res["modes"]}, key=mode_key)
        a("| device | size | " + " | ".join(h.replace("adapt:", "")
                                             for h in hdr) + " |")
        a("| --- | --- |" + " ---: |" * len(hdr))
        for c in cells:
            row = []
            for h in hdr:
                m = [x for x in res["modes"] if x["device"] == c["device"] and
                     x["size"] == c["size"] and x["mode"] == h]
                row.append("%s (%s-%s)" % (fmt(m[0]["mbps_mean"], 2),
                                           fmt(m[0]["mbps_min"], 2),
                                           fmt(m[0]["mbps_max"], 2))
                           if m else "")
            a("| %s | %s | %s |" % (c["device"], c["size"], " | ".join(row)))
        a("")
    a("### fio (random reads of the file size over the files' region, "
      "O_DIRECT, libaio)")
    a("")
    if data.fio:
        qds = sorted({f["qd"] for f in data.fio})
        a("| device | size | " + " | ".join("qd %d" % q for q in qds) + " |")
        a("| --- | --- |" + " ---: |" * len(qds))
        keys = sorted({(f["device"], f["size"]) for f in data.fio},
                      key=lambda k: (dev_key(k[0]), size_key(k[1])))
        for k in keys:
            row = []
            for q in qds:
                v = [f["mbps"] for f in data.fio if (f["device"], f["size"]) == k
                     and f["qd"] == q]
                row.append(fmt(v[0], 2) if v else "")
            a("| %s | %s | %s |" % (k[0], k[1], " | ".join(row)))
    else:
        a("(no fio figures in these logs)")
    a("")
    a("### Dispatch order on the HDD model")
    a("")
    if res["order"]:
        a("FIFO against SORTED (`IOPA_ORDER_SORTED`, set before the first "
          "submission), at the fixed limit stated in `mode`: the knee of the "
          "cell (the smallest fixed limit within 5% of the best fixed mean) "
          "unless `BENCH_ORDER_LIMIT` set one.  A SORTED run that read the "
          "whole set before its cap is counted in `sorted exhausted` (its MB/s "
          "is over its shorter time).")
        a("")
        a("The SORTED runs log the first block of each fetched job: `up` and "
          "`down` are the files per second fetched while the sweep went up "
          "or down the disk (the time between two fetches counted for the "
          "direction of the step), `down time` the share of the time spent "
          "sweeping down, `reversals` the turns of the sweep (over all "
          "runs).")
        a("")
        a("| device | size | mode | FIFO MB/s | SORTED MB/s | SORTED / FIFO "
          "| sorted exhausted | SORTED up files/s | down files/s | down time "
          "| reversals |")
        a("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
          "| ---: |")
        for o in res["order"]:
            a("| %s | %s | %s | %s | %s | %s | %d/%d | %s | %s | %s%% | %s |" % (
                o["device"], o["size"], o["mode"], fmt(o["fifo_mbps"], 2),
                fmt(o["sorted_mbps"], 2), fmt(o["ratio"], 2),
                o["sorted_exhausted"], o["runs"],
                fmt(o.get("sorted_up_files_per_s"), 0),
                fmt(o.get("sorted_down_files_per_s"), 0),
                fmt(o.get("sorted_down_time_pct"), 0),
                o.get("sorted_reversals", "")))
    else:
        a("(no order runs in these logs)")
    a("")
    a("### Competing load")
    a("")
    if res["compete"]:
        a("A run of twice the usual length; a fio random-read load on the "
          "same region is started halfway (`--startdelay`; under TCG its I/O "
          "was seen to begin up to about 2 s after the mark: see the "
          "`compete-*.png` plots).  `before`/`after` split the run at the "
          "mark.")
        a("")
        a("| device | size | mode | whole run MB/s | before: MB/s, mean limit "
          "| after: MB/s, mean limit | fio qd | fio MB/s |")
        a("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
        for c in res["compete"]:
            a("| %s | %s | %s | %s | %s, %s | %s, %s | %s | %s |" % (
                c["device"], c["size"], c["mode"], fmt(c["mbps"], 2),
                fmt(c.get("mbps_before"), 2), fmt(c.get("limit_mean_before"), 1),
                fmt(c.get("mbps_after"), 2), fmt(c.get("limit_mean_after"), 1),
                c["fio_qd"], c["fio_mbps"]))
    else:
        a("(no competing-load runs in these logs)")
    a("")
    if data.dispatch:
        a("### Dispatch rate (empty jobs, `iopa-bench-dispatch`)")
        a("")
        a("| path | jobs/s | ratio to pthread |")
        a("| --- | ---: | ---: |")
        for d in data.dispatch:
            a("| %s | %s | %s |" % (d.get("path"), d.get("jobs_per_s"),
                                     d.get("ratio_to_pthread")))
        a("")
    a("### Plots")
    a("")
    for p in pngs:
        a("- [%s](%s%s)" % (p, out_rel, p))
    if not pngs:
        a("(none drawn)")
    a("")
    a("`ts-<device>-<policy>.png`: throughput (500 ms window) and the limit "
      "over the first run of each size, like the IOPA paper's figures 8 and "
      "14; `compete-<device>.png`: the competing-load runs; "
      "`bars-<device>.png`: every mode per size; `order.png`: FIFO against "
      "SORTED.  CSV files beside them: `cells.csv` (the table), "
      "`modes.csv`, `runs.csv` (every run), `timeseries.csv` (the 100 ms "
      "samples of the adaptive and competing runs), `fio.csv`, "
      "`order.csv`, `compete.csv`.")
    a("")
    a("### Runs far from their mode's median")
    a("")
    if res["outliers"]:
        a("Runs more than %d%% away from the median of the runs of the same "
          "device, size, kind, mode and order.  They are kept in the means "
          "above: look at them before reading a cell whose means they "
          "move." % int(OUTLIER * 100))
        a("")
        a("| device | size | kind | mode | order | run | MB/s | median MB/s |")
        a("| --- | --- | --- | --- | --- | ---: | ---: | ---: |")
        for r in sorted(res["outliers"], key=lambda r: (
                dev_key(r["device"]), size_key(r["size"]), r["kind"],
                mode_key(r["mode"]), r["order"], r["run"])):
            a("| %s | %s | %s | %s | %s | %d | %s | %s |" % (
                r["device"], r["size"], r["kind"], r["mode"], r["order"],
                r["run"], fmt(r["mbps"], 2), fmt(r["median"], 2)))
    else:
        a("None (no run more than %d%% away from the median of its mode)."
          % int(OUTLIER * 100))
    a("")
    a("## Goals (issue 5)")
    a("")
    for text, met in goals(res):
        a("- %s: **%s**" % (text, "met" if met else "not met"))
    a("")
    a("## Caveats")
    a("")
    a("- QEMU TCG, 2 vCPUs, on a shared 2-core host: everything is slow and "
      "noisy; compare figures within one run, not across machines.  Run to "
      "run spread is in `modes.csv` (min-max).")
    a("- The devices are models.  The SSD is null_blk with a timer latency "
      "(default 40 ms), a tag depth (16) and a bandwidth cap (30 MiB/s): a real SSD "
      "slowed ~100 times, so that the 2 emulated CPUs (buffered reads and "
      "checksums top out near 55 MB/s) are not the bottleneck.  The HDD is "
      "tools/hdd-model (7200 rpm, 100 MB/s, seeks after Ruemmler and "
      "Wilkes): it serves requests in arrival order with 64 tags, so "
      "mq-deadline rarely has anything to sort, unlike a disk with NCQ.")
    a("- Runs last seconds, not minutes: the ramp of an adaptive run (from "
      "`init_limit` 1, doubling only up to `fast_cap` 2 in the guest, then "
      "one step per 200 ms cycle) is a large share of the run, and a 200 ms "
      "cycle holds few jobs (about 5 of the 1 MB files at 25 MB/s), so the "
      "controller measures with much more noise than with a real device and "
      "its default 1 s cycle.  Longer runs would weigh the ramp less (not "
      "measured here).  In the guest `fast_cap` (2) is what holds the ramp "
      "back on the SSD model: `BENCH_SYSFS` with `fast_cap=16` added lets "
      "FAST mode double past the CPU count, to compare.")
    a("- fio reads with O_DIRECT and does no processing; the benchmark "
      "reads through the page cache (with readahead) and checksums, so "
      "`% of fio` also measures that overhead.")
    a("- The time cap stops a run between files: the bytes of files still "
      "being read count up to the cap; a SORTED run can read its whole set "
      "before the cap.")
    a("- SORTED sweeps up, then down (SCAN).  On the HDD model, which has "
      "no track cache, a downward sweep reads neighbouring files in "
      "descending order and each of them waits for nearly a full "
      "revolution (8.3 ms), while an upward sweep finds the next file "
      "under the head: compare the `up` and `down` files/s of the order "
      "table.  With several jobs in flight, their requests also reach the "
      "disk out of order, which costs revolutions too.")
    a("")
    with open(path, "w") as f:
        f.write("\n".join(L))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="directory for CSV and PNG")
    ap.add_argument("--readme", help="README to write (default OUT/README.md)")
    ap.add_argument("--dispatch-log", help="log of the dispatch bench")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--note", help="a remark on the run, for the README")
    ap.add_argument("--title", default="iopa benchmark: file processing, "
                    "fixed against adaptive parallelism")
    ap.add_argument("logs", nargs="+")
    args = ap.parse_args()

    data = Data()
    try:
        for p in args.logs:
            data.parse(p)
        if args.dispatch_log:
            nd = len(data.dispatch)
            with open(args.dispatch_log, errors="replace") as f:
                for line in f:
                    m = DISPATCH_RE.match(line.rstrip("\n"))
                    if m:
                        data.dispatch.append(kv(m.group(1), args.dispatch_log))
            if len(data.dispatch) == nd:
                raise ParseError("%s: no 'bench dispatch' lines"
                                 % args.dispatch_log)
        res = analyse(data)
    except (OSError, ParseError) as e:
        print("report.py: %s" % e, file=sys.stderr)
        return 1
    if not res["cells"]:
        print("report.py: no complete cell in %s" % " ".join(args.logs),
              file=sys.stderr)
        return 1

    os.makedirs(args.out, exist_ok=True)
    write_csvs(args.out, data, res)
    pngs = []
    if not args.no_plots:
        try:
            pngs = plots(args.out, data, res)
        except ImportError as e:
            print("report.py: no plots (%s): install python3-matplotlib "
                  "(tools/guest/deps.sh bench)" % e, file=sys.stderr)
            return 1
    rd = args.readme or os.path.join(args.out, "README.md")
    rel = os.path.relpath(os.path.abspath(args.out),
                          os.path.dirname(os.path.abspath(rd)))
    rel = "" if rel == "." else rel + "/"
    readme(rd, args.title, data, res, pngs, rel, args.note)
    for line in cell_lines(res):
        print(line)
    for text, met in goals(res):
        print("goal: %s: %s" % ("met" if met else "NOT met", text))
    for r in res["outliers"]:
        print("outlier: %s %s %s %s %s run %d: %s MB/s, median %s"
              % (r["device"], r["size"], r["kind"], r["mode"], r["order"],
                 r["run"], fmt(r["mbps"], 2), fmt(r["median"], 2)))
    print("report: %d runs, %d cells, %d order comparisons; CSV%s in %s; %s"
          % (len(data.runs), len(res["cells"]), len(res["order"]),
             " and PNG" if pngs else "", args.out, rd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
