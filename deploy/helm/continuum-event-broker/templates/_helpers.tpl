{{/* The chart's name (app.kubernetes.io/name): nameOverride, or the chart's. */}}
{{- define "ceb.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's prefix, at most 40 characters so that every object name keeps room for an identity
and a suffix (the longest, "-metadata-reader", 16) inside 63: fullnameOverride, or <release>-<name>
(the release name alone when it already contains the name). */}}
{{- define "ceb.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "ceb.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Name of one identity's objects: <fullname>-<clientId as a DNS label>, at most 55 characters so the
longest per-identity suffix ("-metrics") stays inside 63. A clientId that is not already a DNS label
(upper case, "_", ".") or does not fit is shortened and followed by 6 hex digits of its SHA-256, so
broker_a, Broker-A and broker-a, or two long ids that share a prefix, never render one name; a
clientId that fits keeps the plain name it always had. */}}
{{- define "ceb.identityName" -}}
{{- $prefix := include "ceb.fullname" .root -}}
{{- $raw := toString .identity.clientId -}}
{{- $id := regexReplaceAll "[^a-z0-9-]" (lower $raw) "-" | trimAll "-" -}}
{{- $room := sub 55 (add1 (len $prefix)) | int -}}
{{- if and (eq $id $raw) (le (len $id) $room) -}}
{{- printf "%s-%s" $prefix $id -}}
{{- else -}}
{{- $short := $id | trunc (int (sub $room 7)) | trimSuffix "-" -}}
{{- $hash := sha256sum $raw | trunc 6 -}}
{{- if $short -}}{{- printf "%s-%s-%s" $prefix $short $hash -}}{{- else -}}{{- printf "%s-%s" $prefix $hash -}}{{- end -}}
{{- end -}}
{{- end -}}

{{- define "ceb.labels" -}}
{{ include "ceb.podLabels" . }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The labels of a Pod template: ceb.labels without the chart's version. A Pod template that changes with
the chart version restarts every identity at once on any chart upgrade (Recreate, one replica each); what
really changes a template rolls out identity by identity with identities[].paused (docs/deployment.md 5.5). */}}
{{- define "ceb.podLabels" -}}
app.kubernetes.io/name: {{ include "ceb.name" . }}
app.kubernetes.io/part-of: continuum
{{ include "ceb.groupLabel" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The label every Pod of this release carries, whatever its identity: what the placement rules,
the PodDisruptionBudget and the monitors select (with app.kubernetes.io/name). */}}
{{- define "ceb.groupLabel" -}}
continuum.io/broker-group: {{ include "ceb.fullname" . }}
{{- end -}}
{{- define "ceb.groupSelector" -}}
app.kubernetes.io/name: {{ include "ceb.name" . }}
{{ include "ceb.groupLabel" . }}
{{- end -}}
{{- define "ceb.instanceLabel" -}}
app.kubernetes.io/instance: {{ include "ceb.identityName" . }}
{{- end -}}
{{- define "ceb.selector" -}}
app.kubernetes.io/name: {{ include "ceb.name" .root }}
app.kubernetes.io/instance: {{ include "ceb.identityName" . }}
{{- end -}}

{{- define "ceb.watchNamespaces" -}}
{{- if .Values.config.watchNamespaces -}}
{{- toJson .Values.config.watchNamespaces -}}
{{- else -}}
{{- toJson (list .Release.Namespace) -}}
{{- end -}}
{{- end -}}

{{/* Seconds of a duration such as 25s, 250ms, 2m, 1h (rounded up). */}}
{{- define "ceb.seconds" -}}
{{- $d := toString . -}}
{{- if not (regexMatch "^[0-9]+(ms|s|m|h)$" $d) -}}
{{- fail (printf "not a duration: %q (a whole number and ms, s, m or h)" $d) -}}
{{- end -}}
{{- if hasSuffix "ms" $d -}}{{ div (add (atoi (trimSuffix "ms" $d)) 999) 1000 }}
{{- else if hasSuffix "s" $d -}}{{ atoi (trimSuffix "s" $d) }}
{{- else if hasSuffix "m" $d -}}{{ mul (atoi (trimSuffix "m" $d)) 60 }}
{{- else -}}{{ mul (atoi (trimSuffix "h" $d)) 3600 }}
{{- end -}}
{{- end -}}

