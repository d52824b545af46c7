{{/* The chart's name, overridable. */}}
{{- define "vhost-broker.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's objects' name: the release name, with the chart's name unless it already holds it. */}}
{{- define "vhost-broker.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "vhost-broker.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "vhost-broker.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "vhost-broker.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vhost-broker.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "vhost-broker.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "vhost-broker.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: operator
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "vhost-broker.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "vhost-broker.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* registry/repository@digest, or :tag (default the chart's appVersion). */}}
{{- define "vhost-broker.image" -}}
{{- $repo := .Values.image.repository }}
{{- if .Values.image.registry }}{{ $repo = printf "%s/%s" .Values.image.registry $repo }}{{ end }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repo .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repo (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Whether the built-in topology controller runs (the setting is text, default true). */}}
{{- define "vhost-broker.topologyController" -}}
{{- $value := "true" }}
{{- if hasKey .Values.settings "topology-controller" }}{{ $value = toString (index .Values.settings "topology-controller") }}{{ end }}
{{- ne $value "false" }}
{{- end }}

{{/* Whether the built-in SQL controller runs (the setting is text, default false). */}}
{{- define "vhost-broker.sqlController" -}}
{{- $value := "false" }}
{{- if hasKey .Values.settings "sql-controller" }}{{ $value = toString (index .Values.settings "sql-controller") }}{{ end }}
{{- eq $value "true" }}
{{- end }}

{{- define "vhost-broker.mariadbOrders" -}}
{{- $value := "false" }}
{{- if hasKey .Values.settings "mariadb-orders" }}{{ $value = toString (index .Values.settings "mariadb-orders") }}{{ end }}
{{- eq $value "true" }}
{{- end }}

{{/* Whether the operator logs in to OpenBao with a projected service-account token. */}}
{{- define "vhost-broker.openbaoKubernetesAuth" -}}
{{- eq (toString (index .Values.settings "openbao-auth")) "kubernetes" }}
{{- end }}

{{/* A volume of one key of a ConfigMap or a Secret ({configMap|secret, key}). */}}
{{- define "vhost-broker.caVolume" -}}
{{- if .configMap }}
configMap:
  name: {{ .configMap }}
  items: [{ key: {{ .key }}, path: {{ .key }} }]
{{- else }}
secret:
  secretName: {{ .secret }}
  items: [{ key: {{ .key }}, path: {{ .key }} }]
{{- end }}
{{- end }}

{{/* Whether the chart renders its Roles, ClusterRoles and bindings (unset, as after an upgrade with --reuse-values from an older release: yes). */}}
{{- define "vhost-broker.rbacCreate" -}}
{{- or (not (hasKey .Values.rbac "create")) .Values.rbac.create }}
{{- end }}

{{/* The job label of the scraped series: a ServiceMonitor's is the Service's name, a PodMonitor's <namespace>/<name>. */}}
{{- define "vhost-broker.metricsJob" -}}
{{- if .Values.metrics.prometheusRule.job }}
{{- .Values.metrics.prometheusRule.job }}
{{- else if .Values.metrics.podMonitor.enabled }}
{{- printf "%s/%s" .Release.Namespace .Release.Name }}
{{- else }}
{{- printf "%s-metrics" .Release.Name }}
{{- end }}
{{- end }}

{{/* Whether the chart makes the scraper's ServiceAccount and its token Secret: a monitor scrapes HTTPS with neither a Secret named nor Prometheus's own token file. */}}
{{- define "vhost-broker.metricsScraper" -}}
{{- $monitor := .Values.metrics.serviceMonitor }}
{{- and .Values.metrics.secure (or $monitor.enabled .Values.metrics.podMonitor.enabled) (not $monitor.tokenSecret.name) (not $monitor.bearerTokenFile) }}
{{- end }}

{{/* One scrape endpoint of the ServiceMonitor or the PodMonitor, from metrics.serviceMonitor. */}}
{{- define "vhost-broker.scrapeEndpoint" -}}
{{- $monitor := .Values.metrics.serviceMonitor -}}
port: metrics
path: /metrics
interval: {{ $monitor.interval }}
{{- with $monitor.scrapeTimeout }}
scrapeTimeout: {{ . }}
{{- end }}
{{- if .Values.metrics.secure }}
scheme: https
{{- if $monitor.bearerTokenFile }}
bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
{{- else }}
authorization:
  type: Bearer
  credentials:
    name: {{ $monitor.tokenSecret.name | default (printf "%s-metrics-scraper" (include "vhost-broker.fullname" .)) }}
    key: {{ $monitor.tokenSecret.key }}
{{- end }}
tlsConfig:
  insecureSkipVerify: {{ $monitor.insecureSkipVerify }}
{{- end }}
{{- with $monitor.relabelings }}
relabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $monitor.metricRelabelings }}
metricRelabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
