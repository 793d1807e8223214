{{- define "ceb.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Name of one identity's objects: <fullname>-<clientId as a DNS label>. */}}
{{- define "ceb.identityName" -}}
{{- $id := .identity.clientId | lower | replace "_" "-" | replace "." "-" -}}
{{- printf "%s-%s" (include "ceb.fullname" .root) $id | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "ceb.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/part-of: continuum
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "ceb.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
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
{{- if not .Values.identities -}}{{- fail "identities: at least one broker identity is required" -}}{{- end -}}
{{- $seen := dict -}}
{{- range .Values.identities -}}
{{- if not .clientId -}}{{- fail "identities[].clientId is required" -}}{{- end -}}
{{- if not .credentialSecret -}}{{- fail (printf "identity %s: credentialSecret is required" .clientId) -}}{{- end -}}
{{- if hasKey $seen .clientId -}}{{- fail (printf "identity %s is listed twice: HA means distinct clientIds, never two brokers of one" .clientId) -}}{{- end -}}
{{- $_ := set $seen .clientId true -}}
{{- end -}}
{{- $drain := include "ceb.seconds" .Values.config.drainDeadline | atoi -}}
{{- if le (int .Values.terminationGracePeriodSeconds) $drain -}}
{{- fail (printf "terminationGracePeriodSeconds (%v) must exceed config.drainDeadline (%s)" .Values.terminationGracePeriodSeconds .Values.config.drainDeadline) -}}
{{- end -}}
{{- end -}}
