#!/usr/bin/env bash
# Renders every deployment manifest and checks it (R-OPS-1..3, R-BEH-8, R-CFG):
#
#   packaging/verify-manifests.sh
#
# - Kustomize: `kubectl kustomize` of the base and of every overlay, and of the base with the opt-in
#   readiness component (Debian's kubectl, installed
#   with apt-get when missing and running as root), checked by packaging/check_manifests.py
#   (kinds, Role verbs exactly get/list/watch on dynamoworkermetadatas.nvidia.com, replicas 1,
#   securityContext, probes, terminationGracePeriodSeconds > drain_deadline, credential from a
#   mounted Secret, NetworkPolicy, one distinct client_id per Deployment);
#   placement across identities computed from the rendered Pods: spread/anti-affinity and
#   PodDisruptionBudget selectors matching every identity, distinct config checksums);
# - the checker's own mutation self-test (each of its rules must catch a broken manifest), on a
#   one-identity and a two-identity rendering;
# - Helm: the chart rendered by Helm's engine through helm-java (Maven Central; there is no helm
#   binary in Debian 12), with the values in deploy/helm/continuum-event-broker/ci/, checked the
#   same way; and renders that must fail, each with its own message (grace period <=
#   drain_deadline, a duplicated identity, a plaintext bus_url, an enabled NetworkPolicy without
#   the addresses it needs, an unknown or mistyped value refused by values.schema.json);
# - Kustomize overlays/production and the chart with ci/ha-values.yaml (the same inputs) compared:
#   same kinds, container, probes, security contexts, placement, RBAC and NetworkPolicy rules;
# - the chart's README current (packaging/chart-readme.py --check), and the docs' commands as written: every
#   `kubectl apply -k`/`kubectl kustomize` directory they name renders, and deployment.md's Helm values render;
# - monitoring: promtool check rules, the chart's copy of the rules, the dashboard JSON.
# Ends with "N passed, M failed"; exit status 1 when anything failed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"
kdir=deploy/kubernetes/event-broker
chart=deploy/helm/continuum-event-broker
passed=0
failed=0
pass() { passed=$((passed + 1)); }
failcount() { failed=$((failed + 1)); }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

apt_install() {
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "verify-manifests: installing $* (apt-get)"
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null) \
            || { echo "verify-manifests: could not install $*" >&2; return 1; }
    else
        echo "verify-manifests: $* missing and cannot be installed here (needs root and apt-get)" >&2
        return 1
    fi
}
command -v kubectl >/dev/null 2>&1 || apt_install kubectl
python=""
for candidate in python3 python; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import yaml' 2>/dev/null; then python="$candidate"; break; fi
done
if [ -z "$python" ]; then
    apt_install python3 python3-yaml
    python=python3
fi
check() { "$python" "$here/check_manifests.py" "$@"; }

