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

{{/* The Temporal credential of one process, (dict "root" $ "process" "worker"): its own
     (temporal.credentials.<process>: an mTLS client certificate Secret, an API key Secret, or both),
     else, only when both of those are unset, the shared one (temporal.tls.clientSecret,
     secrets.temporalApiKey). "own" says which. Processes: worker (worker.previous too), bridge,
     rolloutJob, nexusEndpointJob, autoscaler (KEDA's scaler). */}}
{{- define "card-issuing.temporalCredential" -}}
{{- $v := .root.Values -}}
{{- $tls := include "card-issuing.temporalTls" .root | fromYaml -}}
{{- $own := get ($v.temporal.credentials | default dict) .process | default dict -}}
{{- $ownKey := $own.apiKey | default dict -}}
{{- if or $own.clientSecret $ownKey.name -}}
{{- toYaml (dict "own" true "clientSecret" ($own.clientSecret | default "") "apiKeySecret" ($ownKey.name | default "") "apiKeyKey" ($ownKey.key | default "api-key")) -}}
{{- else -}}
{{- $shared := $v.secrets.temporalApiKey | default dict -}}
{{- toYaml (dict "own" false "clientSecret" ($tls.clientSecret | default "") "apiKeySecret" ($shared.name | default "") "apiKeyKey" ($shared.key | default "api-key")) -}}
{{- end -}}
{{- end -}}

{{/* Temporal's address and one process's credential, (dict "root" $ "process" "worker"): the worker,
     the bridge and the Jobs connect; the codec endpoint never does. */}}
{{- define "card-issuing.temporalEnv" -}}
{{- $v := .root.Values -}}
{{- $tls := include "card-issuing.temporalTls" .root | fromYaml -}}
{{- $cred := include "card-issuing.temporalCredential" . | fromYaml -}}
- name: TEMPORAL_ADDRESS
  value: {{ $v.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ $v.temporal.namespace | quote }}
- name: TEMPORAL_TASK_QUEUE
  value: {{ $v.temporal.taskQueue | quote }}
{{- if or $tls.on $cred.clientSecret }}
- name: TEMPORAL_TLS
  value: "true"
{{- end }}
{{- if $cred.clientSecret }}
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
{{- if $cred.apiKeySecret }}
{{ include "card-issuing.secretEnv" (dict "name" "TEMPORAL_API_KEY" "secret" $cred.apiKeySecret "key" $cred.apiKeyKey) }}
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

{{/* The signal MAC keyring (SIGNAL_MAC_KEY, its id, the retired keys): the bridge and the workers alone.
     What they encode carries a MAC under it, and the workers take the provider's word only from a
     payload that does; a process that held it could speak for the provider. */}}
{{- define "card-issuing.signalMacEnv" -}}
{{- $s := .Values.secrets.signalMac -}}
{{ include "card-issuing.secretEnv" (dict "name" "SIGNAL_MAC_KEY" "secret" $s.name "key" $s.keyKey) }}
- name: SIGNAL_MAC_KEY_ID
  value: {{ .Values.signalMac.keyId | toString | quote }}
{{ include "card-issuing.secretEnv" (dict "name" "SIGNAL_MAC_PREVIOUS_KEYS" "secret" $s.name "key" $s.previousKeysKey "optional" true) }}
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
{{ include "card-issuing.temporalEnv" (dict "root" . "process" "nexusEndpointJob") }}
{{- end -}}

{{/* The rollout Job's: the operator CLI's, Temporal and the payload key, no provider secret, no PIN key,
     no signal MAC key; `deploy rollout` acts on no card, so no card action signing key either. */}}
{{- define "card-issuing.rolloutEnv" -}}
{{ include "card-issuing.processEnv" . }}
{{ include "card-issuing.temporalEnv" (dict "root" . "process" "rolloutJob") }}
- name: TEMPORAL_DEPLOYMENT_NAME
  value: {{ .Values.worker.deployment.name | toString | quote }}
{{ include "card-issuing.codecKeyEnv" . }}
{{- end -}}
