{{/*
Least-privilege NATS users (docs/deploy.md "NATS credentials"). Both roles read the three KV
buckets through the JetStream API the KV client calls (stream info, stream message get, named
ordered consumers for watches and key scans: servers 2.9 or newer, and replies to their flow
control); the operator writes provider state and creates the buckets, sidecars write tickets
and demand. Anything not allowed is denied: no consumer delete either (a watch that resets
leaves its old ephemeral consumer to expire on the server; the refused delete is logged).
Inputs: dict "role" ("operator" | "sidecar").
*/}}
{{- define "kubemoot.natsPermissions" -}}
{{- $buckets := list "kubemoot_provider_state" "kubemoot_provider_tickets" "kubemoot_model_demand" }}
{{- $writes := list "kubemoot_provider_tickets" "kubemoot_model_demand" }}
{{- if eq .role "operator" }}
{{- $writes = list "kubemoot_provider_state" }}
{{- end }}
publish:
  allow:
    - "$JS.API.INFO"
    {{- range $buckets }}
    - "$JS.API.STREAM.INFO.KV_{{ . }}"
    - "$JS.API.STREAM.MSG.GET.KV_{{ . }}"
    - "$JS.API.CONSUMER.CREATE.KV_{{ . }}.>"
    - "$JS.FC.KV_{{ . }}.>"
    {{- end }}
    {{- if eq .role "operator" }}
    {{- range $buckets }}
    - "$JS.API.STREAM.CREATE.KV_{{ . }}"
    {{- end }}
    {{- end }}
    {{- range $writes }}
    - "$KV.{{ . }}.>"
    {{- end }}
subscribe:
  allow:
    - "_INBOX.>"
{{- end }}

{{/* The users of the NATS server's `authorization` block, as a list. */}}
{{- define "kubemoot.natsUsers" -}}
{{- $users := list }}
{{- $op := dict "nkey" .Values.nats.auth.operator.nkey "permissions" (include "kubemoot.natsPermissions" (dict "role" "operator") | fromYaml) }}
{{- $users = append $users $op }}
{{- range .Values.nats.auth.sidecars }}
{{- $users = append $users (dict "nkey" .nkey "permissions" (include "kubemoot.natsPermissions" (dict "role" "sidecar") | fromYaml)) }}
{{- end }}
{{- /* `>` unescaped: JSON either way, and NATS configuration text as written. */}}
{{- toJson $users | replace "\\u003e" ">" }}
{{- end }}

{{/* The Secret (release namespace) holding the operator's NATS credentials, or "". */}}
{{- define "kubemoot.natsCredsSecret" -}}
{{- if .Values.nats.credentials.secretName }}
{{- .Values.nats.credentials.secretName }}
{{- else if and .Values.nats.auth.enabled .Values.nats.auth.operator.seed }}
{{- printf "%s-nats-operator" (include "kubemoot.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
