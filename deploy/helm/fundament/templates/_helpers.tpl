{{/* Names, labels and the pieces every Deployment shares. */}}

{{- define "fundament.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "fundament.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels of one component: (dict "root" $ "component" "authn"). */}}
{{- define "fundament.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/*
The services, each with its subcommand and port. In mock mode one pod (`fundament dev`, the
component "stack") serves all of them; the Services keep their names, so URLs and routes are the
same in every mode.
*/}}
{{- define "fundament.services" -}}
- {name: console, key: console, command: console, port: 3000, portName: console}
- {name: authn, key: authn, command: authn, port: 8083, portName: authn}
- {name: organization-api, key: organizationApi, command: organization-api, port: 8084, portName: org-api}
- {name: kube-api-proxy, key: kubeApiProxy, command: kube-api-proxy, port: 8081, portName: kube-api-proxy}
- {name: plugin-proxy, key: pluginProxy, command: plugin-proxy, port: 8082, portName: plugin-proxy}
{{- end -}}

{{/* The Deployments: one per service, or mock mode's one stack. */}}
{{- define "fundament.components" -}}
{{- if eq .Values.mode "mock" -}}
- {name: stack, key: stack, command: dev, port: 3000}
{{- else -}}
{{ include "fundament.services" . }}
{{- end -}}
{{- end -}}

{{/* The Deployment that serves a service: (dict "root" $ "service" "authn"). */}}
{{- define "fundament.servedBy" -}}
{{- if eq .root.Values.mode "mock" -}}stack{{- else -}}{{ .service }}{{- end -}}
{{- end -}}

