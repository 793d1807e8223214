#!/usr/bin/env python3
"""Checks that the chart's tuning values (deploy/helm/continuum-event-broker/ci/tuning-values.yaml) show in
its render: image by digest, log_level, extra env, volumes and mounts, no prometheus.io/* annotations while a
PodMonitor scrapes, and the PrometheusRule tuned (one alert's for:, one switched off, labels added with the
alert's own severity kept, runbook links moved).

usage: check_helm_tuning.py < rendered.yaml   (exit 1 on any finding)
"""
import sys

import yaml

DIGEST = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"


def main():
    docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
    dep = next(d for d in docs if d["kind"] == "Deployment")
    pod = dep["spec"]["template"]
    c = pod["spec"]["containers"][0]
    cfg = yaml.safe_load(next(d for d in docs if d["kind"] == "ConfigMap")["data"]["config.yaml"])
    rules = [r for g in next(d for d in docs if d["kind"] == "PrometheusRule")["spec"]["groups"] for r in g["rules"]]
    by = {r["alert"]: r for r in rules}
    problems = []

    def want(cond, what):
        if not cond:
            problems.append(what)

    want(c["image"].endswith("@" + DIGEST), "image by digest")
    want(cfg.get("log_level") == "debug", "log_level debug in config.yaml")
    want(any(e["name"] == "JAVA_TOOL_OPTIONS" for e in c["env"]), "extra env")
    want(any(v["name"] == "extra-ca" for v in pod["spec"]["volumes"]), "extra volume")
    want(any(m["name"] == "extra-ca" for m in c["volumeMounts"]), "extra mount")
    want(not any(k.startswith("prometheus.io/") for k in pod["metadata"].get("annotations") or {}),
         "no prometheus.io annotations while a PodMonitor scrapes")
    want(by.get("ContinuumEventBrokerSessionDown", {}).get("for") == "10m", "SessionDown for: 10m")
    want("ContinuumEventBrokerRefusalSpike" not in by, "RefusalSpike switched off")
    want(all(r["labels"].get("team") == "inference-platform" for r in rules), "team label on every alert")
    want(all(r["labels"].get("severity") != "ignored" for r in rules), "an alert's own severity wins")
    want(all(r["annotations"]["runbook_url"].startswith("https://docs.example.com/broker/troubleshooting#")
             for r in rules if "runbook_url" in r.get("annotations", {})), "runbook links moved")
    want(len(rules) >= 10, "the other alerts kept")
    if problems:
        print("  FAIL helm tuning-values: " + "; ".join(problems))
        return 1
    print(f"  ok   helm tuning-values: digest, log_level, env, volumes, no scrape annotations, {len(rules)} alerts tuned")
    return 0


if __name__ == "__main__":
    sys.exit(main())
