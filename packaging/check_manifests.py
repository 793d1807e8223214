#!/usr/bin/env python3
"""Checks rendered continuum-event-broker manifests (Kustomize or Helm output).

usage: check_manifests.py [--identities N] [--require-namespace] NAME < rendered.yaml
       check_manifests.py --self-test < valid-rendered.yaml   (every mutation must be caught)

Checks (R-OPS-1..3, R-SEC-14/15, R-BEH-8, R-CFG):
- the kinds ServiceAccount, Role, RoleBinding, ConfigMap, Deployment, Service, NetworkPolicy are
  present; no ClusterRole/ClusterRoleBinding, no Secret (credentials are never rendered);
- every Role grants exactly get/list/watch on dynamoworkermetadatas.nvidia.com and nothing else;
- every Deployment: replicas 1, strategy Recreate, a restrictive securityContext (non-root,
  read-only root filesystem, no privilege escalation, not privileged, all capabilities dropped
  and none added, seccomp RuntimeDefault), probes on /healthz (liveness, startup) and /readyz
  (readiness) on the metrics port, resource requests and limits, terminationGracePeriodSeconds
  greater than the config's drain_deadline, the credential from a Secret volume mounted as a
  file at credential_file and no credential in env;
- distinct client_ids (HA = distinct identities), N of them with --identities;
- every watch namespace of every identity has a Role bound to that identity's ServiceAccount;
- a NetworkPolicy selects every broker Pod, restricts Egress, and every egress rule names its
  peers (no allow-all rule); DNS only on port 53.
Prints one line per finding; exits 1 on any.
"""
import re
import sys

import yaml

ALLOWED_VERBS = {"get", "list", "watch"}
REQUIRED_KINDS = ["ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment", "Service", "NetworkPolicy"]
CONFIG_PATH = "/etc/continuum-event-broker/config.yaml"


def duration_seconds(text):
    m = re.fullmatch(r"([0-9]+)(ms|s|m|h)", str(text))
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    n, unit = int(m.group(1)), m.group(2)
    return n * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]


def self_test(text):
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
        "short grace": lambda d: first(d, "Deployment")["spec"]["template"]["spec"].__setitem__("terminationGracePeriodSeconds", 20),
        "credential in env": lambda d: container(d).setdefault("env", []).append(
            {"name": "CONTINUUM_EVENT_BROKER_CREDENTIAL", "valueFrom": {"secretKeyRef": {"name": "x", "key": "y"}}}),
        "no limits": lambda d: container(d)["resources"].pop("limits"),
        "allow-all egress": lambda d: first(d, "NetworkPolicy")["spec"]["egress"].append({}),
        "ClusterRole": lambda d: d.append({"kind": "ClusterRole", "metadata": {"name": "x"}, "rules": []}),
    }
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
    if not failures:
        print(f"  ok   self-test: all {len(mutations)} mutations of valid manifests were detected")
    return 1 if failures else 0


def main(argv):
    identities = None
    require_ns = False
    args = list(argv)
    name = "manifests"
    while args:
        a = args.pop(0)
        if a == "--identities":
            identities = int(args.pop(0))
        elif a == "--require-namespace":
            require_ns = True
        else:
            name = a
    docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
    problems = []

    def bad(msg):
        problems.append(msg)

    def ns_of(doc):
        return doc.get("metadata", {}).get("namespace")

    kinds = {}
    for d in docs:
        kinds.setdefault(d.get("kind"), []).append(d)
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

    configmaps = {(ns_of(c), c["metadata"]["name"]): c for c in kinds.get("ConfigMap", [])}
    policies = kinds.get("NetworkPolicy", [])
    client_ids = {}

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

        metrics_ports = {p.get("name"): p.get("containerPort") for p in c.get("ports") or []}

        def probe(kind, path, required=True):
            p = c.get(kind)
            if not p:
                if required:
                    bad(f"{where}: no {kind}")
                return
            get = p.get("httpGet") or {}
            if get.get("path") != path:
                bad(f"{where}: {kind} path {get.get('path')}, expected {path}")
            port = get.get("port")
            if port not in metrics_ports and port not in metrics_ports.values():
                bad(f"{where}: {kind} port {port} is not a container port")
            return port

        probe("livenessProbe", "/healthz")
        probe("readinessProbe", "/readyz")
        probe("startupProbe", "/healthz", required=False)

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
        for np in selecting:
            nps = np["spec"]
            if "Egress" not in (nps.get("policyTypes") or []):
                bad(f"NetworkPolicy {np['metadata']['name']}: Egress is not restricted")
            for i, rule in enumerate(nps.get("egress") or []):
                peers = rule.get("to") or []
                if not peers:
                    bad(f"NetworkPolicy {np['metadata']['name']}: egress rule {i} allows every destination")
                for peer in peers:
                    cidr = (peer.get("ipBlock") or {}).get("cidr")
                    if cidr in ("0.0.0.0/0", "::/0"):
                        bad(f"NetworkPolicy {np['metadata']['name']}: egress rule {i} allows {cidr}")
                    if "namespaceSelector" in peer or "podSelector" in peer:
                        ports = {(p.get("port"), p.get("protocol", "TCP")) for p in rule.get("ports") or []}
                        if not ports or any(p[0] != 53 for p in ports):
                            bad(f"NetworkPolicy {np['metadata']['name']}: egress rule {i} to selected Pods is not DNS-only (port 53)")

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
    if sys.argv[1:2] == ["--self-test"]:
        sys.exit(self_test(sys.stdin.read()))
    sys.exit(main(sys.argv[1:]))
