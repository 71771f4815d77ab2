{{/* Labels of every object. */}}
{{- define "otelcol-progress.labels" -}}
app.kubernetes.io/name: otelcol-progress
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* The selector of one tier's pods: include with (list $ "agent"). */}}
{{- define "otelcol-progress.selector" -}}
app.kubernetes.io/name: otelcol-progress
app.kubernetes.io/instance: {{ (index . 0).Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "otelcol-progress.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* Which tiers run here. */}}
{{- define "otelcol-progress.hasGateway" -}}
{{- if has .Values.tier (list "two-tier" "gateway") }}true{{ end }}
{{- end }}
{{- define "otelcol-progress.hasAgent" -}}
{{- if has .Values.tier (list "two-tier" "agent") }}true{{ end }}
{{- end }}
{{/* The tier drivers send to: it holds the OTLP token and TLS. */}}
{{- define "otelcol-progress.front" -}}
{{- if eq .Values.tier "gateway" }}gateway{{ else }}agent{{ end }}
{{- end }}

{{/* Refusals: a release that could not work is not rendered. */}}
{{- define "otelcol-progress.validate" -}}
{{- if not (has .Values.tier (list "two-tier" "gateway" "agent")) }}
{{- fail (printf "tier %q: want two-tier, gateway or agent" .Values.tier) }}
{{- end }}
{{- if include "otelcol-progress.hasGateway" . }}
{{- if not .Values.tenants }}{{ fail "tenants: the gateways need at least one tenant" }}{{ end }}
{{- if not .Values.kafka.brokers }}{{ fail "kafka.brokers: the gateways need the Kafka brokers" }}{{ end }}
{{- range .Values.tenants }}
{{- if not (regexMatch "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$" .) }}{{ fail (printf "tenants: invalid tenant id %q (want [A-Za-z0-9][A-Za-z0-9._-]{0,63})" .) }}{{ end }}
{{- end }}
{{- if ne (len .Values.tenants) (len (uniq .Values.tenants)) }}{{ fail "tenants: duplicate tenant id" }}{{ end }}
{{- if and .Values.kafka.tls.enabled (not .Values.kafka.tls.secretName) }}{{ fail "kafka.tls.secretName: TLS to Kafka needs the Secret with the CA" }}{{ end }}
{{- end }}
{{- if and (eq .Values.tier "agent") (not .Values.agent.gatewaysDNS) }}
{{- fail "agent.gatewaysDNS: with tier agent, the DNS name of the gateways" }}
{{- end }}
{{- if and (not .Values.otlp.token.secretName) (not .Values.otlp.allowUnauthenticated) }}
{{- fail "otlp.token.secretName: the Secret with the OTLP bearer token (or otlp.allowUnauthenticated: true)" }}
{{- end }}
{{- with .Values.gatewayAuth }}
{{- if and (or .token.secretName .tls.secretName) (eq $.Values.tier "gateway") }}
{{- fail "gatewayAuth: tier gateway has no agents in front; the token the gateways require is otlp.token" }}
{{- end }}
{{- if and .token.secretName (not .tls.secretName) }}
{{- fail "gatewayAuth.tls.secretName: the agents send gatewayAuth.token over TLS only" }}
{{- end }}
{{- end }}
{{- if not (has .Values.agent.queue.type (list "emptyDir" "hostPath")) }}
{{- fail (printf "agent.queue.type %q: want emptyDir or hostPath" .Values.agent.queue.type) }}
{{- end }}
{{- end }}

{{/* The environment every collector shares. */}}
{{- define "otelcol-progress.commonEnv" -}}
- {name: PROGRESS_OTLP_GRPC_ENDPOINT, value: "0.0.0.0:4317"}
- {name: PROGRESS_OTLP_HTTP_ENDPOINT, value: "0.0.0.0:4318"}
- {name: PROGRESS_HEALTH_ENDPOINT, value: "0.0.0.0:13133"}
- {name: PROGRESS_METRICS_HOST, value: "0.0.0.0"}
- {name: PROGRESS_METRICS_PORT, value: "8888"}
- {name: PROGRESS_STORAGE_DIR, value: /var/lib/otelcol-progress}
{{- end }}

{{/* The front tier's OTLP token and TLS: env, then volumes and mounts. */}}
{{- define "otelcol-progress.otlpEnv" -}}
{{- with .Values.otlp.token.secretName }}
- name: PROGRESS_OTLP_BEARER_TOKEN
  valueFrom: {secretKeyRef: {name: {{ . }}, key: {{ $.Values.otlp.token.key }}}}
{{- end }}
{{- if .Values.otlp.tls.secretName }}
- {name: PROGRESS_OTLP_TLS_CERT_FILE, value: /etc/otelcol-progress-secrets/otlp-tls/tls.crt}
- {name: PROGRESS_OTLP_TLS_KEY_FILE, value: /etc/otelcol-progress-secrets/otlp-tls/tls.key}
{{- end }}
{{- end }}

{{/* The gateways' DNS name, as the agents resolve it and check the
gateways' certificate for. */}}
{{- define "otelcol-progress.gatewaysDNS" -}}
{{- if eq .Values.tier "two-tier" }}{{ printf "%s-gateway.%s.svc.%s" .Release.Name .Release.Namespace .Values.clusterDomain }}{{ else }}{{ .Values.agent.gatewaysDNS }}{{ end }}
{{- end }}

{{- define "otelcol-progress.probes" -}}
startupProbe:
  httpGet: {path: /, port: health}
  periodSeconds: 2
  failureThreshold: 60
readinessProbe:
  httpGet: {path: /, port: health}
  periodSeconds: 5
livenessProbe:
  httpGet: {path: /, port: health}
  periodSeconds: 10
  failureThreshold: 6
{{- end }}

{{- define "otelcol-progress.ports" -}}
- {name: otlp-grpc, containerPort: 4317, protocol: TCP}
- {name: otlp-http, containerPort: 4318, protocol: TCP}
- {name: metrics, containerPort: 8888, protocol: TCP}
- {name: health, containerPort: 13133, protocol: TCP}
{{- end }}
