#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""report.py: the host side of the file benchmark (tools/bench/files-bench.sh).

    report.py --out DIR [--readme FILE] [--dispatch-log FILE]
              [--no-plots] [--title TEXT] [--note TEXT] LOG...

Parses the guest console logs (BENCH-* lines; anything else is ignored),
writes CSV files and PNG plots to DIR and a README (default DIR/README.md),
and prints one line per cell, order comparison, step and tenants count:

    bench cell device=D size=S best_fixed=N best_fixed_mbps=F
        default_policy=P default_pct_of_best=F iopa_pct_of_best=F
        pct_of_fio=F
    bench order device=hdd size=S fifo_mbps=F sorted_mbps=F
    bench step device=D kind=load|size best_fixed=N best_fixed_mbps=F
        default_mbps=F pct_of_best_fixed=F
    bench tenants device=D n=K total_mbps=F best_fixed_total_mbps=F
        pct=F jain=F join_cycles=N

(each on one line).  MB = 10^6 bytes.  Figures are means over the runs of
a mode.  The *default* mode is adapt:default (the module's default_policy,
named by the runs' policy= field), or, in logs without it, adapt:P for the
default_policy of the BENCH-CONF sysfs line.  A cell is a device and a
file size (device "cpu": the CPU-bound jobs); best_fixed is the fixed
limit with the highest mean; *_pct_of_best are means over its mean (an
explicit policy that is the default one, and was not run as such, gets
the default's figure); pct_of_fio is the default's mean over fio's best
MB/s for the device and the file size (nan without fio figures).

A step compares whole runs of one scenario: best_fixed is the fixed limit
whose runs through the same scenario had the highest mean MB/s.

Tenants: n processes, each its own context and submitter, on one device;
the last one starts late.  For one run: total_mbps is the bytes of all
tenants over the run's length; the *window* is from the late tenant's
start to the end of the run; jain is Jain's fairness index, (sum x)^2 /
(n sum x^2), of the tenants' MB/s in the window; the fair share is the
sum of those over n.  The late tenant has its share from the first
moment t (its start, or one of its samples) such that over [t, t + 1 s]
it read at least 90% of the fair share: join_s is t after its start, in
seconds, and join_cycles the cycles the device's budget controller ran
from its start to t (GET_STATE group_cycles of a tenant already
running; 0 where no budget is shared, as with fixed limits); -1 if it
never had its share.  best_fixed_total_mbps
is the highest mean total over the fixed modes (every tenant at the same
fixed limit); pct is the default's mean total over it.  Several runs of
the default: means, and the median of join_cycles.

Exit status 1, with a message, if a log has no runs, a BENCH line is
malformed, a cell lacks a fixed or the default mode, a step lacks a fixed
or the default mode, or a tenants run lacks a tenant's line.
"""
import argparse
import csv
import math
import os
import re
import statistics
import sys

SIZES = ["10k", "64k", "100k", "1m"]
DEVICES = ["ssd", "hdd", "cpu"]
POLICIES = ["iopa", "hillclimb", "bracket"]
STEP_KINDS = ["load", "size"]
KINDS = ["cell", "order", "cpu", "load", "size", "tenants", "compete"]
# Issue 12's done criteria, for the default policy.
GOAL_PCT_OF_BEST = 97.0
GOAL_STEP_PCT = 105.0
GOAL_TENANTS_PCT = 95.0
GOAL_TENANTS_JAIN = 0.95
GOAL_TENANTS_JOIN_CYCLES = 3
# Issue 5's, kept.
GOAL_PCT_OF_FIO_1M = 90.0
GOAL_ORDER_RATIO_10K = 1.3
JOIN_SHARE = 0.9    # of the fair share, for join_cycles
JOIN_WINDOW_MS = 1000   # held over this long
OUTLIER = 0.25      # a run this far (relative) from its group's median

LINE_RE = re.compile(r"(BENCH-(?:CONF|SET|FIO|RUN|TS|EVENT|DIR)) (.*)$")
DISPATCH_RE = re.compile(r"^bench dispatch (.*)$")
LATENCY_RE = re.compile(r"^bench dispatch-latency (.*)$")
# Lines the guest script computes itself (files-bench.sh, scenario short).
GUEST_LINE_RE = re.compile(r"^bench (?:short|converge|share) device=\S+ .*$")
# Runs of those scenarios (kinds short<SECS>, share<N>, sharesolo):
# summarised in the guest.
GUEST_KIND_RE = re.compile(r"^(?:short[0-9]+|share[0-9]+|sharesolo)$")
RUN_KEYS = ["device", "size", "kind", "run", "rid", "mode", "order", "files",
            "bytes", "secs", "mbps", "limit_final", "limit_mean"]
MODE_RE = re.compile(r"^(fixed:[0-9]+|adapt:[a-z0-9]+)$")


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
        return (0, int(m[6:]), "")
    p = m[6:]
    if p == "default":
        return (1, -1, "")
    return (1, POLICIES.index(p) if p in POLICIES else 9, p)


def short(m):
    return m.replace("adapt:", "")


class Data:
    def __init__(self):
        self.conf = []          # (device, text)
        self.sets = []
        self.fio = []
        self.runs = []
        self.ts = {}            # rid -> list of tuples
        self.events = {}        # rid -> list of dicts
        self.dirs = {}          # rid -> dict (BENCH-DIR)
        self.dispatch = []
        self.latency = []
        self.guest_lines = []

    def parse(self, path):
        nruns = len(self.runs)
        with open(path, errors="replace") as f:
            for lineno, raw in enumerate(f, 1):
                line = raw.rstrip("\n").rstrip("\r")
                where = "%s:%d" % (path, lineno)
                if line.startswith("#"):
                    continue        # comments (canned logs, bench.sh)
                m = DISPATCH_RE.match(line)
                if m:
                    self.dispatch.append(kv(m.group(1), where))
                    continue
                m = LATENCY_RE.match(line)
                if m:
                    self.latency.append(kv(m.group(1), where))
                    continue
                m = GUEST_LINE_RE.search(line)
                if m:
                    self.guest_lines.append(m.group(0))
                    continue
                m = LINE_RE.search(line)
                if not m:
                    continue
                tag, rest = m.group(1), m.group(2)
                if tag == "BENCH-TS" and \
                        GUEST_KIND_RE.match(rest.split()[0].split(".")[2]
                                            if rest.count(".") >= 2 else ""):
                    continue    # summarised in the guest
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
        r["cycles"] = num(d, "cycles", where, int) if "cycles" in d else ""
        if GUEST_KIND_RE.match(r["kind"]):
            return      # summarised in the guest ("bench short" lines)
        if r["kind"] not in KINDS:
            raise ParseError("%s: unknown kind %s" % (where, r["kind"]))
        if not MODE_RE.match(r["mode"]):
            raise ParseError("%s: unknown mode %s" % (where, r["mode"]))
        if r["secs"] <= 0 or r["mbps"] < 0:
            raise ParseError("%s: impossible secs/mbps" % where)
        if r["kind"] == "tenants":
            for k in ("tenant", "tenants", "start_ms"):
                r[k] = num(d, k, where, int)
            if "group" not in d:
                raise ParseError("%s: tenants run without group" % where)
            if not 0 <= r["tenant"] < r["tenants"]:
                raise ParseError("%s: tenant %d of %d" % (
                    where, r["tenant"], r["tenants"]))
        self.runs.append(r)

    def parse_ts(self, rest, where):
        w = rest.split()
        if len(w) not in (8, 9, 10):
            raise ParseError("%s: BENCH-TS needs 8 to 10 fields: %r"
                             % (where, rest))
        try:
            row = (int(w[1]), int(w[2]), int(w[3]), int(w[4]), w[5],
                   int(w[6]), int(w[7]), int(w[8]) if len(w) >= 9 else -1,
                   int(w[9]) if len(w) == 10 else -1)
        except ValueError:
            raise ParseError("%s: bad BENCH-TS %r" % (where, rest))
        self.ts.setdefault(w[0], []).append(row)


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def stdev(xs):
    return statistics.stdev(xs) if len(xs) > 1 else 0.0


def pct(a, b):
    return 100.0 * a / b if b and b > 0 and not math.isnan(a) \
        else float("nan")


def fmt(x, nd=3):
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) \
        else "%.*f" % (nd, x)


def at(ts, t_ms, col=1):
    """Column col of a BENCH-TS series at t_ms, linearly interpolated
    (clamped to the first and last samples)."""
    if not ts:
        return float("nan")
    if t_ms <= ts[0][0]:
        return ts[0][col]
    for a, b in zip(ts, ts[1:]):
        if a[0] <= t_ms <= b[0]:
            if b[0] == a[0]:
                return b[col]
            return a[col] + (b[col] - a[col]) * (t_ms - a[0]) / (b[0] - a[0])
    return ts[-1][col]


def last_at(ts, t_ms, col):
    """Column col of the last sample at or before t_ms."""
    v = ts[0][col] if ts else -1
    for x in ts:
        if x[0] > t_ms:
            break
        v = x[col]
    return v


def rate(ts, t0_ms, t1_ms):
    """MB/s of a series between two times (nan if the span is empty)."""
    if not ts or t1_ms <= t0_ms:
        return float("nan")
    return (at(ts, t1_ms) - at(ts, t0_ms)) / ((t1_ms - t0_ms) / 1000.0) / 1e6


def default_policies(data):
    """Device -> the module's default policy, from the adapt:default runs,
    else the BENCH-CONF sysfs line."""
    out = {}
    for r in data.runs:
        if r["mode"] == "adapt:default" and r.get("policy"):
            out.setdefault(r["device"], r["policy"])
    for dev, text in data.conf:
        m = re.search(r"(?:^|\s)default_policy=(\S+)", text)
        if m and text.startswith("sysfs "):
            out.setdefault(dev, m.group(1))
    return out


def default_mode(modes, policy):
    """The default mode among modes (a dict or set of mode names)."""
    if "adapt:default" in modes:
        return "adapt:default"
    if policy and "adapt:" + policy in modes:
        return "adapt:" + policy
    return None


def analyse(data):
    """Cells, order comparisons, fio bests, steps, tenants."""
    res = {"cells": [], "modes": [], "order": [], "fio_best": {},
           "steps": [], "step_modes": [], "tenants": [], "tenant_runs": [],
           "outliers": [], "default_policy": default_policies(data)}
    dpol = res["default_policy"]
    # Runs far from the median of their group (same device, size, kind,
    # mode, order; 3 runs or more): shown, not dropped (figures are means).
    og = {}
    for r in data.runs:
        if r["kind"] != "tenants":
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

    analyse_cells(data, res, dpol)
    analyse_order(data, res)
    analyse_steps(data, res, dpol)
    analyse_tenants(data, res, dpol)
    return res


def analyse_cells(data, res, dpol):
    groups = {}
    for r in data.runs:
        if r["kind"] in ("cell", "cpu"):
            dev = "cpu" if r["kind"] == "cpu" else r["device"]
            r["cell_device"] = dev
            groups.setdefault((dev, r["size"]), {}) \
                  .setdefault(r["mode"], []).append(r)
    for (dev, size) in sorted(groups, key=lambda k: (dev_key(k[0]),
                                                      size_key(k[1]))):
        modes = groups[(dev, size)]
        fixed = {m: v for m, v in modes.items() if m.startswith("fixed:")}
        host = modes[next(iter(modes))][0]["device"]
        policy = next((r.get("policy") for r in modes.get("adapt:default", [])
                       if r.get("policy")), dpol.get(host))
        dm = default_mode(modes, policy)
        if not fixed or not dm:
            raise ParseError("cell %s %s: needs fixed runs and the default "
                             "adaptive mode (adapt:default), has %s"
                             % (dev, size, " ".join(sorted(modes))))
        fio = res["fio_best"].get((dev, size))
        fio_mbps = fio[0] if fio else float("nan")
        means = {m: mean([r["mbps"] for r in v]) for m, v in modes.items()}
        best_fixed = max(fixed, key=lambda m: (means[m], -int(m[6:])))
        best_mbps = means[best_fixed]
        cell = {
            "device": dev, "size": size,
            "best_fixed": int(best_fixed[6:]), "best_fixed_mbps": best_mbps,
            "default_policy": policy or "?", "default_mode": dm,
            "default_mbps": means[dm],
            "default_pct_of_best": pct(means[dm], best_mbps),
            "default_limit_mean": mean([r["limit_mean"] for r in modes[dm]]),
            "default_runs": len(modes[dm]),
            "pct_of_fio": pct(means[dm], fio_mbps),
            "best_fixed_pct_of_fio": pct(best_mbps, fio_mbps),
            "fio_best_mbps": fio_mbps,
            "fio_best_qd": fio[1] if fio else "",
            "runs": max(len(v) for v in modes.values()),
            "best_fixed_runs": len(modes[best_fixed]),
        }
        for p in POLICIES:
            m = "adapt:" + p
            if m not in modes and p == policy:
                m = dm
            cell[p + "_mbps"] = means.get(m, float("nan"))
            cell[p + "_pct_of_best"] = pct(means.get(m, float("nan")),
                                           best_mbps)
            cell[p + "_limit_mean"] = mean([r["limit_mean"]
                                            for r in modes.get(m, [])])
            cell[p + "_runs"] = len(modes.get(m, []))
        res["cells"].append(cell)
        for m in sorted(modes, key=mode_key):
            xs = [r["mbps"] for r in modes[m]]
            res["modes"].append({
                "device": dev, "size": size, "mode": m, "runs": len(xs),
                "mbps_mean": means[m], "mbps_stdev": stdev(xs),
                "mbps_min": min(xs), "mbps_max": max(xs),
                "limit_mean": mean([r["limit_mean"] for r in modes[m]]),
                "limit_final_mean": mean([r["limit_final"] for r in modes[m]]),
                "pct_of_best_fixed": pct(means[m], best_mbps),
                "pct_of_fio": pct(means[m], fio_mbps),
            })


def analyse_order(data, res):
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


def step_marks(data, r):
    """(segment names, boundaries in ms) of a step run, from its events."""
    ev = {e.get("event"): e for e in data.events.get(r["rid"], [])}
    end = int(round(r["secs"] * 1000))
    if r["kind"] == "load" and "load-start" in ev:
        a = int(ev["load-start"]["t_ms"])
        b = int(ev["load-end"]["t_ms"]) if "load-end" in ev else end
        return ["before", "during", "after"], [0, a, min(b, end), end], ev
    if r["kind"] == "size":
        # A batch (size-batch) switched when its first files were all
        # submitted: the run's own switch_ms.
        sw = int(ev["size-switch"]["t_ms"]) if "size-switch" in ev else \
            int(r.get("switch_ms", end))
        return ["before", "after"], [0, min(sw, end), end], ev
    return [], [0, end], ev


def step_modes_seg(res, dev, kind, mode, seg):
    """A step mode's mean MB/s in segment seg (from res["step_modes"])."""
    for row in res["step_modes"]:
        if (row["device"], row["kind"], row["mode"]) == (dev, kind, mode):
            return row.get("mbps_" + seg, float("nan"))
    return float("nan")


def analyse_steps(data, res, dpol):
    groups = {}
    for r in data.runs:
        if r["kind"] in STEP_KINDS:
            groups.setdefault((r["device"], r["kind"]), {}) \
                  .setdefault(r["mode"], []).append(r)
    for (dev, kind) in sorted(groups, key=lambda k: (dev_key(k[0]),
                                                      STEP_KINDS.index(k[1]))):
        modes = groups[(dev, kind)]
        fixed = [m for m in modes if m.startswith("fixed:")]
        dm = default_mode(modes, dpol.get(dev))
        if not fixed or not dm:
            raise ParseError("step %s %s: needs fixed runs and the default "
                             "adaptive mode, has %s"
                             % (dev, kind, " ".join(sorted(modes))))
        means = {m: mean([r["mbps"] for r in v]) for m, v in modes.items()}
        best = max(fixed, key=lambda m: (means[m], -int(m[6:])))
        step = {"device": dev, "kind": kind, "size": modes[dm][0]["size"],
                "best_fixed": int(best[6:]), "best_fixed_mbps": means[best],
                "default_mode": dm, "default_mbps": means[dm],
                "default_policy": next((r.get("policy") for r in modes[dm]
                                        if r.get("policy")), dpol.get(dev, "?")),
                "pct_of_best_fixed": pct(means[dm], means[best]),
                "best_rid": modes[best][0]["rid"],
                "default_rid": modes[dm][0]["rid"]}
        res["steps"].append(step)
        seg_rows = []
        for m in sorted(modes, key=mode_key):
            row = {"device": dev, "kind": kind, "mode": m,
                   "runs": len(modes[m]), "mbps": means[m],
                   "pct_of_best_fixed": pct(means[m], means[best]),
                   "limit_mean": mean([r["limit_mean"] for r in modes[m]])}
            segs = {}
            for r in modes[m]:
                names, marks, ev = step_marks(data, r)
                ts = data.ts.get(r["rid"], [])
                for i, n in enumerate(names):
                    segs.setdefault("mbps_" + n, []).append(
                        rate(ts, marks[i], marks[i + 1]))
                    segs.setdefault("limit_" + n, []).append(mean(
                        [x[3] for x in ts if marks[i] <= x[0] < marks[i + 1]]))
                if ev.get("load-end", {}).get("fio_mbps"):
                    segs.setdefault("fio_mbps", []).append(
                        float(ev["load-end"]["fio_mbps"]))
            for k, v in segs.items():
                row[k] = mean([x for x in v if not math.isnan(x)])
            res["step_modes"].append(row)
            if m in fixed:
                seg_rows.append(row)
        # The ceiling of any policy: each segment at its own best fixed
        # limit (changing at the marks, for free), over the default's marks.
        # A timed step: the segments' lengths are fixed, the oracle their
        # best MB/s weighted by length.  A batch: their work is fixed (the
        # default's bytes in each), the oracle that work over the time it
        # takes at each segment's best MB/s.
        names, marks, ev = step_marks(data, modes[dm][0])
        batch = "size-batch" in ev
        step["work"] = "batch" if batch else "timed"
        if names and seg_rows:
            tot = secs = 0.0
            for i, n in enumerate(names):
                vs = [x.get("mbps_" + n, float("nan")) for x in seg_rows]
                vs = [v for v in vs if not math.isnan(v)]
                best_n = max(vs) if vs else float("nan")
                span = marks[i + 1] - marks[i]
                if batch:
                    work = step_modes_seg(res, dev, kind, dm, n) * span
                    tot += work
                    secs += work / best_n if best_n > 0 else float("nan")
                else:
                    tot += best_n * span
            if batch:
                step["oracle_mbps"] = tot / secs if secs else float("nan")
            else:
                step["oracle_mbps"] = tot / marks[-1] if marks[-1] else \
                    float("nan")
        else:
            step["oracle_mbps"] = float("nan")
        step["oracle_pct_of_best_fixed"] = pct(step["oracle_mbps"],
                                               means[best])
        step["pct_of_oracle"] = pct(means[dm], step["oracle_mbps"])


def tenant_group(data, rs):
    """Figures of one tenants run (rs: its tenants' BENCH-RUN lines)."""
    n = rs[0]["tenants"]
    rs = sorted(rs, key=lambda r: r["tenant"])
    end = max(r["start_ms"] + r["secs"] * 1000 for r in rs)
    join = max(r["start_ms"] for r in rs)
    late = max(rs, key=lambda r: (r["start_ms"], r["tenant"]))
    g = {"device": rs[0]["device"], "size": rs[0]["size"], "n": n,
         "mode": rs[0]["mode"], "run": rs[0]["run"], "group": rs[0]["group"],
         "secs": end / 1000.0, "join_ms": join,
         "total_mbps": sum(r["bytes"] for r in rs) / (end / 1000.0) / 1e6,
         "tenant_mbps": [r["mbps"] for r in rs],
         "limit_means": [r["limit_mean"] for r in rs],
         "policy": rs[0].get("policy", "")}
    series = [data.ts.get(r["rid"], []) for r in rs]
    g["jain"] = g["join_cycles"] = g["join_s"] = float("nan")
    g["window_mbps"] = []
    if all(series) and end > join:
        xs = []
        for r, ts in zip(rs, series):
            if r is late:
                b0 = 0.0
            else:
                b0 = at(ts, join)
            xs.append((at(ts, end) - b0) / ((end - join) / 1000.0) / 1e6)
        g["window_mbps"] = xs
        sq = sum(x * x for x in xs)
        g["jain"] = sum(xs) ** 2 / (n * sq) if sq > 0 else float("nan")
        fair = sum(xs) / n
        ts = series[rs.index(late)]
        # The device's cycles: group_cycles of a tenant already running.
        gc = next(s for r, s in zip(rs, series) if r is not late) \
            if n > 1 else ts
        g["join_cycles"] = -1
        g["join_s"] = -1
        need = JOIN_SHARE * fair * JOIN_WINDOW_MS / 1000.0
        starts = [join] + [x[0] for x in ts
                           if join < x[0] <= end - JOIN_WINDOW_MS]
        for t in starts:
            lo = at(ts, t) if t > join else 0.0
            if fair > 0 and \
                    (at(ts, t + JOIN_WINDOW_MS) - lo) / 1e6 >= need:
                c0, c = last_at(gc, join, 8), last_at(gc, t, 8)
                g["join_cycles"] = c - c0 if c >= 0 and c0 >= 0 else -1
                g["join_s"] = (t - join) / 1000.0
                break
    return g


def analyse_tenants(data, res, dpol):
    groups = {}
    for r in data.runs:
        if r["kind"] == "tenants":
            groups.setdefault(r["group"], []).append(r)
    runs = []
    for gid in sorted(groups):
        rs = groups[gid]
        n = rs[0]["tenants"]
        got = sorted(r["tenant"] for r in rs)
        if got != list(range(n)):
            raise ParseError("tenants run %s: tenant lines %s, expected 0..%d"
                             % (gid, got, n - 1))
        runs.append(tenant_group(data, rs))
    res["tenant_runs"] = runs
    by = {}
    for g in runs:
        by.setdefault((g["device"], g["n"]), {}).setdefault(g["mode"], []) \
          .append(g)
    for (dev, n) in sorted(by, key=lambda k: (dev_key(k[0]), k[1])):
        modes = by[(dev, n)]
        fixed = [m for m in modes if m.startswith("fixed:")]
        dm = default_mode(modes, dpol.get(dev))
        if not fixed or not dm:
            raise ParseError("tenants %s n=%d: needs fixed runs and the "
                             "default adaptive mode, has %s"
                             % (dev, n, " ".join(sorted(modes))))
        tot = {m: mean([g["total_mbps"] for g in v]) for m, v in modes.items()}
        best = max(fixed, key=lambda m: (tot[m], -int(m[6:])))
        ds = modes[dm]
        joins = sorted(ds, key=lambda g: g["join_cycles"]
                       if g["join_cycles"] >= 0 else float("inf"))
        mid = joins[(len(joins) - 1) // 2]
        res["tenants"].append({
            "device": dev, "n": n, "size": ds[0]["size"],
            "default_mode": dm, "policy": ds[0]["policy"],
            "total_mbps": tot[dm], "best_fixed": int(best[6:]),
            "best_fixed_total_mbps": tot[best],
            "pct": pct(tot[dm], tot[best]),
            "jain": mean([g["jain"] for g in ds]),
            "best_fixed_jain": mean([g["jain"] for g in modes[best]]),
            "join_cycles": mid["join_cycles"], "join_s": mid["join_s"],
            "join_ms": ds[0]["join_ms"], "secs": ds[0]["secs"],
            "runs": len(ds), "default_group": ds[0]["group"],
            "modes": {m: tot[m] for m in modes},
        })


# ---- CSV ----------------------------------------------------------------------

def write_csv(path, rows, fields):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (fmt(v) if isinstance(v, float) else v)
                        for k, v in r.items()})


def per_second(data, g):
    """Rows of per-second MB/s for each tenant of a tenants run."""
    rows = []
    for r in data.runs:
        if r["kind"] != "tenants" or r["group"] != g["group"]:
            continue
        ts = data.ts.get(r["rid"], [])
        if not ts:
            continue
        t = r["start_ms"]
        while t + 1000 <= g["secs"] * 1000 + 1:
            rows.append({"group": g["group"], "device": g["device"],
                         "n": g["n"], "mode": g["mode"], "run": g["run"],
                         "tenant": r["tenant"], "t_s": (t + 1000) / 1000.0,
                         "mbps": rate(ts, t, t + 1000),
                         "limit": last_at(ts, t + 1000, 3),
                         "cycles": last_at(ts, t + 1000, 7)})
            t += 1000
    return rows


def write_csvs(out, data, res):
    write_csv(os.path.join(out, "runs.csv"), data.runs,
              ["device", "size", "kind", "run", "mode", "order", "files",
               "bytes", "secs", "mbps", "limit_final", "limit_mean",
               "limit_min", "limit_max", "stopped", "policy", "cycles",
               "tenant", "tenants", "start_ms", "outlier", "rid"])
    write_csv(os.path.join(out, "cells.csv"), res["cells"],
              ["device", "size", "runs", "best_fixed", "best_fixed_mbps",
               "best_fixed_runs", "default_policy", "default_mbps",
               "default_pct_of_best", "default_limit_mean", "default_runs",
               "pct_of_fio", "best_fixed_pct_of_fio", "fio_best_mbps",
               "fio_best_qd"] +
              ["%s_%s" % (p, k) for p in POLICIES
               for k in ("mbps", "pct_of_best", "limit_mean", "runs")])
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
    write_csv(os.path.join(out, "steps.csv"), res["step_modes"],
              ["device", "kind", "mode", "runs", "mbps", "pct_of_best_fixed",
               "limit_mean", "mbps_before", "limit_before", "mbps_during",
               "limit_during", "mbps_after", "limit_after", "fio_mbps"])
    rows = []
    for g in res["tenant_runs"]:
        row = dict(g)
        row["tenant_mbps"] = " ".join(fmt(x, 2) for x in g["tenant_mbps"])
        row["window_mbps"] = " ".join(fmt(x, 2) for x in g["window_mbps"])
        row["limit_means"] = " ".join(fmt(x, 1) for x in g["limit_means"])
        rows.append(row)
    write_csv(os.path.join(out, "tenants.csv"), rows,
              ["device", "n", "size", "mode", "run", "secs", "join_ms",
               "total_mbps", "jain", "join_cycles", "join_s", "tenant_mbps",
               "window_mbps", "limit_means", "policy", "group"])
    rows = []
    for g in res["tenant_runs"]:
        rows.extend(per_second(data, g))
    write_csv(os.path.join(out, "tenants-per-second.csv"), rows,
              ["device", "n", "mode", "run", "tenant", "t_s", "mbps",
               "limit", "cycles", "group"])
    rows = []
    for rid in sorted(data.ts):
        prev = None
        for x in data.ts[rid]:
            mb = ""
            if prev and x[0] > prev[0]:
                mb = fmt((x[1] - prev[1]) / ((x[0] - prev[0]) / 1000.0) / 1e6)
            rows.append({"rid": rid, "t_ms": x[0], "bytes": x[1],
                         "files": x[2], "limit": x[3], "mode": x[4],
                         "inflight": x[5], "pending": x[6], "cycles": x[7],
                         "mbps_interval": mb})
            prev = x
    write_csv(os.path.join(out, "timeseries.csv"), rows,
              ["rid", "t_ms", "bytes", "files", "limit", "mode", "inflight",
               "pending", "cycles", "mbps_interval"])


# ---- plots ------------------------------------------------------------------

def smooth_rate(ts, window_ms=1000):
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


def plot_series(ax, ts, secs, title, best=None, events=(), fio=None,
                label="throughput (1 s window)", limit=True, color="tab:blue"):
    ts = [x for x in ts if x[0] <= secs * 1000 + 1]
    r = smooth_rate(ts)
    ax.plot([t for t, _ in r], [v for _, v in r], color=color, label=label)
    if best is not None:
        ax.axhline(best[1], color="tab:green", linestyle=":",
                   label="best fixed (%d) mean" % best[0])
    if fio:
        ax.axhline(fio, color="tab:gray", linestyle="--", linewidth=0.8,
                   label="fio best")
    for t, what in events:
        ax.axvline(t / 1000.0, color="tab:red", linestyle="--", linewidth=0.8)
        ax.text(t / 1000.0, 0, " " + what, fontsize=7, color="tab:red",
                rotation=90, va="bottom")
    ax.set_xlabel("seconds")
    ax.set_ylabel("MB/s")
    ax.set_ylim(bottom=0)
    ax.set_title(title, fontsize=9)
    if not limit:
        return None
    ax2 = ax.twinx()
    ax2.step([x[0] / 1000.0 for x in ts], [x[3] for x in ts], where="post",
             color="tab:orange", label="limit")
    ax2.set_ylabel("limit")
    ax2.set_ylim(bottom=0)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=7, loc="lower right")
    return ax2


