#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Validate `iopactl metrics` output with a real parser of the format.

    metrics-check.py [--format openmetrics|prometheus] [--min-subs N]
                     [--without-metrics] [--cgroup PATH] FILE

OpenMetrics (the default) goes through prometheus_client's OpenMetrics
parser, which is strict: it rejects what the specification forbids (a
missing # EOF, bad escapes, buckets out of order, a histogram whose
+Inf bucket is not its count, interleaved families...).  The Prometheus
text format 0.0.4 goes through prometheus_client's parser of that
format (Debian: python3-prometheus-client).  Then iopa's own rules:
the families a scrape must have, each submitter labelled ctx, sub, pid,
comm, cgroup and device, and each submitter's service-time count equal
to its completed jobs (the kernel counts both at the same completion).
Exit status 0 if all holds; the problems on stderr otherwise.
"""
import argparse
import sys

from prometheus_client.openmetrics.parser import \
    text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import \
    text_string_to_metric_families as parse_prometheus

MODULE = ["iopa_module", "iopa_jobs_submitted", "iopa_jobs_completed",
          "iopa_jobs_pending", "iopa_submitters", "iopa_device_budget",
          "iopa_device_knee"]
PER_SUB = ["iopa_submitter_limit", "iopa_submitter_jobs_completed",
           "iopa_submitter_jobs_failed", "iopa_submitter_io_bytes",
           "iopa_submitter_queue_wait_seconds",
           "iopa_submitter_service_seconds"]
SUB_LABELS = {"ctx", "sub", "pid", "comm", "cgroup", "device"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--format", choices=["openmetrics", "prometheus"],
                    default="openmetrics")
    ap.add_argument("--min-subs", type=int, default=0)
    ap.add_argument("--without-metrics", action="store_true",
                    help="a module without IOPA_FEAT_METRICS: no histograms")
    ap.add_argument("--cgroup", default=None,
                    help="a submitter must carry this cgroup label")
    ap.add_argument("--module-loaded", type=int, choices=[0, 1],
                    default=None,
                    help="iopa_module_loaded must have this value (0: the "
                    "only family)")
    ap.add_argument("file")
    a = ap.parse_args()
    text = open(a.file, encoding="utf-8").read()
    bad = []
    try:
        if a.format == "openmetrics":
            fams = list(parse_openmetrics(text))
        else:
            if "# EOF" in text or "# UNIT" in text:
                bad.append("OpenMetrics-only lines in the 0.0.4 format")
            fams = list(parse_prometheus(text))
    except Exception as e:  # the parser's verdict, whatever its type
        print(f"{a.file}: not valid {a.format}: {e}", file=sys.stderr)
        return 1
    by = {}
    for f in fams:
        # The 0.0.4 format names a counter's family with _total, and
        # has no info type (a gauge named with _info).
        name = f.name
        for suffix in ("_total", "_info"):
            if a.format == "prometheus" and name.endswith(suffix):
                name = name[:-len(suffix)]
        by[name] = f
    loaded = [s.value for s in by["iopa_module_loaded"].samples] \
        if "iopa_module_loaded" in by else []
    if loaded not in ([0.0], [1.0]):
        bad.append(f"iopa_module_loaded: {loaded}, expected one 0 or 1")
    if a.module_loaded is not None and loaded != [float(a.module_loaded)]:
        bad.append(f"iopa_module_loaded {loaded}, expected {a.module_loaded}")
    if loaded == [0.0] and len(fams) != 1:
        bad.append(f"{len(fams)} families without the module, expected 1")
    for n in MODULE if loaded != [0.0] else []:
        if n not in by:
            bad.append(f"family {n} missing")
    subs = set()
    if "iopa_submitter_limit" in by:
        for s in by["iopa_submitter_limit"].samples:
            if set(s.labels) != SUB_LABELS:
                bad.append(f"submitter labels {sorted(s.labels)}")
            subs.add((s.labels.get("ctx"), s.labels.get("sub")))
    if len(subs) < a.min_subs:
        bad.append(f"{len(subs)} submitters, expected >= {a.min_subs}")
    if subs:
        for n in PER_SUB[:1] if a.without_metrics else PER_SUB:
            if n not in by:
                bad.append(f"family {n} missing")
    if a.without_metrics and "iopa_submitter_service_seconds" in by:
        bad.append("histograms from a module without IOPA_FEAT_METRICS")
    if a.cgroup is not None and "iopa_submitter_limit" in by:
        cgs = {s.labels.get("cgroup") for s in
               by["iopa_submitter_limit"].samples}
        if a.cgroup not in cgs:
            bad.append(f"no submitter in cgroup {a.cgroup!r} ({sorted(cgs)})")
    if "iopa_submitter_service_seconds" in by and \
            "iopa_submitter_jobs_completed" in by:
        done = {(s.labels["ctx"], s.labels["sub"]): s.value
                for s in by["iopa_submitter_jobs_completed"].samples}
        for s in by["iopa_submitter_service_seconds"].samples:
            if not s.name.endswith("_count"):
                continue
            k = (s.labels["ctx"], s.labels["sub"])
            if done.get(k) != s.value:
                bad.append(f"submitter {k}: service count {s.value}, "
                           f"completed {done.get(k)}")
    for b in bad:
        print(f"{a.file}: {b}", file=sys.stderr)
    print(f"{a.file}: {a.format}, {len(fams)} families, {len(subs)} "
          f"submitters: {'ok' if not bad else 'FAILED'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
