#!/usr/bin/env python3
"""Checks rendered continuum-event-broker manifests (Kustomize or Helm output).

usage: check_manifests.py [--identities N] [--require-namespace] [--readiness PATH] NAME < rendered.yaml
       check_manifests.py --self-test < valid-rendered.yaml   (every mutation must be caught)
       check_manifests.py --compare NAME_A A.yaml NAME_B B.yaml   (Kustomize and Helm agree)
       check_manifests.py --compare-self-test A.yaml B.yaml      (every difference must be caught)

Checks (R-OPS-1..3, R-SEC-14/15, R-BEH-8, R-CFG):
- the kinds ServiceAccount, Role, RoleBinding, ConfigMap, Deployment, Service, NetworkPolicy are
  present; no ClusterRole/ClusterRoleBinding, no Secret (credentials are never rendered);
- every Role grants exactly get/list/watch on dynamoworkermetadatas.nvidia.com and nothing else;
- every Deployment: replicas 1, strategy Recreate, a restrictive securityContext (non-root,
  read-only root filesystem, no privilege escalation, not privileged, all capabilities dropped
  and none added, seccomp RuntimeDefault), probes on /healthz (liveness, startup) and /readyz
  or the opt-in /readyz/session (readiness) on the metrics port, resource requests and limits (the memory
  request equal to the memory limit), terminationGracePeriodSeconds
  greater than the config's drain_deadline, the credential from a Secret volume mounted as a
  file at credential_file and no credential in env;
- distinct client_ids (HA = distinct identities), N of them with --identities;
- every watch namespace of every identity has a Role bound to that identity's ServiceAccount;
- a NetworkPolicy selects every broker Pod, restricts Egress, and every egress rule names its
  peers (no allow-all rule) except the port-only API server rule (443/6443 only); DNS Pods on a
  DNS port (53, or OpenShift's 5353 / dns / dns-tcp), node-local DNS (169.254.20.10) covered when
  DNS is on 53; the publishers reached by a selector peer covering every watched namespace and
  nothing beyond them (Cilium never matches its own Pods by CIDR), named by
  kubernetes.io/metadata.name; the router's port (from bus_url) open to an ipBlock; ingress only from named peers (the monitoring
  Pods), never from everywhere; no peer selector carries the broker's own labels (what
  Kustomize's includeSelectors does to a DNS or monitoring peer);
- placement, computed from the rendered Pods: every Deployment has a hostname spread constraint or
  pod anti-affinity term, with one identity too (adding a second must not change the first's Pod
  template); with two or more identities in a namespace it is hard (DoNotSchedule or required),
  and every placement
  term's selector matches the Pods of ALL identities there (a selector matching only its own Pod,
  or none, spreads nothing); one PodDisruptionBudget matches all of them with maxUnavailable 1
  (or minAvailable N-1), and no PodDisruptionBudget matches only some; the identities' config
  checksums differ (one shared checksum restarts them together); a ServiceMonitor/PodMonitor
  reaches every identity on a port name that exists, and sets the target labels the identity
  alerts group by: broker_group (the Pod's group label), node, and expected_identities (the
  number of identities in the namespace).
--compare: for the same inputs the two renderings have the same kinds, and per identity the same
container (image and names aside), probes, security contexts, placement rules, RBAC rules and
NetworkPolicy rules.
Prints one line per finding; exits 1 on any.
"""
import ipaddress
import json
import re
import sys
import urllib.parse

import yaml

ALLOWED_VERBS = {"get", "list", "watch"}
REQUIRED_KINDS = ["ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment", "Service", "NetworkPolicy"]
CONFIG_PATH = "/etc/continuum-event-broker/config.yaml"
API_SERVER_PORTS = {443, 6443}
# DNS: kube-dns/CoreDNS on 53; OpenShift's DNS Pods (openshift-dns) on 5353, named dns / dns-tcp.
DNS_PORTS = {53, 5353, "dns", "dns-tcp"}
METADATA_NAME = "kubernetes.io/metadata.name"
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
NODE_LOCAL_DNS = "169.254.20.10"
HOSTNAME = "kubernetes.io/hostname"
OPTIONAL_KINDS = {"PrometheusRule", "ServiceMonitor", "PodMonitor", "CiliumNetworkPolicy"}


