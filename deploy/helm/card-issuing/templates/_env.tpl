{{/* Environment of the processes (CONTRACTS §2, src/config.ts). Each component gets only what it reads. */}}

{{/* temporal.tls as one map, whatever form the values take: 0.1.0's `temporal.tls: true` (a bool) and
     `temporal.tlsSecret` still work. "on" is whether the processes speak TLS to Temporal at all. */}}
{{- define "card-issuing.temporalTls" -}}
{{- $t := .Values.temporal.tls -}}
{{- $m := dict "enabled" false "clientSecret" "" "caSecret" "" "serverName" "" -}}
{{- if kindIs "map" $t }}{{ $m = merge (deepCopy $t) $m }}{{ else if $t }}{{ $_ := set $m "enabled" true }}{{ end -}}
{{- if not $m.clientSecret }}{{ $_ := set $m "clientSecret" (.Values.temporal.tlsSecret | default "") }}{{ end -}}
{{- $_ := set $m "on" (or $m.enabled $m.clientSecret $m.caSecret $m.serverName | empty | not) -}}
{{- toYaml $m -}}
{{- end -}}

{{/* Temporal's address and credentials: the worker and the bridge connect; the codec endpoint never does. */}}
{{- define "card-issuing.temporalEnv" -}}
{{- $tls := include "card-issuing.temporalTls" . | fromYaml -}}
- name: TEMPORAL_ADDRESS
  value: {{ .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: TEMPORAL_TASK_QUEUE
  value: {{ .Values.temporal.taskQueue | quote }}
{{- if $tls.on }}
- name: TEMPORAL_TLS
  value: "true"
{{- end }}
{{- if $tls.clientSecret }}
- name: TEMPORAL_TLS_CERT_PATH
  value: /etc/temporal-tls/tls.crt
- name: TEMPORAL_TLS_KEY_PATH
  value: /etc/temporal-tls/tls.key
{{- end }}
{{- if $tls.caSecret }}
- name: TEMPORAL_TLS_CA_PATH
  value: /etc/temporal-ca/ca.crt
{{- end }}
{{- with $tls.serverName }}
- name: TEMPORAL_TLS_SERVER_NAME
  value: {{ . | quote }}
{{- end }}
{{- if .Values.secrets.temporalApiKey.name }}
{{ include "card-issuing.secretEnv" (dict "name" "TEMPORAL_API_KEY" "secret" .Values.secrets.temporalApiKey.name "key" .Values.secrets.temporalApiKey.key) }}
{{- end }}
{{- end -}}

{{/* The payload codec's key, and the retired ones it still decrypts with (absent before a first rotation). */}}
{{- define "card-issuing.codecKeyEnv" -}}
{{- $s := .Values.secrets.codec -}}
{{ include "card-issuing.secretEnv" (dict "name" "PAYLOAD_CODEC_KEY" "secret" $s.name "key" $s.keyKey) }}
- name: PAYLOAD_CODEC_KEY_ID
  value: {{ .Values.codec.keyId | quote }}
{{ include "card-issuing.secretEnv" (dict "name" "PAYLOAD_CODEC_PREVIOUS_KEYS" "secret" $s.name "key" $s.previousKeysKey "optional" true) }}
{{- end -}}

{{/* What every process reads: where to listen, logs. */}}
{{- define "card-issuing.processEnv" -}}
- name: LISTEN_HOST
  value: "0.0.0.0"
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- end -}}

