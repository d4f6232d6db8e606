{{/* Names, labels and images, after `helm create`'s conventions. */}}

{{- define "kubemoot.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: names every object of this chart (63 characters at most). */}}
{{- define "kubemoot.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "kubemoot.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kubemoot.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kubemoot.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "kubemoot.labels" -}}
helm.sh/chart: {{ include "kubemoot.chart" . }}
{{ include "kubemoot.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kubemoot
{{- end }}

{{- define "kubemoot.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kubemoot.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "kubemoot.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "kubemoot.sidecarImage" -}}
{{- $repo := default .Values.image.repository .Values.sidecar.image.repository }}
{{- $tag := default (default .Chart.AppVersion .Values.image.tag) .Values.sidecar.image.tag }}
{{- printf "%s:%s" $repo $tag }}
{{- end }}

{{- define "kubemoot.webhookName" -}}
{{- printf "%s-webhook" (include "kubemoot.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The web view's Service (operator.web), for `kubectl port-forward svc/<it>`. */}}
{{- define "kubemoot.webName" -}}
{{- printf "%s-web" (include "kubemoot.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kubemoot.webhookTlsSecret" -}}
{{- printf "%s-webhook-tls" (include "kubemoot.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kubemoot.modelNamespace" -}}
{{- default .Release.Namespace .Values.modelNamespace }}
{{- end }}

{{/* The NATS settings shared by the operator and (through its config) every sidecar. */}}
{{- define "kubemoot.natsEnv" -}}
- name: KUBEMOOT_NATS_URL
  value: {{ .Values.nats.url | quote }}
- name: KUBEMOOT_KV_REPLICAS
  value: {{ .Values.nats.bucketReplicas | quote }}
- name: KUBEMOOT_KEY_LAYOUT
  value: {{ .Values.nats.keyLayout | quote }}
{{- if include "kubemoot.natsCredsSecret" . }}
- name: KUBEMOOT_NATS_CREDS
  value: /etc/kubemoot/nats-creds/{{ .Values.nats.credentials.key }}
{{- end }}
{{- if .Values.nats.tls.enabled }}
- name: KUBEMOOT_NATS_TLS_CA
  value: /etc/kubemoot/nats-tls/{{ .Values.nats.tls.caKey }}
{{- if .Values.nats.tls.certKey }}
- name: KUBEMOOT_NATS_TLS_CERT
  value: /etc/kubemoot/nats-tls/{{ .Values.nats.tls.certKey }}
- name: KUBEMOOT_NATS_TLS_KEY
  value: /etc/kubemoot/nats-tls/{{ .Values.nats.tls.keyKey }}
{{- end }}
{{- end }}
{{- end }}

{{/* The OTEL_* env of a traced process (docs/deploy.md "Tracing"), as a YAML list: empty unless
tracing.endpoint is set. Arguments (a dict): root (the chart's context); service
(OTEL_SERVICE_NAME); k8sAttributes (resource attributes put before tracing.resourceAttributes,
whose $(VAR) references the kubelet expands from variables declared earlier in the container's
env); extraEnv (the user's list for that container: a name it sets is left out here, so that
the user's entry wins and the name appears once). Each variable only when its value is not
empty. */}}
{{- define "kubemoot.otelEnv" -}}
{{- $t := .root.Values.tracing }}
{{- $out := list }}
{{- if $t.endpoint }}
{{- $taken := list }}
{{- range .extraEnv }}
{{- $taken = append $taken .name }}
{{- end }}
{{- $attrs := without (list .k8sAttributes $t.resourceAttributes) "" | join "," }}
{{- $vars := list
    (list "OTEL_EXPORTER_OTLP_ENDPOINT" $t.endpoint)
    (list "OTEL_SERVICE_NAME" .service)
    (list "OTEL_TRACES_SAMPLER" $t.sampler)
    (list "OTEL_TRACES_SAMPLER_ARG" (toString $t.samplerArg))
    (list "OTEL_RESOURCE_ATTRIBUTES" $attrs) }}
{{- range $vars }}
{{- if and (ne (index . 1) "") (not (has (index . 0) $taken)) }}
{{- $out = append $out (dict "name" (index . 0) "value" (index . 1)) }}
{{- end }}
{{- end }}
{{- end }}
{{- toYaml $out }}
{{- end }}