def compact(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def selector_matches(selector, labels):
    """A Kubernetes LabelSelector against a Pod's labels. None matches nothing; {} everything."""
    if selector is None:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e.get("key"), e.get("operator"), e.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True


def peer_namespaces(peer, own_ns):
    """The namespaces a NetworkPolicy selector peer reaches: a set, or None when it is not bounded by names.

    {podSelector: ...} alone is the policy's own namespace; a namespaceSelector must name namespaces by
    kubernetes.io/metadata.name (matchLabels, or matchExpressions In), nothing else."""
    if "namespaceSelector" not in peer:
        return {own_ns}
    sel = peer.get("namespaceSelector") or {}
    names = None
    for k, v in (sel.get("matchLabels") or {}).items():
        if k != METADATA_NAME:
            return None
        names = {v}
    for e in sel.get("matchExpressions") or []:
        if e.get("key") != METADATA_NAME or e.get("operator") != "In":
            return None
        vals = set(e.get("values") or [])
        names = vals if names is None else names & vals
    return names


def placement_terms(pod):
    """(description, topologyKey, labelSelector, namespaces or None, hard) of every spread/anti-affinity term;
    hard: the scheduler leaves a Pod Pending rather than break it (DoNotSchedule, required anti-affinity)."""
    terms = []
    for i, t in enumerate(pod.get("topologySpreadConstraints") or []):
        terms.append((f"topologySpreadConstraints[{i}] ({t.get('topologyKey')}, {t.get('whenUnsatisfiable')})",
                      t.get("topologyKey"), t.get("labelSelector"), None, t.get("whenUnsatisfiable") == "DoNotSchedule"))
    anti = (pod.get("affinity") or {}).get("podAntiAffinity") or {}
    for i, t in enumerate(anti.get("requiredDuringSchedulingIgnoredDuringExecution") or []):
        terms.append((f"podAntiAffinity required[{i}] ({t.get('topologyKey')})", t.get("topologyKey"),
                      t.get("labelSelector"), t.get("namespaces"), True))
    for i, w in enumerate(anti.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        t = w.get("podAffinityTerm") or {}
        terms.append((f"podAntiAffinity preferred[{i}] ({t.get('topologyKey')})", t.get("topologyKey"),
                      t.get("labelSelector"), t.get("namespaces"), False))
    return terms


def duration_seconds(text):
    m = re.fullmatch(r"([0-9]+)(ms|s|m|h)", str(text))
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    n, unit = int(m.group(1)), m.group(2)
    return n * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]


def self_test(text, verbose=False):
    """Mutates valid rendered manifests and asserts that every mutation is caught."""
    import copy
    import io
    base = [d for d in yaml.safe_load_all(text) if d]

    def first(docs, kind):
        return next(d for d in docs if d.get("kind") == kind)

    def container(docs):
        return first(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]

    mutations = {
        "replicas 2": lambda d: first(d, "Deployment")["spec"].__setitem__("replicas", 2),
        "RollingUpdate": lambda d: first(d, "Deployment")["spec"].__setitem__("strategy", {"type": "RollingUpdate"}),
        "verb create": lambda d: first(d, "Role")["rules"][0]["verbs"].append("create"),
        "verbs without watch": lambda d: first(d, "Role")["rules"][0].__setitem__("verbs", ["get", "list"]),
        "secrets readable": lambda d: first(d, "Role")["rules"].append({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}),
        "writable root fs": lambda d: container(d)["securityContext"].__setitem__("readOnlyRootFilesystem", False),
        "privilege escalation": lambda d: container(d)["securityContext"].pop("allowPrivilegeEscalation"),
        "capability added": lambda d: container(d)["securityContext"]["capabilities"].__setitem__("add", ["NET_ADMIN"]),
        "no seccomp": lambda d: (container(d)["securityContext"].pop("seccompProfile", None),
                                 first(d, "Deployment")["spec"]["template"]["spec"]["securityContext"].pop("seccompProfile", None)),
        "root": lambda d: (container(d)["securityContext"].__setitem__("runAsNonRoot", False)),
        "liveness on /readyz": lambda d: container(d)["livenessProbe"]["httpGet"].__setitem__("path", "/readyz"),
        "no readiness": lambda d: container(d).pop("readinessProbe"),
        "readiness on a path the broker does not serve": lambda d: container(d)["readinessProbe"]["httpGet"].__setitem__(
            "path", "/ready"),
        "short grace": lambda d: first(d, "Deployment")["spec"]["template"]["spec"].__setitem__("terminationGracePeriodSeconds", 20),
        "credential in env": lambda d: container(d).setdefault("env", []).append(
            {"name": "CONTINUUM_EVENT_BROKER_CREDENTIAL", "valueFrom": {"secretKeyRef": {"name": "x", "key": "y"}}}),
        "no limits": lambda d: container(d)["resources"].pop("limits"),
        "no allowed_cidrs": lambda d: [cm["data"].__setitem__(k, yaml.safe_dump(
            {x: y for x, y in (yaml.safe_load(v) or {}).items() if x != "allowed_cidrs"}))
            for cm in d if cm.get("kind") == "ConfigMap" for k, v in (cm.get("data") or {}).items()
            if isinstance(yaml.safe_load(v), dict) and "client_id" in yaml.safe_load(v)],
        "memory request below the limit": lambda d: container(d)["resources"]["requests"].__setitem__("memory", "128Mi"),
        "allow-all egress": lambda d: first(d, "NetworkPolicy")["spec"]["egress"].append({}),
        "port-only rule beyond the API server": lambda d: first(d, "NetworkPolicy")["spec"]["egress"].append(
            {"ports": [{"port": 443, "protocol": "TCP"}, {"port": 8080, "protocol": "TCP"}]}),
        "metrics open to every source": lambda d: [r.pop("from", None) for r in first(d, "NetworkPolicy")["spec"]["ingress"]],
        "no node-local DNS": lambda d: [r.__setitem__("to", [p for p in r.get("to") or [] if "ipBlock" not in p])
                                        for r in first(d, "NetworkPolicy")["spec"]["egress"]
                                        if any(p.get("port") == 53 for p in r.get("ports") or [])],
        # What Kustomize's includeSelectors did to selector peers: the broker's own label added.
        "DNS peer narrowed by the broker's labels": lambda d: [
            p["podSelector"].setdefault("matchLabels", {}).__setitem__("app.kubernetes.io/name", "continuum-event-broker")
            for r in first(d, "NetworkPolicy")["spec"]["egress"] for p in r.get("to") or [] if "podSelector" in p],
        "ClusterRole": lambda d: d.append({"kind": "ClusterRole", "metadata": {"name": "x"}, "rules": []}),
        # Publishers by the Pod CIDR only: Cilium never matches its own Pods by CIDR.
        "publishers by CIDR only": lambda d: [r.__setitem__("to", [{"ipBlock": {"cidr": "10.0.0.0/8"}}])
                                              for r in first(d, "NetworkPolicy")["spec"]["egress"]
                                              if not r.get("ports") and r.get("to")],
        "publishers in every namespace": lambda d: [r["to"].append({"namespaceSelector": {}})
                                                    for r in first(d, "NetworkPolicy")["spec"]["egress"]
                                                    if not r.get("ports") and r.get("to")],
        "publishers in a namespace not watched": lambda d: [r["to"].append(
            {"namespaceSelector": {"matchLabels": {METADATA_NAME: "kube-system"}}})
            for r in first(d, "NetworkPolicy")["spec"]["egress"] if not r.get("ports") and r.get("to")],
    }

    def deployments(docs):
        return [x for x in docs if x.get("kind") == "Deployment"]

    def template_labels(dep):
        return dep["spec"]["template"]["metadata"]["labels"]

    def spreads(docs):
        return [c for dep in deployments(docs) for c in dep["spec"]["template"]["spec"].get("topologySpreadConstraints") or []]

    def old_production_spread(docs):
        # The rendering this checker once passed: the spread selected name + environment (a label
        # no Pod carried) and each identity overlay added its own instance label to it.
        for dep in deployments(docs):
            labels = template_labels(dep)
            labels.pop("environment", None)
            dep["spec"]["template"]["spec"]["topologySpreadConstraints"] = [{
                "maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app.kubernetes.io/name": labels["app.kubernetes.io/name"],
                                                  "app.kubernetes.io/instance": labels["app.kubernetes.io/instance"],
                                                  "environment": "production"}}}]

    def own_instance_in_spread(docs):
        for dep in deployments(docs):
            for c in dep["spec"]["template"]["spec"].get("topologySpreadConstraints") or []:
                c["labelSelector"].setdefault("matchLabels", {})["app.kubernetes.io/instance"] = \
                    template_labels(dep)["app.kubernetes.io/instance"]

    def anti_affinity_on_itself(docs):
        for dep in deployments(docs):
            spec = dep["spec"]["template"]["spec"]
            spec.pop("topologySpreadConstraints", None)
            spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                "weight": 100, "podAffinityTerm": {"topologyKey": HOSTNAME, "labelSelector": {
                    "matchLabels": dict(dep["spec"]["selector"]["matchLabels"])}}}]}}

    def pdb_per_identity(docs):
        pdb = first(docs, "PodDisruptionBudget")
        dep = deployments(docs)[0]
        pdb["spec"]["selector"] = {"matchLabels": dict(dep["spec"]["selector"]["matchLabels"])}

    def shared_checksum(docs):
        for dep in deployments(docs):
            dep["spec"]["template"]["metadata"].setdefault("annotations", {})["checksum/config"] = "0" * 64

    if any(x.get("kind") in ("ServiceMonitor", "PodMonitor") for x in base):
        mutations.update({
            "monitor selecting one identity": lambda d: next(x for x in d if x.get("kind") in ("ServiceMonitor", "PodMonitor"))[
                "spec"]["selector"].setdefault("matchLabels", {}).__setitem__(
                    "app.kubernetes.io/instance", template_labels(deployments(d)[0])["app.kubernetes.io/instance"]),
            "monitor on an unknown port": lambda d: [e.__setitem__("port", "http") for x in d
                                                     if x.get("kind") in ("ServiceMonitor", "PodMonitor")
                                                     for e in x["spec"].get("endpoints") or x["spec"].get("podMetricsEndpoints")],
            "monitor without the group and node labels": lambda d: [e.pop("relabelings", None) for x in d
                                                     if x.get("kind") in ("ServiceMonitor", "PodMonitor")
                                                     for e in x["spec"].get("endpoints") or x["spec"].get("podMetricsEndpoints")],
            "scraped twice (annotations and a monitor)": lambda d: [
                dep["spec"]["template"]["metadata"].setdefault("annotations", {}).__setitem__("prometheus.io/scrape", "true")
                for dep in deployments(d)],
            "monitor expecting one identity more": lambda d: [r.__setitem__("replacement", str(int(r["replacement"]) + 1))
                                                     for x in d if x.get("kind") in ("ServiceMonitor", "PodMonitor")
                                                     for e in x["spec"].get("endpoints") or x["spec"].get("podMetricsEndpoints")
                                                     for r in e.get("relabelings") or []
                                                     if r.get("targetLabel") == "expected_identities"],
        })
        if len(deployments(base)) == 1:
            del mutations["monitor selecting one identity"]  # its one identity is every identity
    def bus_port(docs):
        for cm in docs:
            if cm.get("kind") == "ConfigMap":
                for v in (cm.get("data") or {}).values():
                    url = urllib.parse.urlsplit(str((yaml.safe_load(v) or {}).get("bus_url") or ""))
                    if url.scheme:
                        return url.port or 443
        return None

    def router_port_moved(docs):
        port = bus_port(docs)
        for r in first(docs, "NetworkPolicy")["spec"]["egress"]:
            if any("ipBlock" in q for q in r.get("to") or []):
                for p in r.get("ports") or []:
                    if p.get("port") == port:
                        p["port"] = 9

    mutations["router port not bus_url's"] = router_port_moved
    # A namespace the brokers watch besides their own, with its Role and RoleBinding forgotten.
    own_namespaces = {(dep.get("metadata") or {}).get("namespace") for dep in deployments(base)}
    if any(x.get("kind") == "RoleBinding" and (x.get("metadata") or {}).get("namespace") not in own_namespaces
           for x in base):
        mutations["a watched namespace without its Role"] = lambda d: [
            d.remove(x) for x in [x for x in d if x.get("kind") in ("Role", "RoleBinding")
                                  and (x.get("metadata") or {}).get("namespace") not in own_namespaces]]
    mutations["no spread"] = lambda d: [dep["spec"]["template"]["spec"].pop("topologySpreadConstraints", None)
                                        for dep in deployments(d)]
    mutations["a name over 63 characters"] = lambda d: first(d, "Service")["metadata"].__setitem__("name", "s" * 64)
    mutations["one name for two objects"] = lambda d: d.append(copy.deepcopy(first(d, "ServiceAccount")))
    if not any(p.get("port") == 53 for r in first(base, "NetworkPolicy")["spec"]["egress"] for p in r.get("ports") or []):
        del mutations["no node-local DNS"]  # DNS on OpenShift's 5353: no node-local DNS to require
    if len(deployments(base)) > 1:
        mutations.update({
            "placement bug (spread on a label no Pod has, narrowed per identity)": old_production_spread,
            "spread selector narrowed to its own identity": own_instance_in_spread,
            "zone spread matching nothing": lambda d: [c["labelSelector"].setdefault("matchLabels", {}).__setitem__("environment", "nowhere")
                                                       for c in spreads(d) if c["topologyKey"] != HOSTNAME],
            "soft hostname spread": lambda d: [c.__setitem__("whenUnsatisfiable", "ScheduleAnyway")
                                               for c in spreads(d) if c["topologyKey"] == HOSTNAME],
            "anti-affinity on its own Pod only": anti_affinity_on_itself,
            "no PodDisruptionBudget": lambda d: d.remove(first(d, "PodDisruptionBudget")),
            "PodDisruptionBudget per identity": pdb_per_identity,
            "PodDisruptionBudget maxUnavailable 2": lambda d: first(d, "PodDisruptionBudget")["spec"].__setitem__("maxUnavailable", 2),
            "one config checksum for all identities": shared_checksum,
        })
    failures = 0
    for label, mutate in mutations.items():
        docs = copy.deepcopy(base)
        mutate(docs)
        sys.stdin = io.StringIO(yaml.safe_dump_all(docs))
        out = io.StringIO()
        real = sys.stdout
        sys.stdout = out
        try:
            rc = main([f"self-test[{label}]"])
        finally:
            sys.stdout = real
        if rc == 0:
            print(f"  FAIL self-test: the mutation '{label}' was not detected")
            failures += 1
        elif verbose:
            print(f"       {label}: {out.getvalue().splitlines()[0].split(': ', 1)[1]}")
    if not failures:
        print(f"  ok   self-test: all {len(mutations)} mutations of valid manifests were detected"
              f" ({len(deployments(base))} identit{'y' if len(deployments(base)) == 1 else 'ies'})")
    return 1 if failures else 0


