{{/*
Helpers shared by the merchantd templates.
*/}}

{{/* The chart name, or nameOverride. */}}
{{- define "merchantd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The resource name prefix: fullnameOverride, else <release>-<name> (just <release> when the release
name already contains the chart name). Kept to 52 characters so that suffixes such as "-metrics"
and "-migrate" stay within the 63-character limit of Kubernetes names and labels.
*/}}
{{- define "merchantd.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* chart-version, for the helm.sh/chart label. */}}
{{- define "merchantd.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every resource. */}}
{{- define "merchantd.labels" -}}
helm.sh/chart: {{ include "merchantd.chart" . }}
{{ include "merchantd.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: merchantd
{{- end }}

{{/* Labels that identify this release's pods (server and migration Job alike). */}}
{{- define "merchantd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "merchantd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Labels that select the server pods only. The component label keeps the migration Job's pods (which
never listen) out of the Services, the PodDisruptionBudget and the autoscaler.
*/}}
{{- define "merchantd.serverSelectorLabels" -}}
{{ include "merchantd.selectorLabels" . }}
app.kubernetes.io/component: server
{{- end }}

{{/* The ServiceAccount the server pods run as. */}}
{{- define "merchantd.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "merchantd.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The image reference: repository@digest when a digest is given, else repository:tag. */}}
{{- define "merchantd.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* Name of the metrics Service (also the Prometheus `job` label when scraped via the ServiceMonitor). */}}
{{- define "merchantd.metricsServiceName" -}}
{{- printf "%s-metrics" (include "merchantd.fullname" .) }}
{{- end }}

{{/* Name of the Secret or ConfigMap holding the tenant manifests ("" when none is mounted). */}}
{{- define "merchantd.tenantsName" -}}
{{- if ne .Values.tenants.source "none" }}
{{- if .Values.tenants.existingName }}
{{- .Values.tenants.existingName }}
{{- else if .Values.tenants.manifests }}
{{- printf "%s-tenants" (include "merchantd.fullname" .) }}
{{- end }}
{{- end }}
{{- end }}

{{/* The container port of the API and auth listener (merchantd's `bind`); fixed, the Service maps it. */}}
{{- define "merchantd.httpPort" -}}8080{{- end }}

{{/* Where the tenant manifests and the configuration file are mounted. */}}
{{- define "merchantd.tenantsDir" -}}/etc/merchantd/tenants{{- end }}
{{- define "merchantd.configDir" -}}/etc/merchantd/config{{- end }}

{{/*
The public base URL: config.public_base_url, else https://<first Ingress host> when the Ingress is
on (http:// when that host has no TLS entry), else "" (merchantd's default, http://<bind>, which is
not reachable from outside the pod).
*/}}
{{- define "merchantd.publicBaseUrl" -}}
{{- if .Values.config.public_base_url }}
{{- .Values.config.public_base_url }}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts }}
{{- $host := (first .Values.ingress.hosts).host }}
{{- $tls := false }}
{{- range .Values.ingress.tls }}
{{- if has $host (.hosts | default list) }}
{{- $tls = true }}
{{- end }}
{{- end }}
{{- printf "%s://%s" (ternary "https" "http" $tls) $host }}
{{- end }}
{{- end }}

{{/*
merchantd.toml. Keys are the ones of docs/configuration.md; merchantd rejects unknown keys, and so
does values.schema.json. bind, metrics_bind and tenants are set by the chart; database_url comes
from the Secret through MERCHANTD_DATABASE_URL and is never written here. Numbers are rendered as
TOML integers (Helm reads YAML numbers as floats), strings as TOML basic strings; empty strings and
nulls are left out so that merchantd's own default applies.
*/}}
{{- define "merchantd.configToml" -}}
# merchantd.toml rendered by the merchantd Helm chart (docs/configuration.md lists the keys).
bind = "0.0.0.0:{{ include "merchantd.httpPort" . }}"
metrics_bind = "0.0.0.0:{{ .Values.metrics.port }}"
tenants = {{ include "merchantd.tenantsDir" . | toJson }}
{{- $base := include "merchantd.publicBaseUrl" . }}
{{- if $base }}
public_base_url = {{ $base | toJson }}
{{- end }}
{{- range $key, $value := .Values.config }}
{{- if and (ne $key "public_base_url") (not (kindIs "invalid" $value)) (ne (toString $value) "") }}
{{- if kindIs "string" $value }}
{{ $key }} = {{ $value | toJson }}
{{- else if kindIs "bool" $value }}
{{ $key }} = {{ $value }}
{{- else }}
{{ $key }} = {{ $value | int64 }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
checkov.io/skipN annotations: the checks this resource deliberately does not satisfy, each with
its reason (checkov reads them from the resource's metadata). Pass a list of "CKV_ID=reason"; the
reason must not contain "=" (checkov splits the annotation on it).
*/}}
{{- define "merchantd.checkovSkips" -}}
{{- range $i, $skip := . }}
checkov.io/skip{{ add1 $i }}: {{ $skip | quote }}
{{- end }}
{{- end }}

{{/* Checks the pod templates (server and migration Job) deliberately leave unmet, with reasons. */}}
{{- define "merchantd.podCheckovSkips" -}}
{{- $skips := list "CKV_K8S_35=merchantd reads its database URL only from MERCHANTD_DATABASE_URL (or the config file, which is a ConfigMap); the env var is a secretKeyRef, so the URL stays in the operator's Secret and never appears in the pod spec" }}
{{- if not .Values.image.digest }}
{{- $skips = append $skips "CKV_K8S_43=image.digest is empty, so the image is pinned by its version tag (the chart's appVersion by default); set image.digest to pin it by digest" }}
{{- end }}
{{- if ne .Values.image.pullPolicy "Always" }}
{{- $skips = append $skips (printf "CKV_K8S_15=image.pullPolicy is %s: release images are immutable version tags or digests, and Always would make every pod start depend on the registry; set image.pullPolicy to Always where nodes are shared with untrusted workloads" .Values.image.pullPolicy) }}
{{- end }}
{{- $skips | toJson }}
{{- end }}

{{/* The container securityContext shared by the server and the migration Job. */}}
{{- define "merchantd.containerSecurityContext" -}}
{{- toYaml .Values.securityContext }}
{{- end }}

{{/* The pod securityContext shared by the server and the migration Job. */}}
{{- define "merchantd.podSecurityContext" -}}
{{- toYaml .Values.podSecurityContext }}
{{- end }}

{{/* The label selector (PromQL) for this release's metrics, as scraped through the ServiceMonitor. */}}
{{- define "merchantd.promSelector" -}}
namespace="{{ .Release.Namespace }}",job="{{ include "merchantd.metricsServiceName" . }}"
{{- end }}
