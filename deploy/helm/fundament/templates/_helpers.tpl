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

{{/*
The chart's Redis's password: redis.password, else the one of the release's Secret (kept across
upgrades), else a new one. Resolved once per render and kept on .Values (the one map every
template of the release shares): every include of secrets.yaml (the services' checksum/secrets)
and the Redis's checksum/password must see the password the Secret holds. Drawn anew at each
call, each Deployment's checksum would be of a password stored nowhere, and the first upgrade
(which finds the stored one) would roll every pod.
*/}}
{{- define "fundament.redisPassword" -}}
{{- if not (hasKey .Values.redis "resolvedPassword") -}}
{{- $password := .Values.redis.password -}}
{{- if not $password -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (printf "%s-shared-store" (include "fundament.fullname" .)) -}}
{{- if and $existing $existing.data (hasKey $existing.data "password") -}}
{{- $password = index $existing.data "password" | b64dec -}}
{{- else -}}
{{- $password = randAlphaNum 40 -}}
{{- end -}}
{{- end -}}
{{- $_ := set .Values.redis "resolvedPassword" $password -}}
{{- end -}}
{{- .Values.redis.resolvedPassword -}}
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
{{- range $file, $pem := .Values.signingKeys.keys -}}
{{- include "fundament.validateSigningKey" (dict "file" $file "pem" $pem) -}}
{{- end -}}
{{- end -}}
{{- if not (or .Values.directory.content .Values.directory.existingConfigMap) -}}{{- fail (printf "mode %s: set directory.content or directory.existingConfigMap (organizations, projects, clusters, users; the services alone have no seed)" $mode) -}}{{- end -}}
{{- if not (or .Values.frameKey.existingSecret .Values.frameKey.key) -}}{{- fail (printf "mode %s runs several plugin-proxy replicas: set frameKey.key or frameKey.existingSecret" $mode) -}}{{- end -}}
{{- /* plugin-proxy reads the file's bytes as they are and exits at start below 32 (len counts
bytes, as the file will hold them). */ -}}
{{- if and .Values.frameKey.key (not .Values.frameKey.existingSecret) (lt (len .Values.frameKey.key) 32) -}}
{{- fail (printf "frameKey.key holds %d bytes; plugin-proxy needs at least 32 random bytes and would exit at start (e.g. --set-file frameKey.key=<(openssl rand -hex 32))" (len .Values.frameKey.key)) -}}
{{- end -}}
{{- if and .Values.directory.content (not .Values.directory.existingConfigMap) -}}
{{- $d := fromYaml .Values.directory.content -}}
{{- if hasKey $d "Error" -}}{{- fail (printf "directory.content is not YAML (the services would exit at start): %s" $d.Error) -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- if and (eq $mode "sandbox") .Values.sandbox.kubeconfig (not .Values.sandbox.existingSecret) -}}
{{- include "fundament.validateKubeconfig" (dict "value" "sandbox.kubeconfig" "text" .Values.sandbox.kubeconfig "insecure" .Values.allowInsecureKubeconfig) -}}
{{- end -}}
{{- if and (eq $mode "real") .Values.real.gardenerKubeconfig (not .Values.real.existingSecret) -}}
{{- include "fundament.validateKubeconfig" (dict "value" "real.gardenerKubeconfig" "text" .Values.real.gardenerKubeconfig "insecure" .Values.allowInsecureKubeconfig) -}}
{{- end -}}
{{- if and (eq $mode "sandbox") (not (or .Values.sandbox.kubeconfig .Values.sandbox.existingSecret)) -}}
{{- fail "mode sandbox: set sandbox.kubeconfig or sandbox.existingSecret" -}}
{{- end -}}
{{- if and (eq $mode "real") (not (or .Values.real.gardenerKubeconfig .Values.real.existingSecret)) -}}
{{- fail "mode real: set real.gardenerKubeconfig or real.existingSecret" -}}
{{- end -}}
{{- $hosts := dict -}}
{{- range $name := list "console" "kubeApiProxy" "pluginProxy" -}}
{{- $u := urlParse (get $.Values.urls $name) -}}
{{- if not (and $u.scheme $u.host) -}}{{- fail (printf "urls.%s must be an absolute URL" $name) -}}{{- end -}}
{{- /* The Ingress routes by host alone: two services on one host would be two rules for one path. */ -}}
{{- $host := include "fundament.host" (get $.Values.urls $name) -}}
{{- if hasKey $hosts $host -}}{{- fail (printf "urls.%s and urls.%s both name the host %s: each service needs a host of its own (the Ingress routes by host)" (get $hosts $host) $name $host) -}}{{- end -}}
{{- $_ := set $hosts $host $name -}}
{{- end -}}
{{- /* Installation x's pages are on x.<plugins host>: an IP address has none (any host whose last label is a number is one to browsers). */ -}}
{{- if regexMatch "^\\[|(^|\\.)([0-9]+|0[xX][0-9a-fA-F]*)\\.?(:[0-9]*)?$" (urlParse .Values.urls.pluginProxy).host -}}{{- fail (printf "urls.pluginProxy %s: a host name is required, not an IP address (installation x's pages are on x.<host>)" .Values.urls.pluginProxy) -}}{{- end -}}
{{- range $c := include "fundament.services" . | fromYamlArray -}}
{{- $a := (get $.Values $c.key).autoscaling -}}
{{- if and (ne $mode "mock") $a $a.enabled (gt (int $a.minReplicas) (int $a.maxReplicas)) -}}
{{- fail (printf "%s.autoscaling.minReplicas (%v) is above %s.autoscaling.maxReplicas (%v); the API server refuses such a HorizontalPodAutoscaler" $c.key $a.minReplicas $c.key $a.maxReplicas) -}}
{{- end -}}
{{- end -}}
{{- include "fundament.validateReplicas" . -}}
{{- include "fundament.validateExtraEnv" . -}}
{{- end -}}