def normalized(docs):
    """What must agree between two renderings of the same inputs, keyed by identity (client_id)."""
    kinds = sorted({d.get("kind") for d in docs} - OPTIONAL_KINDS)
    configmaps = {(d["metadata"].get("namespace"), d["metadata"]["name"]): d for d in docs if d.get("kind") == "ConfigMap"}

    def rule_set(rules):
        return "; ".join(sorted(f"{','.join(r.get('apiGroups') or [])}/{','.join(r.get('resources') or [])}: "
                                f"{','.join(sorted(r.get('verbs') or []))}" for r in rules or []))

    def np_rule(rule, side):
        peers = sorted(compact(p) for p in rule.get(side) or [])
        ports = sorted(compact({"port": p.get("port"), "protocol": p.get("protocol", "TCP")}) for p in rule.get("ports") or [])
        return compact({"peers": peers, "ports": ports})

    identities = {}
    for dep in (d for d in docs if d.get("kind") == "Deployment"):
        ns = dep["metadata"].get("namespace")
        pod = dep["spec"]["template"]["spec"]
        c = dict(pod["containers"][0])
        c.pop("image", None)
        c["volumeMounts"] = sorted(compact(m) for m in c.get("volumeMounts") or [])
        client_id = None
        for v in pod.get("volumes") or []:
            cm = configmaps.get((ns, (v.get("configMap") or {}).get("name")))
            if cm and "config.yaml" in (cm.get("data") or {}):
                client_id = (yaml.safe_load(cm["data"]["config.yaml"]) or {}).get("client_id")
        labels = dep["spec"]["template"]["metadata"].get("labels") or {}
        policies = [n for n in docs if n.get("kind") == "NetworkPolicy" and n["metadata"].get("namespace") == ns
                    and selector_matches(n["spec"].get("podSelector"), labels)]
        identities[client_id] = {
            "deployment": {"replicas": dep["spec"].get("replicas"), "strategy": dep["spec"].get("strategy")},
            "container": c,
            "pod": {k: pod.get(k) for k in ("securityContext", "terminationGracePeriodSeconds", "enableServiceLinks",
                                            "automountServiceAccountToken", "priorityClassName")},
            "placement": sorted(compact({k: t.get(k) for k in ("maxSkew", "topologyKey", "whenUnsatisfiable")})
                                for t in pod.get("topologySpreadConstraints") or []),
            "networkpolicy": [{"policyTypes": sorted(n["spec"].get("policyTypes") or []),
                               "ingress": sorted(np_rule(r, "from") for r in n["spec"].get("ingress") or []),
                               "egress": sorted(np_rule(r, "to") for r in n["spec"].get("egress") or [])} for n in policies],
        }
    # The grants per namespace (Kustomize may render one Role per identity where Helm shares one).
    roles = sorted({f"{r['metadata'].get('namespace')}: {rule_set(r.get('rules'))}" for r in docs if r.get("kind") == "Role"})
    pdbs = sorted(compact({k: v for k, v in d["spec"].items() if k != "selector"})
                  for d in docs if d.get("kind") == "PodDisruptionBudget")
    return {"kinds": kinds, "identities": identities, "roles": roles, "pdbs": pdbs}


