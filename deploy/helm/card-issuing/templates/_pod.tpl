{{/* What every pod spec shares: (dict "root" $ "values" .Values.worker "component" "worker").
     No ServiceAccount token: no process calls the Kubernetes API, so a stolen pod holds no API credential. */}}
{{- define "card-issuing.podSpecCommon" -}}
serviceAccountName: {{ include "card-issuing.serviceAccountName" .root }}
automountServiceAccountToken: false
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
{{- include "card-issuing.topologySpread" . }}
terminationGracePeriodSeconds: {{ .values.terminationGracePeriodSeconds }}
{{- end -}}

{{/* Replicas spread over nodes and zones, so one node's or zone's loss takes one replica, not all: the
     component's own list, else the global topologySpreadConstraints ([] there: none). Each constraint
     without a labelSelector counts the component's own pods. ScheduleAnyway: a skew never blocks scheduling. */}}
{{- define "card-issuing.topologySpread" -}}
{{- $constraints := .values.topologySpreadConstraints | default .root.Values.topologySpreadConstraints -}}
{{- if $constraints }}
{{- $selector := include "card-issuing.selector" (dict "root" .root "component" .component) | fromYaml }}
{{- $out := list }}
{{- range $constraints }}{{ $out = append $out (merge (deepCopy .) (dict "labelSelector" (dict "matchLabels" $selector))) }}{{ end }}
topologySpreadConstraints:
  {{- toYaml $out | nindent 2 }}
{{- end }}
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

{{/* Temporal's client certificate (the process's own, else the shared one: card-issuing.temporalCredential)
     and CA, mounted as whole directories (never subPath): the kubelet then swaps the files in place
     when the Secret is rotated, and the processes re-read them. (dict "root" $ "process" "worker") */}}
{{- define "card-issuing.tlsVolumeMounts" -}}
{{- $tls := include "card-issuing.temporalTls" .root | fromYaml -}}
{{- $cred := include "card-issuing.temporalCredential" . | fromYaml -}}
{{- if $cred.clientSecret }}
- { name: temporal-tls, mountPath: /etc/temporal-tls, readOnly: true }
{{- end }}
{{- if $tls.caSecret }}
- { name: temporal-ca, mountPath: /etc/temporal-ca, readOnly: true }
{{- end }}
{{- end -}}

{{- define "card-issuing.tlsVolumes" -}}
{{- $tls := include "card-issuing.temporalTls" .root | fromYaml -}}
{{- $cred := include "card-issuing.temporalCredential" . | fromYaml -}}
{{- if $cred.clientSecret }}
- name: temporal-tls
  secret:
    secretName: {{ $cred.clientSecret }}
{{- end }}
{{- if $tls.caSecret }}
- name: temporal-ca
  secret:
    secretName: {{ $tls.caSecret }}
{{- end }}
{{- end -}}