def plots(out, data, res):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    runs_by_rid = {r["rid"]: r for r in data.runs}
    cells = {(c["device"], c["size"]): c for c in res["cells"]}
    devices = sorted({c["device"] for c in res["cells"]}, key=dev_key)

    # Throughput over time with the limit, per device and adaptive mode:
    # the first run of each size (the paper's figures 8 and 14).
    for dev in devices:
        amodes = sorted({r["mode"] for r in data.runs
                         if r.get("cell_device") == dev and
                         r["mode"].startswith("adapt:")}, key=mode_key)
        for am in amodes:
            sel = []
            for size in sorted({c["size"] for c in res["cells"]
                                if c["device"] == dev}, key=size_key):
                rs = sorted([r for r in data.runs
                             if r.get("cell_device") == dev and
                             r["size"] == size and r["mode"] == am and
                             r["rid"] in data.ts], key=lambda r: r["run"])
                if rs:
                    sel.append((size, rs[0]))
            if not sel:
                continue
            fig, axes = plt.subplots(len(sel), 1, figsize=(8, 3 * len(sel)),
                                     squeeze=False)
            for ax, (size, r) in zip(axes[:, 0], sel):
                c = cells[(dev, size)]
                plot_series(ax, data.ts[r["rid"]], r["secs"],
                            "%s, %s files, %s (policy %s), run %d: %.2f MB/s, "
                            "mean limit %.1f" % (dev, size, am,
                                                 r.get("policy", "?"),
                                                 r["run"], r["mbps"],
                                                 r["limit_mean"]),
                            best=(c["best_fixed"], c["best_fixed_mbps"]),
                            fio=c["fio_best_mbps"]
                            if not math.isnan(c["fio_best_mbps"]) else None)
            fig.tight_layout()
            name = "ts-%s-%s.png" % (dev, short(am))
            fig.savefig(os.path.join(out, name), dpi=90)
            plt.close(fig)
            made.append(name)

    # Steps: the default and the best fixed limit, over time.
    for dev in sorted({s["device"] for s in res["steps"]}, key=dev_key):
        ss = [s for s in res["steps"] if s["device"] == dev]
        fig, axes = plt.subplots(len(ss), 1, figsize=(8, 3.2 * len(ss)),
                                 squeeze=False)
        for ax, s in zip(axes[:, 0], ss):
            rd = runs_by_rid[s["default_rid"]]
            rb = runs_by_rid[s["best_rid"]]
            names, marks, ev = step_marks(data, rd)
            evs = [(e["t_ms"], e["event"]) for e in data.events.get(rd["rid"], [])]
            plot_series(ax, data.ts.get(rb["rid"], []), rb["secs"], "",
                        label="fixed:%d (best fixed)" % s["best_fixed"],
                        limit=False, color="tab:green")
            plot_series(ax, data.ts.get(rd["rid"], []), rd["secs"],
                        "%s, %s step (%s): %s %.2f MB/s, best fixed %d "
                        "%.2f MB/s" % (dev, s["kind"], s["size"],
                                       s["default_mode"], s["default_mbps"],
                                       s["best_fixed"], s["best_fixed_mbps"]),
                        events=[(int(t), w) for t, w in evs],
                        label="%s" % s["default_mode"])
        fig.tight_layout()
        name = "step-%s.png" % dev
        fig.savefig(os.path.join(out, name), dpi=90)
        plt.close(fig)
        made.append(name)

    # Tenants: per-tenant MB/s per second of the default's run.
    for t in res["tenants"]:
        g = next(x for x in res["tenant_runs"]
                 if x["group"] == t["default_group"])
        rows = per_second(data, g)
        fig, (ax, ax2) = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True)
        tot = {}
        for k in range(g["n"]):
            pts = [(x["t_s"], x["mbps"], x["limit"]) for x in rows
                   if x["tenant"] == k]
            for ts_, v, _ in pts:
                tot[ts_] = tot.get(ts_, 0.0) + v
            ax.plot([p[0] for p in pts], [p[1] for p in pts],
                    label="tenant %d" % k)
            ax2.step([p[0] for p in pts], [p[2] for p in pts], where="post",
                     label="tenant %d" % k)
        ks = sorted(tot)
        ax.plot(ks, [tot[k] for k in ks], color="black", linewidth=1,
                label="total")
        ax.axhline(t["best_fixed_total_mbps"], color="tab:green",
                   linestyle=":", label="best fixed total (%d each)"
                   % t["best_fixed"])
        for a in (ax, ax2):
            a.axvline(g["join_ms"] / 1000.0, color="tab:red", linestyle="--",
                      linewidth=0.8)
        ax.set_ylabel("MB/s (per second)")
        ax.set_ylim(bottom=0)
        ax.set_title("%s, %d tenants, %s files, %s: total %.2f MB/s, Jain "
                     "%.3f, join %s cycles" % (
                         t["device"], t["n"], t["size"], t["default_mode"],
                         t["total_mbps"], t["jain"], t["join_cycles"]),
                     fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
        ax2.set_ylabel("limit")
        ax2.set_xlabel("seconds")
        ax2.set_ylim(bottom=0)
        fig.tight_layout()
        name = "tenants-%s-n%d.png" % (t["device"], t["n"])
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
            labels = [short(m["mode"]).replace("fixed:", "") for m in ms]
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
            ax.set_title("%s, %s files (mean of up to %d, min-max)"
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
                   "best_fixed_mbps=%s default_policy=%s "
                   "default_pct_of_best=%s iopa_pct_of_best=%s pct_of_fio=%s"
                   % (c["device"], c["size"], c["best_fixed"],
                      fmt(c["best_fixed_mbps"]), c["default_policy"],
                      fmt(c["default_pct_of_best"], 1),
                      fmt(c["iopa_pct_of_best"], 1),
                      fmt(c["pct_of_fio"], 1)))
    for o in res["order"]:
        out.append("bench order device=%s size=%s fifo_mbps=%s sorted_mbps=%s"
                   % (o["device"], o["size"], fmt(o["fifo_mbps"]),
                      fmt(o["sorted_mbps"])))
    for s in res["steps"]:
        out.append("bench step device=%s kind=%s best_fixed=%d "
                   "best_fixed_mbps=%s default_mbps=%s pct_of_best_fixed=%s"
                   % (s["device"], s["kind"], s["best_fixed"],
                      fmt(s["best_fixed_mbps"]), fmt(s["default_mbps"]),
                      fmt(s["pct_of_best_fixed"], 1)))
    for t in res["tenants"]:
        jc = t["join_cycles"]
        out.append("bench tenants device=%s n=%d total_mbps=%s "
                   "best_fixed_total_mbps=%s pct=%s jain=%s join_cycles=%s"
                   % (t["device"], t["n"], fmt(t["total_mbps"]),
                      fmt(t["best_fixed_total_mbps"]), fmt(t["pct"], 1),
                      fmt(t["jain"]), "nan" if isinstance(jc, float) and
                      math.isnan(jc) else "%d" % jc))
    return out


def goals(res):
    """(text, met) per goal, for the default policy."""
    out = []
    cells = res["cells"]
    if cells:
        bad = [c for c in cells if not c["default_pct_of_best"] >=
               GOAL_PCT_OF_BEST]
        out.append(("the default policy at >= %.0f%% of the best fixed limit "
                    "in every cell: %s" % (
                        GOAL_PCT_OF_BEST,
                        "; ".join("%s %s %s%%" % (c["device"], c["size"],
                                                  fmt(c["default_pct_of_best"], 1))
                                  for c in cells)), not bad))
    if res["steps"]:
        bad = [s for s in res["steps"] if not s["pct_of_best_fixed"] >=
               GOAL_STEP_PCT]
        out.append(("the default policy at >= %.0f%% of the best single "
                    "fixed limit in every step: %s" % (
                        GOAL_STEP_PCT,
                        "; ".join("%s %s %s%% (oracle %s%%)" % (
                            s["device"], s["kind"],
                            fmt(s["pct_of_best_fixed"], 1),
                            fmt(s["oracle_pct_of_best_fixed"], 1))
                                  for s in res["steps"])), not bad))
    if res["tenants"]:
        bad = [t for t in res["tenants"]
               if not (t["pct"] >= GOAL_TENANTS_PCT and
                       t["jain"] >= GOAL_TENANTS_JAIN and
                       0 <= t["join_cycles"] <= GOAL_TENANTS_JOIN_CYCLES)]
        out.append(("tenants at >= %.0f%% of the best fixed total with "
                    "Jain >= %.2f and join_cycles <= %d: %s" % (
                        GOAL_TENANTS_PCT, GOAL_TENANTS_JAIN,
                        GOAL_TENANTS_JOIN_CYCLES,
                        "; ".join("%s n=%d %s%% jain %s join %s" % (
                            t["device"], t["n"], fmt(t["pct"], 1),
                            fmt(t["jain"], 3), t["join_cycles"])
                            for t in res["tenants"])), not bad))
    big = [c for c in cells if c["size"] == "1m" and c["device"] != "cpu"]
    if big:
        bad = [c for c in big if not c["pct_of_fio"] >= GOAL_PCT_OF_FIO_1M]
        out.append(("the default policy at >= %.0f%% of fio's best on "
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
    a("The IOPA paper's microbenchmark through `/dev/iopa`: "
      "read and checksum every file of a set of 10 KB, 100 KB or 1 MB files, "
      "with the in-flight limit pinned at 1, 2, 4, 8, 16, 32, 64 or adapted "
      "by the kernel (the module's default policy, and the policies `iopa`, "
      "`hillclimb`, `bracket` set explicitly), on an SSD-like and an HDD-like "
      "device, against fio's best on the same device and block size; "
      "CPU-bound jobs whose knee is the CPU count; a load step (a competing "
      "fio load during the middle third of the run) and a file-size step "
      "(a batch of 10 KB files, then one of 1 MB files, to the last job), "
      "each against the best single fixed limit through the same scenario "
      "and against an oracle that changes limits at the marks for free; "
      "2 and 4 tenants (processes with "
      "their own contexts) on one device, one of them joining late; and "
      "dispatch in on-disk order (`IOPA_IOC_SET_ORDER`) against FIFO on "
      "the HDD model.  **The module runs at its default settings** "
      "(cycles, `max_limit`, policy: see `sysfs` below).")
    a("")
    if note:
        a("**Note on this run:** %s" % note)
        a("")
    a("## How to run")
    a("")
    a("```sh")
    a("make bench         # dispatch bench + ssd full + hdd full (3 guest "
      "boots, ~80 min);")
    a("                   # writes bench/results/ and this file")
    a("make bench-quick   # 100 KB cells, one step and one tenants count per "
      "device,")
    a("                   # 1 run per mode, short and share runs (2 guest "
      "boots, ~19 min); writes build/bench-quick/")
    a("make -C tools/bench test   # report.py against the canned logs")
    a("```")
    a("")
    a("Knobs: the environment of `make bench`/`make bench-quick` (every "
      "`BENCH_*` variable reaches the guest), read by "
      "`tools/bench/files-bench.sh`, whose header documents each one with "
      "its full and quick defaults:")
    a("")
    a("| knob | default (full / quick) | what |")
    a("| --- | --- | --- |")
    for k, d, w in KNOBS:
        a("| `%s` | %s | %s |" % (k, d, w))
    a("")
    a("`run-files-bench.sh` also reads `IOPA_BENCH_KO` (a module to boot "
      "instead of building `kernel/`), `BENCH_MEM` (guest MB, 2048) and "
      "`BENCH_TIMEOUT` (s, 900 quick, 3600 full); the Makefile reads "
      "`BENCH_NOTE` (a remark for this README).  The guest console logs are "
      "kept in `build/bench/` (`build/bench-quick/`); `report.py --out DIR "
      "LOG...` redraws everything from them.")
    a("")
    a("On a real Linux host (as root: the script drops the page cache; it "
      "writes the controller's sysfs parameters only if `BENCH_SYSFS` asks, "
      "restoring them at the end; it loads `$IOPA_KO` if `/dev/iopa` is "
      "missing, e.g. `IOPA_KO=kernel/iopa.ko` after `make`):")
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
      "FIEMAP offsets are relative to it), which fio only reads "
      "(`--readonly`, O_DIRECT, over the region the files occupy, from "
      "FIEMAP); without it the fio characterisation and the load step are "
      "skipped and `pct_of_fio` is `nan`.  `ssd`/`hdd` names the device in "
      "the results (`hdd` adds the FIFO/SORTED comparison; the default "
      "scenarios differ per name, `BENCH_SCENARIOS` sets them).  A real "
      "device is much faster than the models: `BENCH_NFILES_<dev>_<size>` "
      "makes larger sets (runs repeat their set, so this only matters for "
      "the page cache and the region fio reads).")
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
        a("File sets (10k, 64k, 100k, 1m = 10 KiB, 64 KiB, 100 KiB, 1 MiB per "
          "file; pseudo-random content; 1000 files per directory; ext4):")
        a("")
        a("| device | size | files | bytes | region on the device (MB) |")
        a("| --- | --- | ---: | ---: | --- |")
        for s in data.sets:
            a("| %s | %s | %s | %s | %.0f - %.0f |" % (
                s.get("device"), s.get("size"), s.get("files"), s.get("bytes"),
                int(s.get("span_lo", 0)) / 1e6, int(s.get("span_hi", 0)) / 1e6))
        a("")
    a("Each run: one submitter (per tenant) walking its set's directories in "
      "readdir (hash) order, submitting one job per file, and walking the "
      "set again each time it ends until the run's time cap (each file's "
      "pages are dropped from the page cache when its job is done, so every "
      "pass reads the device); at most `outstanding` jobs submitted and not "
      "reaped; 64 worker threads per submitter in every mode (only the "
      "kernel's limit differs); each job is a `pread()` of the whole file "
      "and a 64-bit Fletcher-like checksum (CPU-bound jobs: 1 + "
      "`cpu_passes` checksum passes over cached files); page cache dropped "
      "before every run (not before the CPU-bound ones); the run stops at "
      "its time cap (pending jobs cancelled) and its MB/s is the bytes read "
      "until then over the elapsed time.  Cell modes run interleaved (run 1 "
      "of every mode, then run 2, ...): run 1 screens every fixed limit, "
      "runs 2 and later repeat the `screen` fixed limits that did best in "
      "run 1, with the default policy; the explicit policies run in the "
      "first `policy_runs` run(s).  `adapt:default` sets no policy: the "
      "module's `default_policy` decides.  The controller's parameters are "
      "the module's defaults (`sysfs` above; `sysfs_changed` lists what "
      "`BENCH_SYSFS` changed, if anything).")
    a("")
    a("## Results")
    a("")
    if cells:
        a("MB/s (10^6 bytes per second), means over the runs of each mode "
          "(the most runs of a mode in the cell: `runs`); `default` is the "
          "run that set no policy (its policy in brackets); `%` columns are "
          "a mean over the best fixed limit's mean; `% of fio` is the "
          "default's mean over fio's best.  An explicit policy that is the "
          "default and was not run as such shows the default's figure.  "
          "Device `cpu`: CPU-bound jobs (cached files), whose knee is the "
          "CPU count.")
        a("")
        a("| device | size | runs | best fixed | best fixed MB/s | default "
          "MB/s (mean limit) | default % | iopa % | hillclimb % | bracket % "
          "| fio best MB/s (qd) | % of fio |")
        a("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
          "---: | ---: | ---: |")
        for c in cells:
            a("| %s | %s | %d | %d | %s | %s (%s) [%s] | %s | %s | %s | %s | "
              "%s (%s) | %s |" % (
                  c["device"], c["size"], c["runs"], c["best_fixed"],
                  fmt(c["best_fixed_mbps"], 2), fmt(c["default_mbps"], 2),
                  fmt(c["default_limit_mean"], 1), c["default_policy"],
                  fmt(c["default_pct_of_best"], 1),
                  fmt(c["iopa_pct_of_best"], 1),
                  fmt(c["hillclimb_pct_of_best"], 1),
                  fmt(c["bracket_pct_of_best"], 1),
                  fmt(c["fio_best_mbps"], 2), c["fio_best_qd"],
                  fmt(c["pct_of_fio"], 1)))
        a("")
        a("Every mode (MB/s, mean and min-max over the runs, number of runs):")
        a("")
        hdr = sorted({m["mode"] for m in res["modes"]}, key=mode_key)
        a("| device | size | " + " | ".join(short(h) for h in hdr) + " |")
        a("| --- | --- |" + " ---: |" * len(hdr))
        for c in cells:
            row = []
            for h in hdr:
                m = [x for x in res["modes"] if x["device"] == c["device"] and
                     x["size"] == c["size"] and x["mode"] == h]
                row.append("%s (%s-%s) x%d" % (fmt(m[0]["mbps_mean"], 2),
                                               fmt(m[0]["mbps_min"], 2),
                                               fmt(m[0]["mbps_max"], 2),
                                               m[0]["runs"])
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
    a("### Steps: the load changes, the file size changes")
    a("")
    if res["steps"]:
        a("`load`: fio random reads (queue depth in the table) on the set's "
          "region from 1/3 to 2/3 of the run (`--startdelay`; under TCG fio's "
          "I/O was seen to begin up to about 2 s after the mark).  `size`: "
          "a batch (`size_work` N1:N2 in the settings): one submitter "
          "processes N1 10 KB files, then N2 1 MB files, to the last job; "
          "each phase takes about half the run at its best fixed limit, "
          "and its MB/s is all the bytes over the time to the last job, so "
          "that a phase run at a poor limit costs its own time, as it "
          "would a service with that work to do (`before` ends when the "
          "last 10 KB file was submitted; the jobs already submitted "
          "finish after it, at most `outstanding`).  Every fixed limit of "
          "the scenario ran through the same scenario; `best fixed` is the "
          "single fixed limit with the most MB/s over the whole run.  "
          "`oracle`: each segment at the fixed limit best in that segment, "
          "switched at the marks at no cost (load: the segments' MB/s of "
          "the fixed runs weighted by their lengths; size: the default "
          "run's bytes of each segment over the time they take at that "
          "segment's best MB/s): what no policy can beat, and what a "
          "moving optimum is worth over the best single limit (`oracle %` "
          "of best fixed).")
        a("")
        a("| device | step | best fixed | best fixed MB/s | default MB/s "
          "[policy] | % of best fixed | oracle MB/s | oracle % of best "
          "fixed | default % of oracle |")
        a("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for s in res["steps"]:
            a("| %s | %s (%s) | %d | %s | %s [%s] | %s | %s | %s | %s |" % (
                s["device"], s["kind"], s["size"], s["best_fixed"],
                fmt(s["best_fixed_mbps"], 2), fmt(s["default_mbps"], 2),
                s["default_policy"], fmt(s["pct_of_best_fixed"], 1),
                fmt(s["oracle_mbps"], 2),
                fmt(s["oracle_pct_of_best_fixed"], 1),
                fmt(s["pct_of_oracle"], 1)))
        a("")
        a("Every mode, whole run and by segment (MB/s, mean limit):")
        a("")
        a("| device | step | mode | runs | whole run | % of best fixed | "
          "before | during (load) | after | fio MB/s |")
        a("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | "
          "---: |")
        for m in res["step_modes"]:
            def seg(n):
                return "%s, %s" % (fmt(m.get("mbps_" + n), 2),
                                   fmt(m.get("limit_" + n), 1)) \
                    if "mbps_" + n in m else ""
            a("| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s |" % (
                m["device"], m["kind"], m["mode"], m["runs"],
                fmt(m["mbps"], 2), fmt(m["pct_of_best_fixed"], 1),
                seg("before"), seg("during"), seg("after"),
                fmt(m.get("fio_mbps"), 2) if "fio_mbps" in m else ""))
    else:
        a("(no step runs in these logs)")
    a("")
    a("### Tenants")
    a("")
    if res["tenants"]:
        a("n processes, each with its own `/dev/iopa` context, submitter and "
          "64 workers, every one in the same mode, each reading every n-th "
          "file of the set; the last one starts late (`join` s).  `total`: "
          "all tenants' bytes over the run; `best fixed total`: the best "
          "mean total with every tenant at the same fixed limit (in "
          "brackets); the *window* runs from the late tenant's start to the "
          "end; `Jain` is (sum x)^2 / (n sum x^2) over the tenants' MB/s in "
          "the window (1: equal shares).  The late tenant has its share "
          "from the first moment t (its start or one of its samples) such "
          "that over the next %g s it read at least %d%% of the fair share "
          "(the window's total over n): `join s` is t after its start, "
          "`join cycles` the cycles the device's budget controller ran from "
          "its start to t (GET_STATE `group_cycles` of a tenant already "
          "running), -1 if it never had its share."
          % (JOIN_WINDOW_MS / 1000.0, int(JOIN_SHARE * 100)))
        a("")
        a("| device | n | size | join (s) | default total MB/s [policy] | "
          "best fixed total MB/s (limit) | % | Jain | Jain, best fixed | "
          "join cycles | join s |")
        a("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | "
          "---: | ---: |")
        for t in res["tenants"]:
            a("| %s | %d | %s | %s | %s [%s] | %s (%d) | %s | %s | %s | %s "
              "| %s |" % (
                  t["device"], t["n"], t["size"], fmt(t["join_ms"] / 1000.0, 1),
                  fmt(t["total_mbps"], 2), t["policy"],
                  fmt(t["best_fixed_total_mbps"], 2), t["best_fixed"],
                  fmt(t["pct"], 1), fmt(t["jain"]), fmt(t["best_fixed_jain"]),
                  t["join_cycles"], fmt(t["join_s"], 1)))
        a("")
        a("Every run (tenants' MB/s over their own time; in the window; mean "
          "limits):")
        a("")
        a("| device | n | mode | run | total MB/s | per tenant | in the "
          "window | Jain | join cycles | mean limits |")
        a("| --- | ---: | --- | ---: | ---: | --- | --- | ---: | ---: | --- |")
        for g in sorted(res["tenant_runs"], key=lambda g: (
                dev_key(g["device"]), g["n"], mode_key(g["mode"]), g["run"])):
            a("| %s | %d | %s | %d | %s | %s | %s | %s | %s | %s |" % (
                g["device"], g["n"], g["mode"], g["run"],
                fmt(g["total_mbps"], 2),
                " ".join(fmt(x, 2) for x in g["tenant_mbps"]),
                " ".join(fmt(x, 2) for x in g["window_mbps"]),
                fmt(g["jain"]), g["join_cycles"],
                " ".join(fmt(x, 1) for x in g["limit_means"])))
    else:
        a("(no tenants runs in these logs)")
    a("")
    a("### Dispatch order on the HDD model")
    a("")
    if res["order"]:
        a("FIFO against SORTED (`IOPA_ORDER_SORTED`, set before the first "
          "submission), at the fixed limit stated in `mode`: the knee of the "
          "cell (the smallest fixed limit within 5% of the best fixed mean) "
          "unless `BENCH_ORDER_LIMIT` set one; 4096 jobs may be queued, "
          "which SORTED sorts.")
        a("")
        a("The SORTED runs log the first block of each fetched job: `up` and "
          "`down` are the files per second fetched while the sweep went up "
          "or down the disk (the time between two fetches counted for the "
          "direction of the step), `down time` the share of the time spent "
          "sweeping down, `reversals` the turns of the sweep (over all "
          "runs).")
        a("")
        a("| device | size | mode | FIFO MB/s | SORTED MB/s | SORTED / FIFO "
          "| SORTED up files/s | down files/s | down time | reversals |")
        a("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: "
          "| ---: |")
        for o in res["order"]:
            a("| %s | %s | %s | %s | %s | %s | %s | %s | %s%% | %s |" % (
                o["device"], o["size"], o["mode"], fmt(o["fifo_mbps"], 2),
                fmt(o["sorted_mbps"], 2), fmt(o["ratio"], 2),
                fmt(o.get("sorted_up_files_per_s"), 0),
                fmt(o.get("sorted_down_files_per_s"), 0),
                fmt(o.get("sorted_down_time_pct"), 0),
                o.get("sorted_reversals", "")))
    else:
        a("(no order runs in these logs)")
    a("")
    if data.dispatch:
        a("### Dispatch cost (`iopa-bench-dispatch`)")
        a("")
        a("Empty jobs with a 40-byte descriptor in and a result out, the "
          "same window and workers on every path; `inproc` is an "
          "in-process pool doing the same work.  Medians of interleaved "
          "runs; `cpu us/job`: the process's CPU time per job.")
        a("")
        a("| path | batch | fd | jobs/s | cpu us/job | ratio to inproc |")
        a("| --- | ---: | --- | ---: | ---: | ---: |")
        for d in data.dispatch:
            a("| %s | %s | %s | %s | %s | %s |" % (
                d.get("path"), d.get("batch", ""), d.get("fd", ""),
                d.get("jobs_per_s"), d.get("cpu_us_per_job", ""),
                d.get("ratio_to_inproc", d.get("ratio_to_pthread", ""))))
        a("")
    if data.latency:
        a("One job on an idle queue, submission to reaped completion "
          "(fd installed):")
        a("")
        a("| path | median us | min us | max us |")
        a("| --- | ---: | ---: | ---: |")
        for d in data.latency:
            a("| %s | %s | %s | %s |" % (d.get("path"), d.get("us_median"),
                                         d.get("us_min"), d.get("us_max")))
        a("")
    a("### Plots")
    a("")
    for p in pngs:
        a("- [%s](%s%s)" % (p, out_rel, p))
    if not pngs:
        a("(none drawn)")
    a("")
    a("`ts-<device>-<mode>.png`: throughput (1 s window) and the limit over "
      "the first run of each size, like the IOPA paper's figures 8 and 14; "
      "`step-<device>.png`: the default and the best fixed limit through "
      "each step; `tenants-<device>-n<k>.png`: each tenant's MB/s per "
      "second and its limit in the default's run; `bars-<device>.png`: "
      "every mode per size; `order.png`: FIFO against SORTED.  CSV files "
      "beside them: `cells.csv` (the table), `modes.csv`, `runs.csv` (every "
      "run), `steps.csv`, `tenants.csv`, `tenants-per-second.csv`, "
      "`timeseries.csv` (the 100 ms samples of the runs that have them), "
      "`fio.csv`, `order.csv`.")
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
        a("None (no run more than %d%% away from the median of its mode, "
          "among modes with 3 runs or more)." % int(OUTLIER * 100))
    a("")
    a("## Goals (for the default policy)")
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
      "(40 ms) and a tag depth (16): 400 requests/s, a real SSD slowed "
      "~100 times so that the 2 emulated CPUs are not the bottleneck "
      "(they were 20-30% busy at the knee when measured); its knee is its "
      "tag depth, 16, for every file size (Little's law).  The HDD is "
      "tools/hdd-model (7200 rpm, 100 MB/s, seeks after Ruemmler and "
      "Wilkes): it serves requests in arrival order with 64 tags, so "
      "mq-deadline rarely has anything to sort, unlike a disk with NCQ.")
    a("- Runs last 20 s (steps and tenants 30 s) at the module's default "
      "cycles: the start-up of an adaptive run is part of its figure, as "
      "it would be for a job of that length; longer jobs would weigh it "
      "less.")
    a("- Cells: run 1 screens the fixed limits; the ones that did not make "
      "the cut have one run (see `x1` in the every-mode table), which is "
      "enough to see they are not the best, not to compare them finely.")
    a("- Steps: one run per mode; tenants: run 1 every mode, runs 2.. the "
      "default and the best fixed mode of run 1 (`tenant_runs` in the "
      "settings).  A few fixed limits only (chosen around the knee: see "
      "the settings); the best fixed limit of a step or a tenants count "
      "is the best of those.")
    a("- fio reads with O_DIRECT and does no processing; the benchmark "
      "reads through the page cache (with readahead) and checksums, so "
      "`% of fio` also measures that overhead.")
    a("- The time cap stops a run between files: the bytes of files still "
      "being read count up to the cap.")
    a("- SORTED sweeps up, then down (SCAN).  On the HDD model, which has "
      "no track cache, a downward sweep reads neighbouring files in "
      "descending order and each of them waits for nearly a full "
      "revolution (8.3 ms), while an upward sweep finds the next file "
      "under the head: compare the `up` and `down` files/s of the order "
      "table.")
    a("")
    with open(path, "w") as f:
        f.write("\n".join(L))


# The knobs of files-bench.sh, for the README's "How to run".
KNOBS = [
    ("BENCH_SECS", "20", "cell run length (s)"),
    ("BENCH_RUNS", "3 / 1", "runs per cell mode, interleaved"),
    ("BENCH_SIZES", "`10k 100k 1m` / `BENCH_SIZE`", "cell file sizes"),
    ("BENCH_SIZE", "`100k`", "file size of the load step, the tenants and "
     "the quick cell (`BENCH_QUICK_SIZE`: the same)"),
    ("BENCH_FIXED", "`1 2 4 8 16 32 64` / `4 16 64`", "cell fixed limits"),
    ("BENCH_SCREEN", "3", "fixed limits repeated in runs 2.. (the best of "
     "run 1; 0: all)"),
    ("BENCH_POLICIES", "`iopa hillclimb bracket` minus the default / `iopa`",
     "explicit policies (`adapt:P`; one the module refuses is skipped)"),
    ("BENCH_POLICY_RUNS", "1", "runs of the explicit policies"),
    ("BENCH_MODES", "(unset)", "if set: the mode list of every cell run"),
    ("BENCH_SCENARIOS", "ssd `cells load size tenants cpu short share`, "
     "hdd `cells order load size tenants short share` / ssd `cells load "
     "tenants short share`, hdd `cells order size tenants short share`",
     "what runs"),
    ("BENCH_STEP_SECS", "30", "load step run length (s); the size step's "
     "batch takes about as long at its best, 4 times as long at most"),
    ("BENCH_LOAD_MODES", "`fixed:4 fixed:16 fixed:64 adapt:default` (hdd: "
     "and `fixed:1`) / `fixed:16 fixed:64 adapt:default`",
     "modes of the load step"),
    ("BENCH_LOAD_SIZE", "ssd `BENCH_SIZE`, hdd `1m`", "file size of the load "
     "step (hdd: one stream is best alone, more hold their own against fio)"),
    ("BENCH_COMPETE_QD", "16 (ssd), 4 (hdd)", "fio's queue depth in the load "
     "step"),
    ("BENCH_SIZE_MODES", "ssd `fixed:4 fixed:16 fixed:64 adapt:default`, "
     "hdd `fixed:1 fixed:2 fixed:4 fixed:16 adapt:default` / ssd `fixed:16 "
     "fixed:64 adapt:default`, hdd `fixed:1 fixed:4 adapt:default`",
     "modes of the size step"),
    ("BENCH_SWITCH_FROM, BENCH_SWITCH_TO", "`10k`, `1m`", "the size step's "
     "sets"),
    ("BENCH_SIZE_WORK", "ssd `5600:720`, hdd `2500:640`", "the size step's "
     "batch: files of each set (each about 15 s at the model's best fixed "
     "limit)"),
    ("BENCH_TENANTS", "`2 4` / ssd `2`, hdd `4`", "tenant counts"),
    ("BENCH_TENANT_SECS", "30", "tenants run length (s)"),
    ("BENCH_TENANT_RUNS", "3 / 1", "tenants runs: runs 2.. repeat the "
     "default mode and the best fixed mode of run 1"),
    ("BENCH_TENANT_JOIN", "a quarter of the run", "late tenant's start (s)"),
    ("BENCH_TENANT_MODES", "`fixed:4 fixed:16 adapt:default`",
     "modes of the tenants runs (every tenant in the same mode)"),
    ("BENCH_CPU_FIXED", "`1 2 4 16`", "fixed limits of the CPU-bound cell"),
    ("BENCH_CPU_RUNS", "2 / 1", "runs of the CPU-bound cell"),
    ("BENCH_CPU_PASSES", "256", "extra checksum passes per chunk of a "
     "CPU-bound job"),
    ("BENCH_SHORT_SECS", "`2 5` / `5`", "short run lengths (s): each "
     "round from a fresh module (cold), again (warm), then the fixed "
     "limits; `bench short` and `bench converge` lines"),
    ("BENCH_SHORT_ROUNDS", "3 / 2", "short rounds, interleaved"),
    ("BENCH_SHORT_FIXED", "ssd `4 16`, hdd `1 4 16`", "fixed limits of the "
     "short runs"),
    ("BENCH_SHARE_N", "`2 4`", "processes on one device in the share "
     "runs (`bench share` lines), against one alone at its best fixed "
     "limit"),
    ("BENCH_SHARE_ROUNDS", "3 / 1", "share rounds"),
    ("BENCH_SHARE_SECS", "15", "share run length (s); Jain's index over "
     "5 s windows"),
    ("BENCH_SHARE_SIZE", "ssd `BENCH_SIZE`, hdd `1m`", "file size of the "
     "share runs"),
    ("BENCH_SHARE_FIXED", "ssd `4 16`, hdd `1 2 4`", "the solo process's "
     "fixed limits"),
    ("BENCH_ORDER_SIZES", "`10k` / `BENCH_SIZE`", "sizes of the FIFO/SORTED "
     "comparison (hdd)"),
    ("BENCH_ORDER_LIMIT", "the cell's knee", "its fixed limit"),
    ("BENCH_ORDER_OUTSTANDING", "4096", "jobs queued in the order runs"),
    ("BENCH_FIO_QDS", "`1 4 16 64`", "fio queue depths"),
    ("BENCH_FIO_SECS", "2", "fio run length (s)"),
    ("BENCH_WORKERS", "64", "workers per submitter"),
    ("BENCH_OUTSTANDING", "256", "jobs submitted and not reaped, per "
     "submitter"),
    ("BENCH_SYSFS", "(empty)", "`key=value` controller settings to write to "
     "`/sys/class/misc/iopa/` (restored at the end)"),
    ("BENCH_TS", "`adapt`", "time series of cell runs: `adapt`, `all`, "
     "`none` (scenario runs always have theirs)"),
    ("BENCH_SSD_NSEC, BENCH_SSD_QD, BENCH_SSD_GB", "40000000, 16, 1",
     "the SSD model: latency (ns), tags, size (GB of guest RAM)"),
    ("BENCH_SSD_PARAMS", "(from the above)", "all of null_blk's parameters"),
    ("BENCH_HDD_PARAMS", "(defaults)", "iopa_hdd's parameters"),
    ("BENCH_NFILES_<dev>_<size>", "4000 (10k), 2000/1500 (100k ssd/hdd), "
     "200 (1m), 500 (64k)", "files per set"),
]


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
                    m = LATENCY_RE.match(line.rstrip("\n"))
                    if m:
                        data.latency.append(kv(m.group(1), args.dispatch_log))
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
    for line in data.guest_lines:
        print(line)
    for text, met in goals(res):
        print("goal: %s: %s" % ("met" if met else "NOT met", text))
    for r in res["outliers"]:
        print("outlier: %s %s %s %s %s run %d: %s MB/s, median %s"
              % (r["device"], r["size"], r["kind"], r["mode"], r["order"],
                 r["run"], fmt(r["mbps"], 2), fmt(r["median"], 2)))
    print("report: %d runs, %d cells, %d order comparisons, %d steps, %d "
          "tenants counts; CSV%s in %s; %s"
          % (len(data.runs), len(res["cells"]), len(res["order"]),
             len(res["steps"]), len(res["tenants"]),
             " and PNG" if pngs else "", args.out, rd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