def compare_self_test(path_a, path_b):
    """Each mutation of one of two agreeing renderings must make --compare fail."""
    import copy
    import io
    docs_b = [d for d in yaml.safe_load_all(open(path_b)) if d]

    def first(docs, kind):
        return next(d for d in docs if d.get("kind") == kind)

    def container(docs):
        return first(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]

    mutations = {
        "probe period": lambda d: container(d)["readinessProbe"].__setitem__("periodSeconds", 30),
        "extra env": lambda d: container(d).setdefault("env", []).append({"name": "JDK_JAVA_OPTIONS", "value": "-Xmx1g"}),
        "pod security context": lambda d: first(d, "Deployment")["spec"]["template"]["spec"]["securityContext"].__setitem__("runAsUser", 1000),
        "container security context": lambda d: container(d)["securityContext"].__setitem__("readOnlyRootFilesystem", False),
        "soft spread": lambda d: first(d, "Deployment")["spec"]["template"]["spec"]["topologySpreadConstraints"][0].__setitem__("whenUnsatisfiable", "ScheduleAnyway"),
        "Role verb": lambda d: first(d, "Role")["rules"][0]["verbs"].append("create"),
        "NetworkPolicy router port": lambda d: first(d, "NetworkPolicy")["spec"]["egress"].append(
            {"to": [{"ipBlock": {"cidr": "203.0.113.99/32"}}], "ports": [{"port": 8443, "protocol": "TCP"}]}),
        "NetworkPolicy metrics source": lambda d: first(d, "NetworkPolicy")["spec"]["ingress"][0].__setitem__(
            "from", [{"namespaceSelector": {}}]),
        "no PodDisruptionBudget": lambda d: d.remove(first(d, "PodDisruptionBudget")),
        "extra kind": lambda d: d.append({"kind": "Secret", "metadata": {"name": "x"}}),
    }
    failures = 0
    for label, mutate in mutations.items():
        docs = copy.deepcopy(docs_b)
        mutate(docs)
        real = sys.stdout
        sys.stdout = io.StringIO()
        try:
            rc = compare("a", path_a, "b", io.StringIO(yaml.safe_dump_all(docs)))
        finally:
            sys.stdout = real
        if rc == 0:
            print(f"  FAIL compare self-test: the difference '{label}' was not detected")
            failures += 1
    if not failures:
        print(f"  ok   compare self-test: all {len(mutations)} differences were detected")
    return 1 if failures else 0


def compare(name_a, path_a, name_b, path_b):
    """Kustomize and Helm, for the same inputs, must render the same things (names and labels aside)."""
    def load(p):
        return [d for d in yaml.safe_load_all(p if hasattr(p, "read") else open(p)) if d]
    a = normalized(load(path_a))
    b = normalized(load(path_b))
    problems = []

    def diff(where, x, y):
        if isinstance(x, dict) and isinstance(y, dict):
            for k in sorted(set(x) | set(y), key=str):
                diff(f"{where}.{k}", x.get(k), y.get(k))
        elif x != y:
            problems.append(f"{where}: {name_a} {compact(x)} / {name_b} {compact(y)}")

    diff("kinds", a["kinds"], b["kinds"])
    diff("Role rules", a["roles"], b["roles"])
    diff("PodDisruptionBudget", a["pdbs"], b["pdbs"])
    if sorted(a["identities"], key=str) != sorted(b["identities"], key=str):
        problems.append(f"identities: {name_a} {sorted(a['identities'], key=str)} / {name_b} {sorted(b['identities'], key=str)}")
    for cid in sorted(set(a["identities"]) & set(b["identities"]), key=str):
        diff(f"identity {cid}", a["identities"][cid], b["identities"][cid])
    for p in problems:
        print(f"  FAIL compare {name_a} ~ {name_b}: {p}")
    if not problems:
        print(f"  ok   compare {name_a} ~ {name_b}: same kinds {a['kinds']}, and per identity "
              f"{sorted(a['identities'], key=str)} the same container, probes, security contexts, placement, "
              "RBAC and NetworkPolicy rules")
    return 1 if problems else 0


