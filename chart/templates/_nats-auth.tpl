{{/*
Least-privilege NATS users (docs/deploy.md "NATS credentials"). Both roles read the three KV
buckets through the JetStream API the KV client calls (stream info, stream message get, named
consumers for watches and key scans: servers 2.9 or newer; the pulls of ordered pull consumers,
MSG.NEXT, and the flow-control replies of push ones); the operator writes provider state and
creates the buckets, sidecars write tickets and demand. Anything not allowed is denied: no
consumer delete either (a watch that resets leaves its old ephemeral consumer to expire on the
server; the refused delete is logged).
What a sidecar user may write depends on the key layout (nats.keyLayout, docs/rules/state.md §2):
- scoped: the keys that name a namespace only for its namespaces (tickets t.<provider>.<ns>.<id>,
  conversation records c.<provider>.<ns>.<key>; demand wait.<model>.<ns>.<agent>, intent.<model>.<ns>.<agent>, use.<model>.<ns>,
  sel.<ns>.<crew>.<agent>, fair-share waiters queue.<model>.<ns>.<id> and service counters
  svc.<ns>.<crew>.<instance>), and the keys every sidecar shares (claim guards g.<provider>.claim,
  residency overlays r.<provider>.<model>, suspect marks s.<provider>.suspect);
- kubemoot: Kubemoot's own keys (<provider>__<id>, ...) do not tell namespaces apart: both
  buckets, whole.
Decision records for the web view (plain core NATS, no JetStream): a sidecar publishes its
agent's on kubemoot.decisions.<ns>; a sidecar user may publish only its namespaces' subjects
(scoped) or any one-token subject there (kubemoot, like its writes). The operator, whose web view
shows them, subscribes to kubemoot.decisions.> and publishes none; sidecars follow none.
Per-discussion bindings (docs/rules/binding.md §9): both roles read kubemoot_discussion_bindings;
only the operator creates and writes it. Sidecars publish discussion events,
kubemoot.discussion.<ns>.<thread>.open|close, on their namespaces' subjects only (scoped) or any
namespace's (kubemoot, like its writes); the operator subscribes to them.
Inputs: dict "role" ("operator" | "sidecar"), "layout" ("scoped" | "kubemoot"), "namespaces"
(the sidecar user's; DNS labels, so each is one subject token).
*/}}
{{- define "kubemoot.natsPermissions" -}}
{{- $buckets := list "kubemoot_provider_state" "kubemoot_provider_tickets" "kubemoot_model_demand" "kubemoot_discussion_bindings" }}
{{- $tickets := "$KV.kubemoot_provider_tickets" }}
{{- $demand := "$KV.kubemoot_model_demand" }}
{{- $writes := list }}
{{- $records := list }}
{{- if eq .role "operator" }}
{{- $writes = list "$KV.kubemoot_provider_state.>" "$KV.kubemoot_discussion_bindings.>" }}
{{- else if eq .layout "kubemoot" }}
{{- $writes = list (printf "%s.>" $tickets) (printf "%s.>" $demand) }}
{{- $records = list "kubemoot.decisions.*" "kubemoot.discussion.*.*.*" }}
{{- else if eq .layout "scoped" }}
{{- range .namespaces }}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$" .) }}
{{- fail (printf "nats.auth.sidecars[].namespaces: %q is not a namespace name (a DNS label)" .) }}
{{- end }}
{{- $writes = append $writes (printf "%s.t.*.%s.>" $tickets .) }}
{{- $writes = append $writes (printf "%s.c.*.%s.*" $tickets .) }}
{{- $records = append $records (printf "kubemoot.decisions.%s" .) }}
{{- $records = append $records (printf "kubemoot.discussion.%s.*.*" .) }}
{{- end }}
{{- $writes = concat $writes (list (printf "%s.g.*.claim" $tickets) (printf "%s.r.*.*" $tickets) (printf "%s.s.*.suspect" $tickets)) }}
{{- range .namespaces }}
{{- $writes = concat $writes (list (printf "%s.wait.*.%s.*" $demand .) (printf "%s.intent.*.%s.*" $demand .) (printf "%s.use.*.%s" $demand .) (printf "%s.sel.%s.*.*" $demand .) (printf "%s.queue.*.%s.*" $demand .) (printf "%s.svc.%s.*.*" $demand .)) }}
{{- end }}
{{- else }}
{{- fail (printf "nats.keyLayout: expected scoped or kubemoot, got %q" .layout) }}
{{- end }}
publish:
  allow:
    - "$JS.API.INFO"
    {{- range $buckets }}
    - "$JS.API.STREAM.INFO.KV_{{ . }}"
    - "$JS.API.STREAM.MSG.GET.KV_{{ . }}"
    - "$JS.API.CONSUMER.CREATE.KV_{{ . }}.>"
    - "$JS.API.CONSUMER.MSG.NEXT.KV_{{ . }}.>"
    - "$JS.FC.KV_{{ . }}.>"
    {{- end }}
    {{- if eq .role "operator" }}
    {{- range $buckets }}
    - "$JS.API.STREAM.CREATE.KV_{{ . }}"
    {{- end }}
    {{- end }}
    {{- range (concat $writes $records) }}
    - {{ . | quote }}
    {{- end }}
subscribe:
  allow:
    - "_INBOX.>"
    {{- if eq .role "operator" }}
    - "kubemoot.decisions.>"
    - "kubemoot.discussion.*.*.*"
    {{- end }}
{{- end }}

{{/* The users of the NATS server's `authorization` block, as a list. */}}
{{- define "kubemoot.natsUsers" -}}
{{- $users := list }}
{{- $layout := .Values.nats.keyLayout }}
{{- $op := dict "nkey" .Values.nats.auth.operator.nkey "permissions" (include "kubemoot.natsPermissions" (dict "role" "operator" "layout" $layout "namespaces" list) | fromYaml) }}
{{- $users = append $users $op }}
{{- range .Values.nats.auth.sidecars }}
{{- $users = append $users (dict "nkey" .nkey "permissions" (include "kubemoot.natsPermissions" (dict "role" "sidecar" "layout" $layout "namespaces" .namespaces) | fromYaml)) }}
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