{{- define "fundament.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* The shared store's URL: given, or the chart's Redis. Empty: none. */}}
{{- define "fundament.sharedStoreUrl" -}}
{{- if .Values.sharedStore.url -}}
{{ .Values.sharedStore.url }}
{{- else if and .Values.redis.enabled (ne .Values.mode "mock") -}}
redis://{{ include "fundament.fullname" . }}-redis:6379
{{- end -}}
{{- end -}}

{{/* The chart's Redis's password: redis.password, else the one of the release's Secret (kept
across upgrades), else a new one. Rendered once, in secrets.yaml: the Redis and the services read
it from that Secret. */}}
{{- define "fundament.redisPassword" -}}
{{- if .Values.redis.password -}}
{{ .Values.redis.password }}
{{- else -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (printf "%s-shared-store" (include "fundament.fullname" .)) -}}
{{- if and $existing $existing.data (hasKey $existing.data "password") -}}
{{ index $existing.data "password" | b64dec }}
{{- else -}}
{{ randAlphaNum 40 }}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Whether the services use the chart's own Redis (not an external store). */}}
{{- define "fundament.chartRedis" -}}
{{- if and .Values.redis.enabled (ne .Values.mode "mock") (not .Values.sharedStore.url) (not .Values.sharedStore.existingSecret) -}}true{{- end -}}
{{- end -}}

{{- define "fundament.hasSharedStore" -}}
{{- if or .Values.sharedStore.existingSecret (include "fundament.sharedStoreUrl" .) -}}true{{- end -}}
{{- end -}}

{{/* The host of a URL value. */}}
{{- define "fundament.host" -}}
{{- (urlParse .).host | splitList ":" | first -}}
{{- end -}}

{{/* The Secret of a secret value: the operator's, or the chart's own. */}}
{{- define "fundament.secretName" -}}
{{- if .existing -}}{{ .existing }}{{- else -}}{{ include "fundament.fullname" .root }}-{{ .suffix }}{{- end -}}
{{- end -}}

{{/* API versions: what the server serves (helm template --kube-version/--api-versions). */}}
{{- define "fundament.pdbApiVersion" -}}
{{- if and (.Capabilities.APIVersions.Has "policy/v1") (semverCompare ">=1.21-0" .Capabilities.KubeVersion.Version) -}}
policy/v1
{{- else -}}
policy/v1beta1
{{- end -}}
{{- end -}}

{{- define "fundament.hpaApiVersion" -}}
{{- if and (.Capabilities.APIVersions.Has "autoscaling/v2") (semverCompare ">=1.23-0" .Capabilities.KubeVersion.Version) -}}
autoscaling/v2
{{- else -}}
autoscaling/v2beta2
{{- end -}}
{{- end -}}

{{/* Restricted (Pod Security Standards): non-root, no privilege escalation, no capabilities. */}}
{{- define "fundament.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .uid }}
runAsGroup: {{ .uid }}
fsGroup: {{ .uid }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "fundament.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Fails rendering when a mode misses what it needs, naming the value to set. */}}
{{- define "fundament.validate" -}}
{{- $mode := .Values.mode -}}
{{- if not (has $mode (list "mock" "sandbox" "real")) -}}
{{- fail (printf "mode %q: expected one of mock, sandbox, real" $mode) -}}
{{- end -}}
{{- if ne $mode "mock" -}}
{{- if not .Values.oidc.issuer -}}{{- fail (printf "mode %s signs users in through OIDC: set oidc.issuer, oidc.clientId and oidc.clientSecret (or oidc.existingSecret)" $mode) -}}{{- end -}}
{{- if not .Values.oidc.clientId -}}{{- fail "set oidc.clientId" -}}{{- end -}}
{{- if not (or .Values.oidc.clientSecret .Values.oidc.existingSecret) -}}{{- fail "set oidc.clientSecret or oidc.existingSecret" -}}{{- end -}}
{{- if not (or .Values.signingKeys.existingSecret .Values.signingKeys.keys) -}}{{- fail (printf "mode %s runs several authn replicas: set signingKeys.keys or signingKeys.existingSecret so they sign with the same keys" $mode) -}}{{- end -}}
{{- if and .Values.signingKeys.keys (not .Values.signingKeys.existingSecret) -}}
{{- range $file, $_ := .Values.signingKeys.keys -}}
{{- if not (hasSuffix ".pem" $file) -}}{{- fail (printf "signingKeys.keys: %q must be named <name>.pem" $file) -}}{{- end -}}
{{- end -}}
{{- if not (hasKey .Values.signingKeys.keys (printf "%s.pem" .Values.signingKeys.current)) -}}
{{- fail (printf "signingKeys.current %q must name one of signingKeys.keys without .pem (%s)" .Values.signingKeys.current (keys .Values.signingKeys.keys | sortAlpha | join ", ")) -}}
{{- end -}}
{{- end -}}
{{- if not (or .Values.directory.content .Values.directory.existingConfigMap) -}}{{- fail (printf "mode %s: set directory.content or directory.existingConfigMap (organizations, projects, clusters, users; the services alone have no seed)" $mode) -}}{{- end -}}
{{- if not (or .Values.frameKey.existingSecret .Values.frameKey.key) -}}{{- fail (printf "mode %s runs several plugin-proxy replicas: set frameKey.key or frameKey.existingSecret" $mode) -}}{{- end -}}
{{- end -}}
{{- if and (eq $mode "sandbox") (not (or .Values.sandbox.kubeconfig .Values.sandbox.existingSecret)) -}}
{{- fail "mode sandbox: set sandbox.kubeconfig or sandbox.existingSecret" -}}
{{- end -}}
{{- if and (eq $mode "real") (not (or .Values.real.gardenerKubeconfig .Values.real.existingSecret)) -}}
{{- fail "mode real: set real.gardenerKubeconfig or real.existingSecret" -}}
{{- end -}}
{{- range $name := list "console" "kubeApiProxy" "pluginProxy" -}}
{{- $u := urlParse (get $.Values.urls $name) -}}
{{- if not (and $u.scheme $u.host) -}}{{- fail (printf "urls.%s must be an absolute URL" $name) -}}{{- end -}}
{{- end -}}
{{- /* Installation x's pages are on x.<plugins host>: an IP address has none (any host whose last label is a number is one to browsers). */ -}}
{{- if regexMatch "^\\[|(^|\\.)([0-9]+|0[xX][0-9a-fA-F]*)\\.?(:[0-9]*)?$" (urlParse .Values.urls.pluginProxy).host -}}{{- fail (printf "urls.pluginProxy %s: a host name is required, not an IP address (installation x's pages are on x.<host>)" .Values.urls.pluginProxy) -}}{{- end -}}
{{- end -}}

{{/* Whether a component runs under a HorizontalPodAutoscaler: (dict "root" $ "component" $c). */}}
{{- define "fundament.autoscaled" -}}
{{- $c := .component -}}
{{- $v := get .root.Values $c.key -}}
{{- if and (ne $c.name "stack") $v.autoscaling $v.autoscaling.enabled -}}
{{- /* authn's replicas share revocations through the shared store: without one, no scaling. */ -}}
{{- if or (ne $c.name "authn") (include "fundament.hasSharedStore" .root) -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{/* The head of a Secret the chart makes: (dict "root" $ "suffix" "oidc"). */}}
{{- define "fundament.secretHeader" -}}
apiVersion: v1
kind: Secret
type: Opaque
metadata:
  name: {{ include "fundament.fullname" .root }}-{{ .suffix }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "fundament.labels" .root | nindent 4 }}
{{- end -}}