def main(argv):
    identities = None
    require_ns = False
    readiness = None
    args = list(argv)
    name = "manifests"
    while args:
        a = args.pop(0)
        if a == "--identities":
            identities = int(args.pop(0))
        elif a == "--require-namespace":
            require_ns = True
        elif a == "--readiness":
            readiness = args.pop(0)
        else:
            name = a
    docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
    problems = []

    def bad(msg):
        problems.append(msg)

    def ns_of(doc):
        return doc.get("metadata", {}).get("namespace")

    kinds = {}
    names_seen = set()
    for d in docs:
        kinds.setdefault(d.get("kind"), []).append(d)
        oname = str((d.get("metadata") or {}).get("name") or "")
        # Every name a DNS label (Services require it; the rest keep to it so one rule holds for all).
        if len(oname) > 63 or not DNS_LABEL.match(oname):
            bad(f"{d.get('kind')}/{oname} is not a DNS label of at most 63 characters ({len(oname)})")
        key = (d.get("kind"), ns_of(d), oname)
        if key in names_seen:
            bad(f"{d.get('kind')}/{oname} is rendered twice (two identities with one name?)")
        names_seen.add(key)
        if require_ns and d.get("kind") not in ("ClusterRole", "ClusterRoleBinding", "Namespace") and not ns_of(d):
            bad(f"{d.get('kind')}/{d['metadata'].get('name')} has no namespace")
    for k in REQUIRED_KINDS:
        if k not in kinds:
            bad(f"no {k} rendered")
    for k in ("ClusterRole", "ClusterRoleBinding", "Secret"):
        for d in kinds.get(k, []):
            bad(f"{k}/{d['metadata']['name']} must not be rendered")

    # --- RBAC ---------------------------------------------------------------------------------
    roles = {}
    for r in kinds.get("Role", []):
        key = (ns_of(r), r["metadata"]["name"])
        roles[key] = r
        rules = r.get("rules") or []
        if len(rules) != 1:
            bad(f"Role {key} has {len(rules)} rules, expected exactly 1")
        for rule in rules:
            if rule.get("apiGroups") != ["nvidia.com"] or rule.get("resources") != ["dynamoworkermetadatas"]:
                bad(f"Role {key} grants {rule.get('apiGroups')}/{rule.get('resources')}, expected nvidia.com/dynamoworkermetadatas only")
            if rule.get("resourceNames") or rule.get("nonResourceURLs"):
                bad(f"Role {key} has resourceNames/nonResourceURLs")
            verbs = rule.get("verbs") or []
            if set(verbs) != ALLOWED_VERBS or len(verbs) != 3:
                bad(f"Role {key} verbs {verbs}, expected exactly get, list, watch")
    # (namespace, serviceaccount) -> set of namespaces where it may read the CRD
    grants = {}
    for b in kinds.get("RoleBinding", []):
        bns = ns_of(b)
        ref = b.get("roleRef", {})
        if ref.get("kind") != "Role" or (bns, ref.get("name")) not in roles:
            bad(f"RoleBinding {bns}/{b['metadata']['name']} refers to {ref.get('kind')}/{ref.get('name')}, not a rendered Role in its namespace")
            continue
        for s in b.get("subjects") or []:
            if s.get("kind") != "ServiceAccount":
                bad(f"RoleBinding {bns}/{b['metadata']['name']} binds a {s.get('kind')}")
                continue
            grants.setdefault((s.get("namespace") or bns, s["name"]), set()).add(bns)

    # A CiliumNetworkPolicy (optional, Cilium only) may only add the API server as an entity.
    for cnp in kinds.get("CiliumNetworkPolicy", []):
        cname = f"CiliumNetworkPolicy {cnp['metadata']['name']}"
        cspec = cnp.get("spec") or {}
        if cspec.get("ingress") or cspec.get("ingressDeny") or cspec.get("egressDeny"):
            bad(f"{cname}: only egress to the API server is expected")
        for i, rule in enumerate(cspec.get("egress") or []):
            if set(rule) - {"toEntities", "toPorts"} or rule.get("toEntities") != ["kube-apiserver"]:
                bad(f"{cname}: egress rule {i} reaches {compact(rule)}, expected only toEntities: [kube-apiserver]")
            cports = [(str(p.get("port")), p.get("protocol", "TCP")) for tp in rule.get("toPorts") or []
                      for p in tp.get("ports") or []]
            if not cports or any(p[0] not in {str(x) for x in API_SERVER_PORTS} for p in cports):
                bad(f"{cname}: egress rule {i} ports {cports}, expected the API server's ({sorted(API_SERVER_PORTS)})")

    configmaps = {(ns_of(c), c["metadata"]["name"]): c for c in kinds.get("ConfigMap", [])}
    policies = kinds.get("NetworkPolicy", [])
    client_ids = {}

    # The Pods the Deployments render (one replica each): what the placement and disruption
    # selectors are evaluated against.
    pods = []
    for dep in kinds.get("Deployment", []):
        t = dep.get("spec", {}).get("template", {})
        meta = t.get("metadata") or {}
        pods.append({"ns": ns_of(dep), "name": dep["metadata"]["name"], "labels": meta.get("labels") or {},
                     "annotations": meta.get("annotations") or {}, "spec": t.get("spec") or {}})

    # --- Deployments ----------------------------------------------------------------------------
    for dep in kinds.get("Deployment", []):
        dns = ns_of(dep)
        where = f"Deployment {dns + '/' if dns else ''}{dep['metadata']['name']}"
        spec = dep.get("spec", {})
        if spec.get("replicas") != 1:
            bad(f"{where}: replicas {spec.get('replicas')}, expected exactly 1 (HA = a second identity)")
        if spec.get("strategy", {}).get("type") != "Recreate":
            bad(f"{where}: strategy {spec.get('strategy')}, expected Recreate (never two Pods of one identity)")
        pod = spec.get("template", {}).get("spec", {})
        pod_labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
        psc = pod.get("securityContext") or {}
        containers = pod.get("containers") or []
        if len(containers) != 1:
            bad(f"{where}: {len(containers)} containers, expected 1")
            continue
        c = containers[0]
        csc = c.get("securityContext") or {}

        def eff(key):
            return csc.get(key, psc.get(key))

        if eff("runAsNonRoot") is not True:
            bad(f"{where}: runAsNonRoot is not true")
        if eff("runAsUser") == 0:
            bad(f"{where}: runAsUser 0")
        if csc.get("readOnlyRootFilesystem") is not True:
            bad(f"{where}: readOnlyRootFilesystem is not true")
        if csc.get("allowPrivilegeEscalation") is not False:
            bad(f"{where}: allowPrivilegeEscalation is not false")
        if csc.get("privileged"):
            bad(f"{where}: privileged")
        caps = csc.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            bad(f"{where}: capabilities do not drop ALL")
        if caps.get("add"):
            bad(f"{where}: capabilities add {caps.get('add')}")
        seccomp = (csc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type")
        if seccomp != "RuntimeDefault":
            bad(f"{where}: seccompProfile {seccomp}, expected RuntimeDefault")
        if pod.get("hostNetwork") or pod.get("hostPID") or pod.get("hostIPC"):
            bad(f"{where}: host namespaces")

        res = c.get("resources") or {}
        for part in ("requests", "limits"):
            for r in ("cpu", "memory"):
                if not (res.get(part) or {}).get(r):
                    bad(f"{where}: no resources.{part}.{r}")
        # Issue 56 item 2: memory used never above the request keeps the broker out of the first eviction tier
        # under node pressure, so the request is the limit (CPU may stay burstable: it is throttled, not evicted).
        req_mem = (res.get("requests") or {}).get("memory")
        lim_mem = (res.get("limits") or {}).get("memory")
        if req_mem and lim_mem and str(req_mem) != str(lim_mem):
            bad(f"{where}: resources.requests.memory {req_mem} is not resources.limits.memory {lim_mem}"
                " (a broker whose usage exceeds its request is evicted first under node pressure)")

        metrics_ports = {p.get("name"): p.get("containerPort") for p in c.get("ports") or []}

        def probe(kind, paths, required=True):
            p = c.get(kind)
            if not p:
                if required:
                    bad(f"{where}: no {kind}")
                return
            get = p.get("httpGet") or {}
            if get.get("path") not in paths:
                bad(f"{where}: {kind} path {get.get('path')}, expected {' or '.join(paths)}")
            port = get.get("port")
            if port not in metrics_ports and port not in metrics_ports.values():
                bad(f"{where}: {kind} port {port} is not a container port")
            return port

        probe("livenessProbe", ["/healthz"])
        # /readyz (the first metadata sync, R-BEH 1) or the opt-in /readyz/session (a welcomed router session)
        probe("readinessProbe", [readiness] if readiness else ["/readyz", "/readyz/session"])
        probe("startupProbe", ["/healthz"], required=False)

        # config: the ConfigMap mounted at the --config path
        mounts = {m["name"]: m for m in c.get("volumeMounts") or []}
        volumes = {v["name"]: v for v in pod.get("volumes") or []}
        args_ = (c.get("command") or []) + (c.get("args") or [])
        config_path = CONFIG_PATH
        if "--config" in args_:
            config_path = args_[args_.index("--config") + 1]
        config = None
        for vname, m in mounts.items():
            mp = m["mountPath"].rstrip("/")
            if config_path.startswith(mp + "/") and "configMap" in volumes.get(vname, {}):
                cm = configmaps.get((dns, volumes[vname]["configMap"]["name"]))
                key = config_path[len(mp) + 1:]
                if cm is None or key not in (cm.get("data") or {}):
                    bad(f"{where}: config {config_path}: ConfigMap {volumes[vname]['configMap']['name']} with key {key} is not rendered")
                else:
                    config = yaml.safe_load(cm["data"][key])
        if config is None:
            bad(f"{where}: no rendered ConfigMap provides {config_path}")
            continue
        # No permissive dial default (R-SEC, the seeds): without allowed_cidrs the broker dials any address
        # outside the special ranges that metadata names, the API server and the nodes included.
        if not config.get("allowed_cidrs"):
            bad(f"{where}: config has no allowed_cidrs: the broker would dial any address outside the special "
                "ranges (set it to the cluster's Pod CIDR, docs/deployment.md)")
        drain = duration_seconds(config.get("drain_deadline", "25s"))
        grace = pod.get("terminationGracePeriodSeconds", 30)
        if not grace > drain:
            bad(f"{where}: terminationGracePeriodSeconds {grace} is not greater than drain_deadline {drain:g}s")
        listen = str(config.get("metrics_listen", "0.0.0.0:9464"))
        listen_port = int(listen.rsplit(":", 1)[1])
        if listen_port not in metrics_ports.values():
            bad(f"{where}: metrics_listen port {listen_port} is not a container port")
        cid = config.get("client_id")
        if not cid:
            bad(f"{where}: config has no client_id")
        elif cid in client_ids:
            bad(f"{where}: client_id {cid} is also used by {client_ids[cid]} (two replicas of one identity)")
        else:
            client_ids[cid] = where

        # credential: from a Secret volume mounted as a file, never from env
        cred = config.get("credential_file")
        if not cred or config.get("credential_env"):
            bad(f"{where}: the credential must come from credential_file (a mounted Secret), not an env variable")
        else:
            found = False
            for vname, m in mounts.items():
                mp = m["mountPath"].rstrip("/")
                if cred.startswith(mp + "/") and "secret" in volumes.get(vname, {}):
                    found = True
                    if not m.get("readOnly"):
                        bad(f"{where}: the credential mount is not readOnly")
                    items = volumes[vname]["secret"].get("items")
                    key = cred[len(mp) + 1:]
                    if items and key not in [i.get("path") for i in items]:
                        bad(f"{where}: the credential Secret volume has no item {key}")
            if not found:
                bad(f"{where}: credential_file {cred} is not inside a mounted Secret volume")
        for e in c.get("env") or []:
            if "CREDENTIAL" in e.get("name", "") or (e.get("valueFrom") or {}).get("secretKeyRef"):
                bad(f"{where}: credential-like env variable {e.get('name')}")
        if c.get("envFrom"):
            bad(f"{where}: envFrom could inject CONTINUUM_EVENT_BROKER_* overrides or a credential")

        # RBAC for every watch namespace
        sa = pod.get("serviceAccountName")
        if not sa or sa == "default":
            bad(f"{where}: no dedicated serviceAccountName")
        sas = {(ns_of(s), s["metadata"]["name"]) for s in kinds.get("ServiceAccount", [])}
        if (dns, sa) not in sas:
            bad(f"{where}: ServiceAccount {sa} is not rendered")
        own_ns = config.get("kubernetes_namespace") or dns
        for wns in config.get("watch_namespaces") or [own_ns]:
            granted = grants.get((dns, sa), set())
            if wns is None and granted:
                continue  # a base without a namespace: the Role is bound in the (unset) own namespace
            if wns not in granted:
                bad(f"{where}: watch namespace {wns} has no Role bound to ServiceAccount {sa}")

        # NetworkPolicy selecting this Pod
        selecting = []
        for np in policies:
            if ns_of(np) != dns:
                continue
            sel = (np.get("spec", {}).get("podSelector") or {}).get("matchLabels") or {}
            if np.get("spec", {}).get("podSelector", {}).get("matchExpressions"):
                continue
            if sel and all(pod_labels.get(k) == v for k, v in sel.items()):
                selecting.append(np)
        if not selecting:
            bad(f"{where}: no NetworkPolicy selects its Pods")
        own = {k: pod_labels.get(k) for k in ("app.kubernetes.io/name", "app.kubernetes.io/instance") if pod_labels.get(k)}

        def own_labels_in(peer, where_):
            sel = (peer.get("podSelector") or {}).get("matchLabels") or {}
            carried = {k: v for k, v in sel.items() if own.get(k) == v}
            if carried:
                bad(f"{where_}: its podSelector carries the broker's own labels {carried}, so it matches no "
                    "DNS or monitoring Pod (a Kustomize labels/includeSelectors transformer?)")

        watched = set(config.get("watch_namespaces") or [own_ns])
        bus = urllib.parse.urlsplit(str(config.get("bus_url") or ""))
        bus_port = bus.port or (443 if bus.scheme == "https" else None)
        for np in selecting:
            nps = np["spec"]
            npname = f"NetworkPolicy {np['metadata']['name']}"
            if "Egress" not in (nps.get("policyTypes") or []):
                bad(f"{npname}: Egress is not restricted")
            node_local_dns = False
            dns_on_53 = False
            has_dns = False
            publisher_namespaces = set()
            router_port_open = False
            for i, rule in enumerate(nps.get("egress") or []):
                peers = rule.get("to") or []
                ports = {(p.get("port"), p.get("protocol", "TCP")) for p in rule.get("ports") or []}
                dns_rule = bool(ports) and all(p[0] in DNS_PORTS for p in ports)
                if not peers:
                    # The port-only API server rule (managed clusters): any address, API server ports only.
                    if not ports or any(p[0] not in API_SERVER_PORTS for p in ports):
                        bad(f"{npname}: egress rule {i} allows every destination"
                            + (f" on ports {sorted(p[0] for p in ports)}" if ports else ""))
                    continue
                if dns_rule and any(p[0] == 53 for p in ports):
                    dns_on_53 = True
                if any(p == (bus_port, "TCP") for p in ports) and any("ipBlock" in q for q in peers):
                    router_port_open = True
                for peer in peers:
                    cidr = (peer.get("ipBlock") or {}).get("cidr")
                    if cidr in ("0.0.0.0/0", "::/0"):
                        bad(f"{npname}: egress rule {i} allows {cidr}")
                    if cidr and dns_rule:
                        try:
                            if ipaddress.ip_address(NODE_LOCAL_DNS) in ipaddress.ip_network(cidr, strict=False):
                                node_local_dns = True
                        except ValueError:
                            bad(f"{npname}: egress rule {i}: {cidr} is not a CIDR")
                    if "namespaceSelector" in peer or "podSelector" in peer:
                        own_labels_in(peer, f"{npname}: egress rule {i}")
                        if dns_rule:
                            has_dns = True
                            continue
                        # Not DNS: only the publishers' namespaces, every port (publisher ports vary). A selector
                        # peer is what Cilium matches its own Pods by; its CIDR rules never match them.
                        covered = peer_namespaces(peer, ns_of(np))
                        if covered is None:
                            bad(f"{npname}: egress rule {i} selects Pods beyond named namespaces "
                                f"({compact(peer)}): name the watched namespaces by kubernetes.io/metadata.name")
                        elif not covered <= watched:
                            bad(f"{npname}: egress rule {i} reaches namespaces {sorted(covered - watched, key=str)} "
                                f"the broker does not watch ({sorted(watched, key=str)})")
                        else:
                            publisher_namespaces |= covered
            if dns_on_53 and not node_local_dns:
                bad(f"{npname}: no egress to node-local DNS ({NODE_LOCAL_DNS}) on port 53: Pods of clusters with "
                    "NodeLocal DNSCache could not resolve")
            if not has_dns:
                bad(f"{npname}: no egress to the cluster DNS Pods on a DNS port ({sorted(map(str, DNS_PORTS))})")
            if not watched <= publisher_namespaces:
                bad(f"{npname}: no egress rule selects the publishers of {sorted(watched - publisher_namespaces, key=str)} "
                    "by namespace: on Cilium, CIDR rules never match the cluster's own Pods, so every dial would "
                    "be dropped")
            if bus_port is not None and not router_port_open:
                bad(f"{npname}: no egress to the router's port {bus_port} (bus_url {config.get('bus_url')}): "
                    "the policy would block the bus")
            if "Ingress" not in (nps.get("policyTypes") or []):
                bad(f"{npname}: Ingress is not restricted")
            for i, rule in enumerate(nps.get("ingress") or []):
                sources = rule.get("from") or []
                if not sources:
                    bad(f"{npname}: ingress rule {i} admits every source (the metrics port serves /statusz, "
                        "which lists targets): name the monitoring namespace/Pods")
                if not rule.get("ports"):
                    bad(f"{npname}: ingress rule {i} opens every port")
                for peer in sources:
                    if (peer.get("ipBlock") or {}).get("cidr") in ("0.0.0.0/0", "::/0"):
                        bad(f"{npname}: ingress rule {i} admits every address")
                    own_labels_in(peer, f"{npname}: ingress rule {i}")

    # --- Placement and disruption, across identities -----------------------------------------
    by_ns = {}
    for p in pods:
        by_ns.setdefault(p["ns"], []).append(p)
    for ns, group in by_ns.items():
        names = sorted(p["name"] for p in group)
        for p in group:
            where = f"Deployment {ns + '/' if ns else ''}{p['name']}"
            spread_on_hosts = False
            hard_on_hosts = False
            for desc, key, sel, namespaces, hard in placement_terms(p["spec"]):
                if namespaces and ns not in namespaces:
                    matched = set()
                else:
                    matched = {q["name"] for q in group if selector_matches(sel, q["labels"])}
                if set(names) - matched:
                    bad(f"{where}: {desc}: selector {compact(sel)} matches the Pods of "
                        f"{sorted(matched) if matched else 'no Deployment'}, not of every identity {names}: it spreads nothing")
                elif key == HOSTNAME:
                    spread_on_hosts = True
                    hard_on_hosts = hard_on_hosts or hard
            if not spread_on_hosts:
                if len(group) > 1:
                    bad(f"{where}: no topology spread constraint or pod anti-affinity on {HOSTNAME} that covers "
                        f"the identities {names}: they can all land on one node")
                else:
                    bad(f"{where}: no spread on {HOSTNAME} although it is the only identity: adding a second would "
                        "change this Pod template and restart this broker at the same moment")
            elif len(group) > 1 and not hard_on_hosts:
                bad(f"{where}: the spread of {names} on {HOSTNAME} is soft: a broker that cannot get a node of its own "
                    "shares one with another, unseen (make it DoNotSchedule, or a required anti-affinity)")
        covering = []
        for pdb in kinds.get("PodDisruptionBudget", []):
            if ns_of(pdb) != ns:
                continue
            pname = f"PodDisruptionBudget {pdb['metadata']['name']}"
            pspec = pdb.get("spec") or {}
            matched = {q["name"] for q in group if selector_matches(pspec.get("selector"), q["labels"])}
            if matched != set(names):
                bad(f"{pname}: selector {compact(pspec.get('selector'))} matches "
                    f"{sorted(matched) if matched else 'no broker Pod'}, not every identity {names} "
                    "(a budget per identity lets a drain evict all of them)")
                continue
            covering.append(pdb)
            if "maxUnavailable" in pspec:
                if pspec["maxUnavailable"] != 1:
                    bad(f"{pname}: maxUnavailable {pspec['maxUnavailable']}, expected 1")
            elif pspec.get("minAvailable") != len(group) - 1:
                bad(f"{pname}: minAvailable {pspec.get('minAvailable')}, expected {len(group) - 1} (or maxUnavailable 1)")
        if len(group) > 1 and not covering:
            bad(f"namespace {ns}: no PodDisruptionBudget covers the identities {names}: a node drain can evict all at once")
        if len(covering) > 1:
            bad(f"namespace {ns}: {len(covering)} PodDisruptionBudgets cover the brokers (the eviction API refuses such Pods)")
        # Prometheus Operator monitors: every identity scraped, on a port that exists.
        services = [d for d in kinds.get("Service", []) if ns_of(d) == ns]
        for mon in kinds.get("ServiceMonitor", []) + kinds.get("PodMonitor", []):
            if ns_of(mon) != ns:
                continue
            mname = f"{mon['kind']} {mon['metadata']['name']}"
            msel = (mon.get("spec") or {}).get("selector")
            if mon["kind"] == "PodMonitor":
                matched = {q["name"] for q in group if selector_matches(msel, q["labels"])}
                ports = [e.get("port") for e in mon["spec"].get("podMetricsEndpoints") or []]
                known = {pt.get("name") for q in group for c in q["spec"].get("containers") or [] for pt in c.get("ports") or []}
            else:
                hit = [svc for svc in services if selector_matches(msel, (svc.get("metadata") or {}).get("labels") or {})]
                matched = {q["name"] for q in group for svc in hit
                           if (svc.get("spec") or {}).get("selector")
                           and all(q["labels"].get(k) == v for k, v in svc["spec"]["selector"].items())}
                ports = [e.get("port") for e in mon["spec"].get("endpoints") or []]
                known = {pt.get("name") for svc in hit for pt in (svc.get("spec") or {}).get("ports") or []}
            if matched != set(names):
                bad(f"{mname}: selector {compact(msel)} reaches {sorted(matched) if matched else 'no broker Pod'}, "
                    f"not every identity {names}")
            # A Pod a monitor scrapes and the annotations announce too is scraped twice: every series doubled,
            # every sum and count of the alerts twice what runs.
            for q in group:
                if q["name"] in matched and str(q["annotations"].get("prometheus.io/scrape")).lower() == "true":
                    bad(f"{mname} scrapes {q['name']}, whose Pods also carry prometheus.io/scrape: \"true\": "
                        "scraped twice (drop the annotations where a monitor scrapes)")
            for port in ports:
                if port not in known:
                    bad(f"{mname}: endpoint port {port!r} is not a port name of what it selects ({sorted(k for k in known if k)})")
            # The target labels the identity alerts group by (docs/operations.md, "Labels the scrape adds").
            for i, ep in enumerate(mon["spec"].get("endpoints") or mon["spec"].get("podMetricsEndpoints") or []):
                rel = ep.get("relabelings") or []
                for target, source in (("broker_group", "__meta_kubernetes_pod_label_continuum_io_broker_group"),
                                       ("node", "__meta_kubernetes_pod_node_name")):
                    if not any(r.get("targetLabel") == target and r.get("sourceLabels") == [source]
                               and r.get("action", "replace") == "replace" for r in rel):
                        bad(f"{mname}: endpoint {i} does not set the label {target} from {source}: "
                            "the identity alerts cannot group its series")
                expected = [str(r.get("replacement")) for r in rel if r.get("targetLabel") == "expected_identities"]
                if expected != [str(len(group))]:
                    bad(f"{mname}: endpoint {i} sets expected_identities to {expected or 'nothing'}, but "
                        f"{len(group)} identities run in {ns}: a missing identity would go unnoticed")
        sums = {}
        for p in group:
            c = p["annotations"].get("checksum/config")
            if c and c in sums:
                bad(f"Deployments {sums[c]} and {p['name']} share the config checksum {str(c)[:12]}: "
                    "one change would restart both identities together")
            elif c:
                sums[c] = p["name"]

    if identities is not None and len(client_ids) != identities:
        bad(f"{len(client_ids)} broker identities rendered, expected {identities}")
    ndeps = len(kinds.get("Deployment", []))
    for p in problems:
        print(f"  FAIL {name}: {p}")
    if not problems:
        print(f"  ok   {name}: {len(docs)} objects, {ndeps} Deployment(s), identities {sorted(client_ids)}, "
              f"{len(roles)} Role(s) in {sorted({k[0] or '(unset)' for k in roles})}")
    return 1 if problems else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--compare-self-test"] and len(sys.argv) == 4:
        sys.exit(compare_self_test(*sys.argv[2:4]))
    if sys.argv[1:2] == ["--compare"] and len(sys.argv) == 6:
        sys.exit(compare(*sys.argv[2:6]))
    if sys.argv[1:2] == ["--self-test"]:
        sys.exit(self_test(sys.stdin.read(), verbose="-v" in sys.argv[2:]))
    sys.exit(main(sys.argv[1:]))
