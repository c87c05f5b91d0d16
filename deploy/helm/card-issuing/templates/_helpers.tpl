{{- define "card-issuing.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}{{ .Release.Name | trunc 63 | trimSuffix "-" }}{{- else -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- define "card-issuing.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: card-issuing
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector of one component: (dict "root" $ "component" "worker") */}}
{{- define "card-issuing.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "card-issuing.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}

{{/* A value taken from an existing Secret: (dict "name" "PROVIDER_API_KEY" "secret" "card-issuing-provider" "key" "api-key") */}}
{{- define "card-issuing.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret }}
      key: {{ .key }}
{{- end -}}

{{/* What every process reads (CONTRACTS §2, src/config.ts): Temporal, the codec key, logs. */}}
{{- define "card-issuing.commonEnv" -}}
- name: LISTEN_HOST
  value: "0.0.0.0"
- name: TEMPORAL_ADDRESS
  value: {{ .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: TEMPORAL_TASK_QUEUE
  value: {{ .Values.temporal.taskQueue | quote }}
{{- if .Values.temporal.tls }}
- name: TEMPORAL_TLS
  value: "true"
{{- end }}
{{- if .Values.temporal.tlsSecret }}
- name: TEMPORAL_TLS_CERT_PATH
  value: /etc/temporal-tls/tls.crt
- name: TEMPORAL_TLS_KEY_PATH
  value: /etc/temporal-tls/tls.key
{{- end }}
{{- if .Values.secrets.temporalApiKey.name }}
{{ include "card-issuing.secretEnv" (dict "name" "TEMPORAL_API_KEY" "secret" .Values.secrets.temporalApiKey.name "key" .Values.secrets.temporalApiKey.key) }}
{{- end }}
{{ include "card-issuing.secretEnv" (dict "name" "PAYLOAD_CODEC_KEY" "secret" .Values.secrets.codec.name "key" .Values.secrets.codec.keyKey) }}
- name: PAYLOAD_CODEC_KEY_ID
  value: {{ .Values.codec.keyId | quote }}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- if .Values.otelEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ .Values.otelEndpoint | quote }}
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
{{ include "card-issuing.secretEnv" (dict "name" "PROVIDER_WEBHOOK_SECRET" "secret" .Values.secrets.provider.name "key" .Values.secrets.provider.webhookSecretKey) }}
{{- end -}}

{{- define "card-issuing.tlsVolumeMount" -}}
{{- if .Values.temporal.tlsSecret }}
- name: temporal-tls
  mountPath: /etc/temporal-tls
  readOnly: true
{{- end }}
{{- end -}}

{{- define "card-issuing.tlsVolume" -}}
{{- if .Values.temporal.tlsSecret }}
- name: temporal-tls
  secret:
    secretName: {{ .Values.temporal.tlsSecret }}
{{- end }}
{{- end -}}

{{/* The read-only root filesystem leaves /tmp to an emptyDir (Node and the SDK write temporary files). */}}
{{- define "card-issuing.podSpecCommon" -}}
securityContext:
  {{- toYaml .root.Values.podSecurityContext | nindent 2 }}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
terminationGracePeriodSeconds: {{ .values.terminationGracePeriodSeconds }}
{{- end -}}

{{/* Probes on the process's own port: liveness /health (the process answers), readiness /ready (Temporal answers). */}}
{{- define "card-issuing.probes" -}}
livenessProbe:
  httpGet: { path: /health, port: {{ .port }} }
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 6
startupProbe:
  httpGet: { path: /health, port: {{ .port }} }
  periodSeconds: 2
  failureThreshold: 60
readinessProbe:
  httpGet: { path: {{ .ready }}, port: {{ .port }} }
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 3
{{- end -}}

{{- define "card-issuing.pdb" -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "card-issuing.fullname" .root }}-{{ .component }}
  labels:
    {{- include "card-issuing.labels" .root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  minAvailable: {{ .pdb.minAvailable }}
  selector:
    matchLabels:
      {{- include "card-issuing.selector" (dict "root" .root "component" .component) | nindent 6 }}
{{- end -}}