{{- define "card-issuing.otelEnv" -}}
{{- with .Values.otelEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* The provider's credentials and endpoint: the worker calls it, the bridge verifies its webhooks. */}}
{{- define "card-issuing.providerEnv" -}}
- name: PROVIDER_BASE_URL
  value: {{ .Values.provider.baseUrl | quote }}
- name: PROVIDER_TIMEOUT_MS
  value: {{ .Values.provider.timeoutMs | quote }}
- name: PROVIDER_RATE_WINDOW_MS
  value: {{ .Values.provider.rateWindowMs | quote }}
{{ include "card-issuing.secretEnv" (dict "name" "PROVIDER_API_KEY" "secret" .Values.secrets.provider.name "key" .Values.secrets.provider.apiKeyKey) }}
{{ include "card-issuing.secretEnv" (dict "name" "PROVIDER_API_SECRET" "secret" .Values.secrets.provider.name "key" .Values.secrets.provider.apiSecretKey) }}
{{- end -}}

{{/* The bridge verifies webhooks and calls nothing: the webhook secret (and the API key a webhook may carry), never the API secret. */}}
{{- define "card-issuing.webhookEnv" -}}
{{ include "card-issuing.secretEnv" (dict "name" "PROVIDER_API_KEY" "secret" .Values.secrets.provider.name "key" .Values.secrets.provider.apiKeyKey) }}
{{ include "card-issuing.secretEnv" (dict "name" "PROVIDER_WEBHOOK_SECRET" "secret" .Values.secrets.provider.name "key" .Values.secrets.provider.webhookSecretKey) }}
{{- end -}}

{{/* V8's heap is capped below the container's memory limit: Node sizes its heap from the host's memory,
     not the cgroup's, and the Temporal core and buffers live outside the heap. The rest of the limit
     (heapPercentOfMemoryLimit, 75 %) is left to them, so V8 collects before the kernel OOM-kills. */}}
{{- define "card-issuing.nodeOptionsEnv" -}}
{{- $mem := dig "limits" "memory" "" .values.resources | toString -}}
{{- if $mem }}
{{- $units := dict "Ki" 0.0009765625 "Mi" 1.0 "Gi" 1024.0 "K" 0.00095367431640625 "M" 0.95367431640625 "G" 953.67431640625 -}}
{{- $num := regexReplaceAll "(Ki|Mi|Gi|K|M|G)$" $mem "" -}}
{{- $unit := trimPrefix $num $mem -}}
{{- if not (regexMatch "^[0-9]+(\\.[0-9]+)?(e\\+?[0-9]+)?$" $num) }}
{{- fail (printf "%s.resources.limits.memory %q: give it in Mi or Gi (e.g. 512Mi, 1Gi) to size NODE_OPTIONS" .component $mem) }}
{{- end }}
{{- $mib := ternary (divf (float64 $num) 1048576) (mulf (float64 $num) (get $units $unit)) (eq $unit "") }}
- name: NODE_OPTIONS
  value: {{ printf "--max-old-space-size=%d" (divf (mulf $mib .root.Values.heapPercentOfMemoryLimit) 100 | floor | int) | quote }}
{{- end }}
{{- end -}}

{{/* A container's env: the chart's entries (base, a YAML list), then global extraEnv, then the component's.
     An extraEnv entry replaces the chart's entry of that name (and the component's the global one)
     instead of following it: duplicate names break strategic-merge patches on helm upgrade.
     (dict "root" $ "values" .Values.worker "base" (include ...)) */}}
{{- define "card-issuing.env" -}}
{{- $mine := .values.extraEnv | default list -}}
{{- $seen := dict -}}
{{- range $mine }}{{ $_ := set $seen .name true }}{{ end -}}
{{- $extra := list -}}
{{- range (.root.Values.extraEnv | default list) }}{{ if not (hasKey $seen .name) }}{{ $extra = append $extra . }}{{ $_ := set $seen .name true }}{{ end }}{{ end -}}
{{- $out := list -}}
{{- range (fromYamlArray .base) }}{{ if not (hasKey $seen .name) }}{{ $out = append $out . }}{{ end }}{{ end -}}
{{- range (concat $extra $mine) }}
{{- $e := deepCopy . }}{{ if hasKey $e "value" }}{{ $_ := set $e "value" (toString $e.value) }}{{ end }}
{{- $out = append $out $e }}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/* The Nexus endpoint Job's: Temporal only (nexus-endpoint sends no payload: no payload key, no provider secret, no PIN key). */}}
{{- define "card-issuing.nexusEndpointEnv" -}}
{{ include "card-issuing.processEnv" . }}
{{ include "card-issuing.temporalEnv" . }}
{{- end -}}

{{/* The rollout Job's: the operator CLI's, Temporal and the payload key, no provider secret, no PIN key. */}}
{{- define "card-issuing.rolloutEnv" -}}
{{ include "card-issuing.processEnv" . }}
{{ include "card-issuing.temporalEnv" . }}
- name: TEMPORAL_DEPLOYMENT_NAME
  value: {{ .Values.worker.deployment.name | toString | quote }}
{{ include "card-issuing.codecKeyEnv" . }}
{{- end -}}
