{{/*
The Model bundle's objects. They live in a .tpl (not in models.yaml / providers.yaml) so that
the templates directory holds no half-templated kubemoot.ai documents: tools that read
chart/templates/*.yaml as plain manifests (test/binding/crds.test.ts) see only real ones.
Called with (dict "item" <entry> "root" $).
*/}}

{{- define "kubemoot.model" -}}
{{- $m := .item }}
apiVersion: kubemoot.ai/v1alpha1
kind: Model
metadata:
  name: {{ $m.name }}
  namespace: {{ default (include "kubemoot.modelNamespace" .root) $m.namespace }}
  labels:
    {{- include "kubemoot.labels" .root | nindent 4 }}
    {{- with $m.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  model: {{ $m.model | quote }}
  providerRef: {{ $m.providerRef }}
  {{- if hasKey $m "vramMib" }}
  vramMib: {{ int64 $m.vramMib }}
  {{- end }}
{{- end }}

{{- define "kubemoot.modelProvider" -}}
{{- $p := .item }}
apiVersion: kubemoot.ai/v1alpha1
kind: ModelProvider
metadata:
  name: {{ $p.name }}
  namespace: {{ default (include "kubemoot.modelNamespace" .root) $p.namespace }}
  labels:
    {{- include "kubemoot.labels" .root | nindent 4 }}
    {{- with $p.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  type: {{ default "ollama" $p.type }}
  {{- with $p.engine }}
  engine: {{ . }}
  {{- end }}
  endpoint: {{ $p.endpoint | quote }}
  {{- if or (hasKey $p "weight") (hasKey $p "memoryMiB") }}
  scheduling:
    {{- if hasKey $p "weight" }}
    weight: {{ int $p.weight }}
    {{- end }}
    {{- if hasKey $p "memoryMiB" }}
    memoryMiB: {{ int64 $p.memoryMiB }}
    {{- end }}
  {{- end }}
{{- end }}
