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

{{/* The pods' ServiceAccount: the chart's own, or an existing one named in serviceAccount.name. */}}
{{- define "card-issuing.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}{{ .Values.serviceAccount.name | default (include "card-issuing.fullname" .) }}{{- else -}}{{ .Values.serviceAccount.name | default "default" }}{{- end -}}
{{- end -}}

{{/* toString: `--set image.tag=1.10` arrives as the number 1.1. */}}
{{- define "card-issuing.imageTag" -}}
{{ .Values.image.tag | default .Chart.AppVersion | toString }}
{{- end -}}

{{- define "card-issuing.image" -}}
{{ .Values.image.repository }}:{{ include "card-issuing.imageTag" . }}
{{- end -}}

{{/* The workers' build ID (TEMPORAL_WORKER_BUILD_ID): worker.buildId, else the image's tag, so each new
     image is a Worker Deployment Version of its own (docs/versioning.md). */}}
{{- define "card-issuing.buildId" -}}
{{ .Values.worker.buildId | default (include "card-issuing.imageTag" .) | toString }}
{{- end -}}

{{/* A build ID as a label value (at most 63 characters of [A-Za-z0-9_.-], alphanumeric at both ends):
     a build ID may hold `+` and run to 100 characters. */}}
{{- define "card-issuing.buildLabel" -}}
{{- $v := regexReplaceAll "[^A-Za-z0-9_.-]" (toString .) "_" | trunc 63 -}}
{{- regexReplaceAll "^[^A-Za-z0-9]+|[^A-Za-z0-9]+$" $v "" -}}
{{- end -}}

{{/* A build ID as the end of an object name (lowercase, digits and `-`); one with nothing of that
     (e.g. `+_+`) is named by its hash instead. */}}
{{- define "card-issuing.buildNameSuffix" -}}
{{- $v := regexReplaceAll "[^a-z0-9]+" (lower (toString .)) "-" | trimAll "-" -}}
{{- $v | default (sha256sum (toString .) | trunc 10) -}}
{{- end -}}

{{/* A value taken from an existing Secret: (dict "name" "PROVIDER_API_KEY" "secret" "card-issuing-provider" "key" "api-key"),
     "optional" true for a key that may be absent (retired keys before the first rotation). */}}
{{- define "card-issuing.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret }}
      key: {{ .key }}
      {{- if .optional }}
      optional: true
      {{- end }}
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