{{- define "ceb.validate" -}}
{{- if not .Values.config.busUrl -}}{{- fail "config.busUrl is required (https://host[:port])" -}}{{- end -}}
{{- if not (hasPrefix "https://" .Values.config.busUrl) -}}{{- fail "config.busUrl must be https:// (R-SEC-13)" -}}{{- end -}}
{{- if not .Values.config.dynamoNamespaces -}}{{- fail "config.dynamoNamespaces is required" -}}{{- end -}}
{{- if and (not .Values.config.allowedCidrs) (not .Values.config.dialAnyAddress) -}}
{{- fail "config.allowedCidrs is required: the cluster's Pod CIDR (for example [10.244.0.0/16]; docs/deployment.md, \"The Pod CIDR\"), the only addresses the broker may dial. To let it dial any address outside the special ranges instead (the API server and the nodes included), set config.dialAnyAddress=true." -}}
{{- end -}}
{{- if and .Values.config.allowedCidrs .Values.config.dialAnyAddress -}}
{{- fail "config.dialAnyAddress=true and config.allowedCidrs contradict each other: set one" -}}
{{- end -}}
{{- if not .Values.identities -}}{{- fail "identities: at least one broker identity is required" -}}{{- end -}}
{{- $seen := dict -}}
{{- range .Values.identities -}}
{{- if not .clientId -}}{{- fail "identities[].clientId is required" -}}{{- end -}}
{{- if not .credentialSecret -}}{{- fail (printf "identity %s: credentialSecret is required" .clientId) -}}{{- end -}}
{{- if hasKey $seen (toString .clientId) -}}{{- fail (printf "identity %s is listed twice: HA means distinct clientIds, never two brokers of one" .clientId) -}}{{- end -}}
{{- $_ := set $seen (toString .clientId) true -}}
{{- end -}}
{{- $names := dict -}}
{{- range .Values.identities -}}
{{- $n := include "ceb.identityName" (dict "root" $ "identity" .) -}}
{{- if hasKey $names $n -}}{{- fail (printf "identities %s and %s render the same object name %s" (get $names $n) .clientId $n) -}}{{- end -}}
{{- $_ := set $names $n (toString .clientId) -}}
{{- end -}}
{{- include "ceb.validateNetworkPolicy" . -}}
{{- $drain := include "ceb.seconds" .Values.config.drainDeadline | atoi -}}
{{- if le (int .Values.terminationGracePeriodSeconds) $drain -}}
{{- fail (printf "terminationGracePeriodSeconds (%v) must exceed config.drainDeadline (%s)" .Values.terminationGracePeriodSeconds .Values.config.drainDeadline) -}}
{{- end -}}
{{- end -}}

{{/* One identity's config.yaml (the ConfigMap's data, and the source of its checksum). */}}
{{- define "ceb.configYaml" -}}
{{- $root := .root -}}
bus_url: {{ $root.Values.config.busUrl | quote }}
{{- if $root.Values.config.caConfigMap }}
ca_file: /etc/continuum-event-broker/ca/ca.pem
{{- end }}
{{- if $root.Values.config.tlsServerName }}
tls_server_name: {{ $root.Values.config.tlsServerName | quote }}
{{- end }}
client_id: {{ .identity.clientId | quote }}
credential_file: /var/run/secrets/continuum-event-broker/credential
dynamo_namespaces: {{ toJson $root.Values.config.dynamoNamespaces }}
watch_namespaces: {{ include "ceb.watchNamespaces" $root }}
{{- if $root.Values.config.allowedCidrs }}
allowed_cidrs: {{ toJson $root.Values.config.allowedCidrs }}
{{- end }}
metrics_listen: "0.0.0.0:{{ $root.Values.config.metricsPort }}"
reconnect_backoff:
  initial: {{ $root.Values.config.reconnectBackoff.initial | quote }}
  max: {{ $root.Values.config.reconnectBackoff.max | quote }}
