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

{{- define "card-issuing.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
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