# --- Kustomize --------------------------------------------------------------------------------
echo "==> Kustomize ($(kubectl version --client 2>/dev/null | sed -n 's/^Kustomize Version: //p'))"
# name  expected-identities  extra checker flags
targets=(
    "base 1"
    "overlays/staging 1 --require-namespace"
    "overlays/production 2 --require-namespace"
    "overlays/openshift 1 --require-namespace"
)
for dir in "$kdir"/overlays/*/; do
    d="overlays/$(basename "$dir")"
    printf '%s\n' "${targets[@]}" | grep -q "^$d " || { echo "  FAIL $d: overlay not listed in verify-manifests.sh"; failcount; }
done
for t in "${targets[@]}"; do
    read -r name identities flags <<<"$t"
    if ! kubectl kustomize "$kdir/$name" > "$tmp/k.yaml" 2> "$tmp/k.err"; then
        echo "  FAIL kustomize $name: $(cat "$tmp/k.err")"; failcount; continue
    fi
    # shellcheck disable=SC2086
    if check --identities "$identities" $flags "kustomize $name" < "$tmp/k.yaml"; then pass; else failcount; fi
done
# The opt-in readiness (components/session-readiness) on the base: the probe asks /readyz/session.
mkdir -p "$tmp/session-readiness"
# (Kustomize takes relative paths only.)
printf 'resources:\n  - %s\ncomponents:\n  - %s\n' \
    "$(realpath --relative-to="$tmp/session-readiness" "$root/$kdir/base")" \
    "$(realpath --relative-to="$tmp/session-readiness" "$root/$kdir/components/session-readiness")" \
    > "$tmp/session-readiness/kustomization.yaml"
if kubectl kustomize "$tmp/session-readiness" > "$tmp/k.yaml" 2> "$tmp/k.err"; then
    if check --identities 1 --readiness /readyz/session "kustomize base + components/session-readiness" < "$tmp/k.yaml"; then
        pass; else failcount; fi
else
    echo "  FAIL kustomize base + components/session-readiness: $(cat "$tmp/k.err")"; failcount
fi
for o in staging production openshift; do
    kubectl kustomize "$kdir/overlays/$o" > "$tmp/$o.yaml"
    if check --self-test < "$tmp/$o.yaml"; then pass; else failcount; fi
done
# overlays/production with its PodMonitor (monitoring/production, apart for the CRDs it needs): the
# monitor reaches both identities and sets the labels the identity alerts group by.
if kubectl kustomize "$kdir/monitoring/production" > "$tmp/mon.yaml" 2> "$tmp/k.err"; then
    { cat "$tmp/production.yaml"; echo "---"; cat "$tmp/mon.yaml"; } > "$tmp/production-monitored.yaml"
    if check --identities 2 --require-namespace "kustomize overlays/production + monitoring/production" \
        < "$tmp/production-monitored.yaml"; then pass; else failcount; fi
    if check --self-test < "$tmp/production-monitored.yaml"; then pass; else failcount; fi
else
    echo "  FAIL kustomize monitoring/production: $(cat "$tmp/k.err")"; failcount
fi

# Watching one more namespace is one step for the Role (overlays/production/watch-namespace): on a copy,
# gpu-serving-eval goes into both configs' watch_namespaces and the NetworkPolicy. Without the step the
# checker must fail it (no Role there); with its two-line directory listed, it must pass.
cp -r "$kdir" "$tmp/kcopy"
prod="$tmp/kcopy/overlays/production"
sed -i 's/^  - gpu-serving-batch$/  - gpu-serving-batch\n  - gpu-serving-eval/' "$prod"/broker-a/config.yaml "$prod"/broker-b/config.yaml
sed -i 's/values: \["gpu-serving", "gpu-serving-batch"\]/values: ["gpu-serving", "gpu-serving-batch", "gpu-serving-eval"]/' \
    "$prod"/common/networkpolicy-patch.yaml
if kubectl kustomize "$prod" > "$tmp/eval.yaml" 2> "$tmp/k.err" \
        && ! check --identities 2 --require-namespace "eval without its step" < "$tmp/eval.yaml" > "$tmp/eval.out" \
        && grep -q "watch namespace gpu-serving-eval has no Role" "$tmp/eval.out"; then
    mkdir "$prod/watch-gpu-serving-eval"
    printf 'namespace: gpu-serving-eval\nresources: [../watch-namespace]\n' > "$prod/watch-gpu-serving-eval/kustomization.yaml"
    sed -i 's/^  - watch-gpu-serving-batch$/  - watch-gpu-serving-batch\n  - watch-gpu-serving-eval/' "$prod/kustomization.yaml"
    if kubectl kustomize "$prod" > "$tmp/eval.yaml" 2> "$tmp/k.err" \
            && check --identities 2 --require-namespace "kustomize overlays/production + a watched namespace in one step" \
                < "$tmp/eval.yaml"; then pass; else echo "  FAIL the one step: $(cat "$tmp/k.err")"; failcount; fi
else
    echo "  FAIL a watched namespace without its Role was not refused: $(cat "$tmp/k.err" "$tmp/eval.out" 2>/dev/null | head -5)"
    failcount
fi

# --- Helm -------------------------------------------------------------------------------------
echo "==> Helm chart (helm-java: Helm's template engine from Maven Central)"
deps="$here/helm-render/target/dependency"
if ! ls "$deps"/linux-amd64-*.jar >/dev/null 2>&1; then
    # shellcheck source=../bin/env.sh
    (. bin/env.sh && ./mvnw -B -ntp -q -f packaging/helm-render/pom.xml dependency:copy-dependencies) \
        || { echo "  FAIL helm: could not fetch helm-java"; failcount; }
fi
if ls "$deps"/linux-amd64-*.jar >/dev/null 2>&1; then
    # Renders that the chart must refuse: name, values, a fragment of the expected message.
    mkdir -p "$tmp/values"
    np='networkPolicy: {apiServerCidrs: [192.0.2.1/32], routerCidrs: [203.0.113.20/32], podCidrs: [10.244.0.0/16]}'
    refusals=(
        "refuse-short-grace|config: {allowedCidrs: [10.244.0.0/16], busUrl: \"https://router.example.com:8443\", dynamoNamespaces: [dynamo], drainDeadline: 45s}
$np|must exceed config.drainDeadline"
        "refuse-duplicate-identity|config: {allowedCidrs: [10.244.0.0/16], busUrl: \"https://router.example.com:8443\", dynamoNamespaces: [dynamo]}
identities: [{clientId: broker-a, credentialSecret: a}, {clientId: broker-a, credentialSecret: b}]
$np|listed twice"
        "refuse-plaintext|config: {allowedCidrs: [10.244.0.0/16], busUrl: \"http://router.example.com:8080\", dynamoNamespaces: [dynamo]}
$np|must be https://"
        "refuse-networkpolicy-without-addresses|config: {allowedCidrs: [10.244.0.0/16], busUrl: \"https://router.example.com:8443\", dynamoNamespaces: [dynamo]}|networkPolicy.enabled needs networkPolicy.routerCidrs"
        "refuse-networkpolicy-without-api-server|config: {allowedCidrs: [10.244.0.0/16], busUrl: \"https://router.example.com:8443\", dynamoNamespaces: [dynamo]}
networkPolicy: {routerCidrs: [203.0.113.20/32], podCidrs: [10.244.0.0/16]}|a way to the API server"
        "refuse-router-port-not-bus-url|config: {allowedCidrs: [10.244.0.0/16], busUrl: \"https://router.example.com\", dynamoNamespaces: [dynamo]}
networkPolicy: {apiServerCidrs: [192.0.2.1/32], routerCidrs: [203.0.113.20/32], routerPort: 8443}|differs from the port of config.busUrl"
        "refuse-networkpolicy-without-publishers|config: {allowedCidrs: [10.244.0.0/16], busUrl: \"https://router.example.com:8443\", dynamoNamespaces: [dynamo]}
networkPolicy: {apiServerCidrs: [192.0.2.1/32], routerCidrs: [203.0.113.20/32], publisherNamespaces: false}|a way to the publishers"
        "refuse-unknown-alert|config: {allowedCidrs: [10.244.0.0/16], busUrl: \"https://router.example.com:8443\", dynamoNamespaces: [dynamo]}
networkPolicy: {enabled: false}
prometheusRule: {enabled: true, rules: {ContinuumEventBrokerNoSuchAlert: {for: 1m}}}|no such alert"
        "refuse-unknown-key|config: {allowedCidrs: [10.244.0.0/16], busUrl: \"https://router.example.com:8443\", dynamoNamespaces: [dynamo]}
networkPolicy: {enabled: false, routerCIDRs: [203.0.113.20/32]}|additional properties 'routerCIDRs' not allowed"
        "refuse-wrong-type|config: {allowedCidrs: [10.244.0.0/16], busUrl: \"https://router.example.com:8443\", dynamoNamespaces: [dynamo], metricsPort: \"9464\"}
networkPolicy: {enabled: false}|metricsPort"
        "refuse-unknown-spread|config: {allowedCidrs: [10.244.0.0/16], busUrl: \"https://router.example.com:8443\", dynamoNamespaces: [dynamo]}
networkPolicy: {enabled: false}
topologySpread: {whenUnsatisfiable: Sometimes}|whenUnsatisfiable"
        "refuse-no-allowed-cidrs|config: {busUrl: \"https://router.example.com:8443\", dynamoNamespaces: [dynamo]}
$np|config.allowedCidrs is required"
        "refuse-allowed-cidrs-and-any-address|config: {allowedCidrs: [10.244.0.0/16], dialAnyAddress: true, busUrl: \"https://router.example.com:8443\", dynamoNamespaces: [dynamo]}
$np|contradict each other"
    )
    for r in "${refusals[@]}"; do
        IFS='|' read -r -d '' rname rvalues _ <<<"$r" || true
        printf '%s\n' "$rvalues" > "$tmp/values/$rname.yaml"
    done
    cp "$chart"/ci/*-values.yaml "$tmp/values/"
    printf 'config: {dialAnyAddress: true, busUrl: "https://router.example.com:8443", dynamoNamespaces: [dynamo]}\n%s\n' "$np" \
        > "$tmp/values/dial-any-address.yaml"
    # The chart's own rendition of the alerts, for packaging/chart-rules-test.yaml: a PodMonitor and the rules.
    { cat "$chart/ci/single-values.yaml"; printf 'podMonitor: {enabled: true}\nprometheusRule: {enabled: true}\n'; } \
        > "$tmp/values/chart-rules.yaml"
    # single-values plus a second identity: the first identity's Pod template must not change.
    { cat "$chart/ci/single-values.yaml"
      printf 'identities:\n  - {clientId: broker-a, credentialSecret: continuum-event-broker-credential-a}\n'
      printf '  - {clientId: broker-b, credentialSecret: continuum-event-broker-credential-b}\n'; } \
        > "$tmp/values/second-identity.yaml"
    # docs/deployment.md's Helm example, as written: its my-values.yaml heredoc (section 4).
    awk '/^cat > my-values.yaml <<.EOF.$/ {inside=1; next} inside && /^EOF$/ {exit} inside {print}' \
        docs/deployment.md > "$tmp/values/doc-my-values.yaml"
    # One JVM renders every values file (the chart's ci/ values and the refusals above).
    (. bin/env.sh >/dev/null && java --enable-native-access=ALL-UNNAMED -cp "$deps/*" "$here/helm-render/HelmTemplate.java" \
        batch "$tmp/helm" "$chart" ceb gpu-serving "$tmp"/values/*.yaml) 2> "$tmp/h.err" \
        || { echo "  FAIL helm: $(grep -v WARNING "$tmp/h.err")"; failcount; }
    for values in "$chart"/ci/*-values.yaml; do
        vname="$(basename "$values" .yaml)"
        if [ ! -f "$tmp/helm/$vname.yaml" ]; then
            echo "  FAIL helm $vname: $(cat "$tmp/helm/$vname.err" 2>/dev/null || echo 'not rendered')"; failcount; continue
        fi
        n=$("$python" -c 'import sys, yaml; print(len((yaml.safe_load(open(sys.argv[1])) or {}).get("identities") or []) or 1)' "$values")
        readiness=/readyz
        if grep -q '^readiness: session' "$values"; then readiness=/readyz/session; fi
        if check --identities "$n" --require-namespace --readiness "$readiness" "helm $vname" < "$tmp/helm/$vname.yaml"; then
            pass; else failcount; fi
        for k in PrometheusRule ServiceMonitor PodMonitor PodDisruptionBudget; do
            if grep -q "^kind: $k" "$tmp/helm/$vname.yaml"; then echo "       (with a $k)"; fi
        done
    done
    if [ ! -s "$tmp/values/doc-my-values.yaml" ]; then
        echo "  FAIL docs/deployment.md: no my-values.yaml example found to render"; failcount
    elif [ ! -f "$tmp/helm/doc-my-values.yaml" ]; then
        echo "  FAIL helm docs/deployment.md's my-values.yaml: $(head -c 400 "$tmp/helm/doc-my-values.err" 2>/dev/null)"; failcount
    elif check --identities 1 --require-namespace "helm docs/deployment.md's my-values.yaml" < "$tmp/helm/doc-my-values.yaml"; then
        pass; else failcount; fi
    for r in "${refusals[@]}"; do
        rname="${r%%|*}"
        expected="${r##*|}"
        if [ ! -f "$tmp/helm/$rname.err" ]; then
            echo "  FAIL helm $rname: rendered, expected the chart to refuse it"; failcount
        elif grep -q -F -- "$expected" "$tmp/helm/$rname.err"; then
            echo "  ok   helm $rname: $(grep -F -- "$expected" "$tmp/helm/$rname.err" | sed 's/.*execution error at ([^)]*): //' | head -1 | cut -c1-150)"; pass
        else
            echo "  FAIL helm $rname: refused, but not with '$expected': $(head -c 400 "$tmp/helm/$rname.err")"; failcount
        fi
    done
    # No allowedCidrs is rendered only when said explicitly (config.dialAnyAddress=true): no allowed_cidrs then.
    if [ -f "$tmp/helm/dial-any-address.yaml" ] && ! grep -q 'allowed_cidrs' "$tmp/helm/dial-any-address.yaml"; then
        echo "  ok   helm dial-any-address: renders without allowed_cidrs, as config.dialAnyAddress=true asks"; pass
    else
        echo "  FAIL helm dial-any-address: $(cat "$tmp/helm/dial-any-address.err" 2>/dev/null || echo 'rendered allowed_cidrs')"; failcount
    fi
    # Adding the second identity leaves the first's Pod template as it is (docs/deployment.md 5.1): the
    # spread is rendered with one identity too, and nothing else in it depends on how many there are.
    if [ -f "$tmp/helm/single-values.yaml" ] && [ -f "$tmp/helm/second-identity.yaml" ]; then
        if "$python" - "$tmp/helm/single-values.yaml" "$tmp/helm/second-identity.yaml" <<'EOF'
import sys, yaml
def first(path):
    deps = [d for d in yaml.safe_load_all(open(path)) if d and d.get("kind") == "Deployment"]
    return deps[0]["metadata"]["name"], deps[0]["spec"]["template"], len(deps)
(name, one, n1), (name2, two, n2) = first(sys.argv[1]), first(sys.argv[2])
assert (n1, n2) == (1, 2), f"expected 1 and 2 Deployments, got {n1} and {n2}"
if name != name2 or one != two:
    print(f"  FAIL helm: adding a second identity changes {name}'s Pod template (it would restart with the new one)")
    sys.exit(1)
print(f"  ok   helm: adding a second identity leaves {name}'s Pod template as it is")
EOF
        then pass; else failcount; fi
    fi
    # A chart version bump alone leaves every Pod template as it is (issue 56 item 3): with the version as a Pod
    # label, every chart upgrade restarted every identity at once (Recreate, one replica each).
    cp -r "$chart" "$tmp/chart-next"
    sed -i 's/^version: .*/version: 99.0.0-next/' "$tmp/chart-next/Chart.yaml"
    (. bin/env.sh >/dev/null && java --enable-native-access=ALL-UNNAMED -cp "$deps/*" "$here/helm-render/HelmTemplate.java" \
        batch "$tmp/helm-next" "$tmp/chart-next" ceb gpu-serving "$chart"/ci/*-values.yaml) 2> "$tmp/h-next.err" \
        || { echo "  FAIL helm (chart version bumped): $(grep -v WARNING "$tmp/h-next.err")"; failcount; }
    if "$python" - "$tmp/helm" "$tmp/helm-next" "$chart"/ci/*-values.yaml <<'EOF'
import os, sys, yaml
now, nxt, values = sys.argv[1], sys.argv[2], sys.argv[3:]
def templates(path):
    return {d["metadata"]["name"]: d["spec"]["template"] for d in yaml.safe_load_all(open(path))
            if d and d.get("kind") == "Deployment"}
changed, count = [], 0
for v in values:
    name = os.path.basename(v)[:-len(".yaml")]
    a, b = templates(os.path.join(now, name + ".yaml")), templates(os.path.join(nxt, name + ".yaml"))
    assert a and a.keys() == b.keys(), f"{name}: the two renders differ in their Deployments"
    count += len(a)
    changed += [f"{name}/{d}" for d in a if a[d] != b[d]]
if changed:
    print(f"  FAIL helm: a chart version bump alone changes the Pod templates of {', '.join(changed)}"
          " (every identity would restart at once)")
    sys.exit(1)
print(f"  ok   helm: a chart version bump alone leaves all {count} Pod templates of {len(values)} values files"
      " as they are")
EOF
    then pass; else failcount; fi
    # The chart's PrometheusRule under promtool: its absent() asks for the release's group and namespace.
    if command -v promtool >/dev/null 2>&1 && [ -f "$tmp/helm/chart-rules.yaml" ]; then
        mkdir -p "$tmp/chart-rules"
        cp "$here/chart-rules-test.yaml" "$tmp/chart-rules/test.yaml"
        "$python" -c 'import sys, yaml
rule = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") == "PrometheusRule")
yaml.safe_dump({"groups": rule["spec"]["groups"]}, open(sys.argv[2], "w"), sort_keys=False)' \
            "$tmp/helm/chart-rules.yaml" "$tmp/chart-rules/prometheus-rules.yaml"
        if promtool test rules "$tmp/chart-rules/test.yaml" > "$tmp/p.out" 2>&1; then
            echo "  ok   promtool test rules: the chart's PrometheusRule (packaging/chart-rules-test.yaml)"; pass
        else
            echo "  FAIL promtool test rules on the chart's PrometheusRule: $(cat "$tmp/p.out")"; failcount
        fi
    fi
    # Tuning without forking (ci/tuning-values.yaml): each value shows in the render.
    if [ -f "$tmp/helm/tuning-values.yaml" ]; then
        if "$python" "$here/check_helm_tuning.py" < "$tmp/helm/tuning-values.yaml"; then pass; else failcount; fi
    fi
    # The checker's self-test on the chart too (managed-values has a ServiceMonitor to mutate).
    for vname in ha-values managed-values; do
        if [ -f "$tmp/helm/$vname.yaml" ]; then
            if check --self-test < "$tmp/helm/$vname.yaml"; then pass; else failcount; fi
        fi
    done
    if [ -f "$tmp/helm/ha-values.yaml" ]; then
        echo "==> Kustomize overlays/production ~ Helm ci/ha-values.yaml (the same inputs)"
        if check --compare kustomize "$tmp/production.yaml" helm "$tmp/helm/ha-values.yaml"; then pass; else failcount; fi
        if check --compare-self-test "$tmp/production.yaml" "$tmp/helm/ha-values.yaml"; then pass; else failcount; fi
    fi
fi

# --- Monitoring -------------------------------------------------------------------------------
echo "==> the chart's README (packaging/chart-readme.py: generated from values.yaml and values.schema.json)"
if "$python" "$here/chart-readme.py" --check; then
    echo "  ok   $chart/README.md is current"; pass
else
    echo "  FAIL $chart/README.md is not what packaging/chart-readme.py writes: run it"; failcount
fi

echo "==> the docs' Kustomize commands, as written"
# Every `kubectl apply -k DIR` and `kubectl kustomize DIR` in README.md and docs/*.md that names a directory of
# this repository renders (a renamed overlay would otherwise leave a doc command that fails).
while read -r dir; do
    if kubectl kustomize "$dir" > /dev/null 2> "$tmp/doc-k.err"; then
        echo "  ok   kubectl kustomize $dir"; pass
    else
        echo "  FAIL a doc's kubectl kustomize $dir: $(head -c 300 "$tmp/doc-k.err")"; failcount
    fi
done < <(grep -h -o -E 'kubectl (apply -k|kustomize) deploy/[A-Za-z0-9_./-]+' README.md docs/*.md \
             | awk '{print $NF}' | sort -u)

echo "==> monitoring"
if cmp -s deploy/monitoring/prometheus-rules.yaml "$chart/files/prometheus-rules.yaml"; then
    echo "  ok   the chart's rules are a copy of deploy/monitoring/prometheus-rules.yaml"; pass
else
    echo "  FAIL $chart/files/prometheus-rules.yaml differs from deploy/monitoring/prometheus-rules.yaml"; failcount
fi
if command -v promtool >/dev/null 2>&1; then
    if promtool check rules deploy/monitoring/prometheus-rules.yaml > "$tmp/p.out" 2>&1; then
        echo "  ok   promtool check rules: $(grep -o '[0-9]* rules found' "$tmp/p.out")"; pass
    else
        echo "  FAIL promtool check rules: $(cat "$tmp/p.out")"; failcount
    fi
else
    echo "  skip promtool not installed (Debian package prometheus)"
fi
if "$python" - deploy/monitoring/grafana-dashboard.json <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
exprs = [t["expr"] for p in d["panels"] for t in p["targets"]]
names = set(re.findall(r"continuum_event_broker_[a-z_]+", " ".join(exprs)))
assert len(d["panels"]) >= 8 and names, "dashboard has no broker panels"
print(f"  ok   grafana dashboard: {len(d['panels'])} panels over {len(names)} metrics")
EOF
then pass; else echo "  FAIL grafana dashboard"; failcount; fi

echo "verify-manifests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