drain_deadline: {{ $root.Values.config.drainDeadline | quote }}
upstream_connect_timeout: {{ $root.Values.config.upstreamConnectTimeout | quote }}
bus_connect_timeout: {{ $root.Values.config.busConnectTimeout | quote }}
log_format: {{ $root.Values.config.logFormat | quote }}
log_level: {{ $root.Values.config.logLevel | quote }}
{{- end -}}

{{/* The router's port: config.busUrl's, or 443 when the URL names none. */}}
{{- define "ceb.busPort" -}}
{{- $host := (urlParse .Values.config.busUrl).host -}}
{{- if regexMatch ":[0-9]+$" $host -}}{{ regexFind "[0-9]+$" $host }}{{- else -}}443{{- end -}}
{{- end -}}

{{/* What a NetworkPolicy needs before it can let the broker work; without it the rules would be
rendered empty and the Pod would never sync nor reach the router. */}}
{{- define "ceb.validateNetworkPolicy" -}}
{{- $np := .Values.networkPolicy -}}
{{- if $np.enabled -}}
{{- if not $np.routerCidrs -}}
{{- fail "networkPolicy.enabled needs networkPolicy.routerCidrs (the router's addresses, for example [203.0.113.10/32]); without them the broker could not reach the router. Or set networkPolicy.enabled=false." -}}
{{- end -}}
{{- if and (not $np.apiServerCidrs) (not $np.apiServerAnyDestination) (not .Values.ciliumNetworkPolicy.enabled) -}}
{{- fail "networkPolicy.enabled needs a way to the API server: networkPolicy.apiServerCidrs (the addresses of `kubectl get endpointslices -n default -l kubernetes.io/service-name=kubernetes`), or, on a managed cluster whose control plane moves, networkPolicy.apiServerAnyDestination=true (the API server ports to any address), or on Cilium ciliumNetworkPolicy.enabled=true (toEntities: kube-apiserver). See docs/deployment.md." -}}
{{- end -}}
{{- if and (not $np.publisherNamespaces) (not $np.podCidrs) -}}
{{- fail "networkPolicy.enabled needs a way to the publishers: networkPolicy.publisherNamespaces=true (a selector over the watched namespaces, every CNI) or networkPolicy.podCidrs (ipBlocks, for host-network publishers)." -}}
{{- end -}}
{{- $busPort := include "ceb.busPort" . -}}
{{- if and (not (kindIs "invalid" $np.routerPort)) (ne (toString $np.routerPort) $busPort) -}}
{{- fail (printf "networkPolicy.routerPort %v differs from the port of config.busUrl %s (%s): the policy would block the bus. Leave routerPort unset (null) to take busUrl's." $np.routerPort .Values.config.busUrl $busPort) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* Target labels the identity alerts group by (deploy/monitoring/prometheus-rules.yaml,
docs/operations.md "Labels the scrape adds"): the group from the Pod label, the node the Pod runs
on, and how many identities the group has. Labels of the scrape, not of the broker: a broker knows
neither its group nor its node, and its own labels never name hosts (R-MET). The count is the
monitor's, not the Pod's: adding an identity changes this object and restarts no broker. */ -}}
{{- define "ceb.monitorRelabelings" -}}
- sourceLabels: [__meta_kubernetes_pod_label_continuum_io_broker_group]
  targetLabel: broker_group
- sourceLabels: [__meta_kubernetes_pod_node_name]
  targetLabel: node
- targetLabel: expected_identities
  replacement: {{ len .Values.identities | quote }}
{{- end }}