{{/*
Several replicas of authn, kube-api-proxy or plugin-proxy share sign-outs, single-use frame
tickets and watch limits only through the shared store: without one each replica keeps its own,
so a sign-out at one replica would not end the session at another, a frame ticket could be used
once per replica and a user could open the watch limit once per replica. The services start
regardless, so the chart refuses. The console and organization-api keep nothing of the kind and
scale without it. A service "may run more than one" when its HPA's maxReplicas or its fixed
replicas exceed one.
*/}}
{{- define "fundament.validateReplicas" -}}
{{- if and (ne .Values.mode "mock") (not (include "fundament.hasSharedStore" .)) -}}
{{- $many := list -}}
{{- $keys := list -}}
{{- range $c := include "fundament.services" . | fromYamlArray -}}
{{- if has $c.name (list "authn" "kube-api-proxy" "plugin-proxy") -}}
{{- $v := get $.Values $c.key -}}
{{- $n := len $many -}}
{{- if and $v.autoscaling $v.autoscaling.enabled -}}
{{- if gt (int $v.autoscaling.maxReplicas) 1 -}}{{- $many = append $many (printf "%s (%s.autoscaling.maxReplicas=%v)" $c.name $c.key $v.autoscaling.maxReplicas) -}}{{- end -}}
{{- else if gt (int $v.replicas) 1 -}}{{- $many = append $many (printf "%s (%s.replicas=%v)" $c.name $c.key $v.replicas) -}}{{- end -}}
{{- if gt (len $many) $n -}}{{- $keys = append $keys $c.key -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- if $many -}}
{{- fail (printf "mode %s has no shared store (redis.enabled=false and no sharedStore.url or sharedStore.existingSecret), but may run more than one replica of %s: without a store each replica keeps its own sign-outs, single-use frame tickets and watch limits. Set redis.enabled=true (the chart's Redis), or sharedStore.url or sharedStore.existingSecret (an external Redis), or run one replica (<key>.autoscaling.enabled=false and <key>.replicas=1 for %s)" .Values.mode (join ", " $many) (join ", " $keys)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The environment variables the chart sets itself (the settings ConfigMap and the containers'
env), each with the value that sets it. extraEnv may not set them: in the ConfigMap the key
would appear twice (which one a client keeps is up to its YAML parser), and on a container its
own env silently wins over the ConfigMap.
*/}}
{{- define "fundament.chartEnv" -}}
FUNDAMENT_MODE: mode
FUNDAMENT_CONSOLE_LISTEN: the chart (the pods' ports)
FUNDAMENT_KUBE_API_PROXY_LISTEN: the chart (the pods' ports)
FUNDAMENT_PLUGIN_PROXY_LISTEN: the chart (the pods' ports)
FUNDAMENT_AUTHN_LISTEN: the chart (the pods' ports)
FUNDAMENT_ORGANIZATION_API_LISTEN: the chart (the pods' ports)
FUNDAMENT_CONSOLE_URL: urls.console
FUNDAMENT_KUBE_API_PROXY_URL: urls.kubeApiProxy
FUNDAMENT_PLUGIN_PROXY_URL: urls.pluginProxy
FUNDAMENT_KUBE_API_PROXY_INTERNAL_URL: the chart (its Services)
FUNDAMENT_AUTHN_URL: the chart (its Services)
FUNDAMENT_ORGANIZATION_API_URL: the chart (its Services)
FUNDAMENT_SITE_ROOT: the chart (the image's layout)
FUNDAMENT_PLUGINS_DIR: the chart (the image's layout)
FUNDAMENT_PLUGIN_SDK_DIR: the chart (the image's layout)
FUNDAMENT_FIXTURES_DIR: the chart (the image's layout)
FUNDAMENT_FGA_TUPLES: the chart (the image's layout)
FUNDAMENT_STATE_DIR: the chart (an emptyDir)
FUNDAMENT_ALLOW_INSECURE_KUBECONFIG: allowInsecureKubeconfig
FUNDAMENT_OPENFGA_URL: fga.openfgaUrl
FUNDAMENT_OPENFGA_STORE: fga.store
FUNDAMENT_OPENFGA_MODEL: fga.model
FUNDAMENT_OIDC_ISSUER: oidc.issuer
FUNDAMENT_OIDC_CLIENT_ID: oidc.clientId
FUNDAMENT_OIDC_CLIENT_SECRET_FILE: oidc.clientSecret or oidc.existingSecret
FUNDAMENT_OIDC_PROVIDER_NAME: oidc.providerName
FUNDAMENT_OIDC_SCOPES: oidc.scopes
FUNDAMENT_OIDC_EMAIL_CLAIM: oidc.emailClaim
FUNDAMENT_OIDC_NAME_CLAIM: oidc.nameClaim
FUNDAMENT_OIDC_GROUPS_CLAIM: oidc.groupsClaim
FUNDAMENT_DIRECTORY: directory.content or directory.existingConfigMap
FUNDAMENT_SHARED_STORE: sharedStore.url, sharedStore.existingSecret or redis.enabled
FUNDAMENT_SIGNING_KEYS_DIR: signingKeys.keys or signingKeys.existingSecret
FUNDAMENT_FRAME_KEY_FILE: frameKey.key or frameKey.existingSecret
PLUGIN_SANDBOX_KUBECONFIG: sandbox.kubeconfig or sandbox.existingSecret
GARDENER_KUBECONFIG: real.gardenerKubeconfig or real.existingSecret
FUNDAMENT_GARDEN_NAMESPACES: real.gardenNamespaces
{{- end -}}

{{- define "fundament.validateExtraEnv" -}}
{{- $chart := include "fundament.chartEnv" . | fromYaml -}}
{{- range $name := keys .Values.extraEnv | sortAlpha -}}
{{- with get $chart $name -}}
{{- fail (printf "extraEnv.%s: the chart sets %s itself, from %s; set that instead (or leave it to the chart)" $name $name .) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Whether a component runs under a HorizontalPodAutoscaler: (dict "root" $ "component" $c). */}}
{{- define "fundament.autoscaled" -}}
{{- $c := .component -}}
{{- $v := get .root.Values $c.key -}}
{{- /* Without a shared store, fundament.validate has refused any that may run several. */ -}}
{{- if and (ne $c.name "stack") $v.autoscaling $v.autoscaling.enabled -}}true{{- end -}}
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

{{/*
A signing key as authn reads it (crates/tokens keys_dir.rs): PKCS#8 PEM ("BEGIN PRIVATE KEY",
a base64 body) of an Ed25519 key (its DER names the algorithm by the OID 1.3.101.112, bytes
06 03 2b 65 70). Anything else makes authn exit at start. (dict "file" "x.pem" "pem" $text)
*/}}
{{- define "fundament.validateSigningKey" -}}
{{- $how := "an Ed25519 private key in PKCS#8 PEM (-----BEGIN PRIVATE KEY-----), as openssl genpkey -algorithm ed25519 writes it" -}}
{{- $m := regexFind "(?s)-----BEGIN PRIVATE KEY-----(.*?)-----END PRIVATE KEY-----" .pem -}}
{{- if not (and $m (regexMatch "^\\s*-----BEGIN PRIVATE KEY-----" .pem)) -}}
{{- fail (printf "signingKeys.keys %q is not %s; authn would exit at start" .file $how) -}}
{{- end -}}
{{- $body := $m | trimPrefix "-----BEGIN PRIVATE KEY-----" | trimSuffix "-----END PRIVATE KEY-----" | nospace -}}
{{- if not (and (regexMatch "^[A-Za-z0-9+/]+={0,2}$" $body) (eq (mod (len $body) 4) 0)) -}}
{{- fail (printf "signingKeys.keys %q: the PEM body is not base64, so it is not %s; authn would exit at start" .file $how) -}}
{{- end -}}
{{- if not (contains "\x06\x03\x2b\x65\x70" (b64dec $body)) -}}
{{- fail (printf "signingKeys.keys %q is a private key, but not an Ed25519 one (authn signs with Ed25519 only and would exit at start): make it with openssl genpkey -algorithm ed25519" .file) -}}
{{- end -}}
{{- end -}}

{{/*
A kubeconfig given as a value, as the services read it at start (kube-rs, its current
context): YAML, a current context that exists, no insecure-skip-tls-verify unless
allowInsecureKubeconfig, and no file the pod does not have (certificate-authority,
client-certificate, client-key, tokenFile: only the kubeconfig itself is mounted).
(dict "value" "sandbox.kubeconfig" "text" $text "insecure" $allowed)
*/}}
{{- define "fundament.validateKubeconfig" -}}
{{- $k := fromYaml .text -}}
{{- if hasKey $k "Error" -}}{{- fail (printf "%s is not YAML: %s" .value $k.Error) -}}{{- end -}}
{{- $name := get $k "current-context" -}}
{{- if not $name -}}{{- fail (printf "%s has no current-context: the services use that context's cluster and user" .value) -}}{{- end -}}
{{- $context := dict -}}
{{- range $k.contexts -}}{{- if eq (toString .name) (toString $name) -}}{{- $context = .context | default dict -}}{{- end -}}{{- end -}}
{{- if not $context -}}{{- fail (printf "%s: its current-context %q is not among its contexts" .value (toString $name)) -}}{{- end -}}
{{- $cluster := dict -}}
{{- range $k.clusters -}}{{- if eq (toString .name) (toString $context.cluster) -}}{{- $cluster = .cluster | default dict -}}{{- end -}}{{- end -}}
{{- if not $cluster -}}{{- fail (printf "%s: the cluster %q of its current context is not among its clusters" .value (toString $context.cluster)) -}}{{- end -}}
{{- $user := dict -}}
{{- range $k.users -}}{{- if eq (toString .name) (toString $context.user) -}}{{- $user = .user | default dict -}}{{- end -}}{{- end -}}
{{- if and (get $cluster "insecure-skip-tls-verify") (not .insecure) -}}
{{- fail (printf "%s: its cluster %q turns off verification of the server's certificate (insecure-skip-tls-verify), which the services refuse at start; set allowInsecureKubeconfig=true only for a throw-away cluster" .value (toString $context.cluster)) -}}
{{- end -}}
{{- range $field, $inline := dict "certificate-authority" "certificate-authority-data" -}}
{{- with get $cluster $field -}}{{- fail (printf "%s names the file %s (%s) the pods do not have: put its content inline as %s (kubectl config view --raw --flatten)" $.value . $field $inline) -}}{{- end -}}
{{- end -}}
{{- range $field, $inline := dict "client-certificate" "client-certificate-data" "client-key" "client-key-data" -}}
{{- with get $user $field -}}{{- fail (printf "%s names the file %s (%s) the pods do not have: put its content inline as %s (kubectl config view --raw --flatten)" $.value . $field $inline) -}}{{- end -}}
{{- end -}}
{{- with get $user "tokenFile" -}}{{- fail (printf "%s names the file %s (tokenFile) the pods do not have: put the token inline as token" $.value .) -}}{{- end -}}
{{- end -}}
