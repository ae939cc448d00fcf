{{/* Chart name, cut to the 63-character DNS label limit. */}}
{{- define "kreload.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Name of every object; the release name alone when it already contains the chart name. */}}
{{- define "kreload.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kreload.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kreload.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kreload.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- with .Values.reloader.matchLabels }}
{{ include "kreload.tplYaml" (list . $) }}
{{- end }}
{{- end -}}

{{/*
A map of labels or annotations from values, as YAML with templates expanded, as Reloader's chart
does (`team: "{{ .Release.Name }}"`). Argument: (list map root-context).
*/}}
{{- define "kreload.tplYaml" -}}
{{- tpl (toYaml (index . 0)) (index . 1) -}}
{{- end -}}

{{/* Namespace of every namespaced object: `namespace` as in Reloader's chart, else the release's. */}}
{{- define "kreload.namespace" -}}
{{- default .Release.Namespace .Values.namespace -}}
{{- end -}}

{{/*
The top-level `config` block of widely copied tutorials is an alias of the same keys under
`reloader` (the schema allows only those keys). Setting them here is idempotent, so every template
that reads one of them includes this first, in whatever order Helm renders the templates.
*/}}
{{- define "kreload.applyConfigAlias" -}}
{{- range $key, $value := .Values.config | default dict -}}
{{- $_ := set $.Values.reloader $key $value -}}
{{- end -}}
{{- end -}}

{{/*
Leader election runs with enableHA, and also when more than one replica is asked for without it:
Reloader's chart passes --enable-ha=true then (and still runs one replica, see kreload.replicas).
*/}}
{{- define "kreload.leaderElection" -}}
{{- if or (eq (toString .Values.reloader.enableHA) "true") (gt (int .Values.reloader.deployment.replicas) 1) (include "kreload.activeActive" .) -}}
true
{{- end -}}
{{- end -}}

{{/* Every replica writes its share of the namespaces (--shard-mode=active-active). */}}
{{- define "kreload.activeActive" -}}
{{- if eq (toString .Values.reloader.shardMode) "active-active" -}}
true
{{- end -}}
{{- end -}}

{{/* Replicas as in Reloader's chart: deployment.replicas with enableHA or active-active, otherwise at most 1. */}}
{{- define "kreload.replicas" -}}
{{- if or (eq (toString .Values.reloader.enableHA) "true") (include "kreload.activeActive" .) -}}
{{- int .Values.reloader.deployment.replicas -}}
{{- else -}}
{{- min (int .Values.reloader.deployment.replicas) 1 -}}
{{- end -}}
{{- end -}}

{{/*
V8 heap flag from Reloader's gomemlimitOverride (GOMEMLIMIT syntax: bytes with an optional B, KiB,
MiB, GiB or TiB suffix; "0" or empty means none): --max-old-space-size in MiB, the heap bound that
plays GOMEMLIMIT's role for Node. Then reloader.deployment.nodeOptions, which wins when it sets the
same flag because V8 takes the last one.
*/}}
{{- define "kreload.nodeOptions" -}}
{{- $d := .Values.reloader.deployment -}}
{{- $limit := trim (toString ($d.gomemlimitOverride | default "")) -}}
{{- $flags := list -}}
{{- if and $limit (ne $limit "0") -}}
{{- $number := int64 (regexReplaceAll "^([0-9]+).*$" $limit "${1}") -}}
{{- $unit := regexReplaceAll "^[0-9]+" $limit "" -}}
{{- $perMiB := dict "" 1048576 "B" 1048576 "KiB" 1024 "MiB" 1 "GiB" 1 "TiB" 1 -}}
{{- $timesMiB := dict "" 1 "B" 1 "KiB" 1 "MiB" 1 "GiB" 1024 "TiB" 1048576 -}}
{{- $mib := div (mul $number (index $timesMiB $unit)) (index $perMiB $unit) -}}
{{- $flags = append $flags (printf "--max-old-space-size=%d" (max $mib 16)) -}}
{{- end -}}
{{- with $d.nodeOptions -}}
{{- $flags = append $flags . -}}
{{- end -}}
{{- join " " $flags -}}
{{- end -}}

{{- define "kreload.labels" -}}
helm.sh/chart: {{ include "kreload.chart" . }}
{{ include "kreload.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "kreload.serviceAccountName" -}}
{{- if .Values.reloader.serviceAccount.create -}}
{{- default (include "kreload.fullname" .) .Values.reloader.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.reloader.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
The image reference. Top-level `image` is Reloader's layout since its chart 1.3.1; the older
reloader.deployment.image.{name,tag,digest,pullPolicy} still wins field by field when set, with
`name` there being the whole repository. global.imageRegistry prefixes image.name, as in Reloader.
*/}}
{{- define "kreload.imageFields" -}}
{{- $image := .Values.image | default dict -}}
{{- $legacy := .Values.reloader.deployment.image | default dict -}}
{{- $repository := $image.repository -}}
{{- $source := "image.repository" -}}
{{- if .Values.global.imageRegistry -}}
{{- $repository = printf "%s/%s" (trimSuffix "/" .Values.global.imageRegistry) $image.name -}}
{{- $source = "image.name" -}}
{{- end -}}
{{- if $legacy.name -}}
{{- $repository = $legacy.name -}}
{{- $source = "reloader.deployment.image.name" -}}
{{- end -}}
{{- $tag := $legacy.tag | default $image.tag | default .Chart.AppVersion -}}
{{- $digest := $legacy.digest | default $image.digest -}}
{{- $ref := ternary (printf "%s@%s" $repository $digest) (printf "%s:%s" $repository (toString $tag)) (not (empty $digest)) -}}
{{- $fields := dict "ref" $ref "pullPolicy" ($legacy.pullPolicy | default $image.pullPolicy) -}}
{{- /*
A values file copied from Reloader names Reloader's image, which cannot run kreload's flags. It is
replaced by kreload's own image (this chart's defaults: kreload, or <imageRegistry>/kreload, at the
appVersion), and NOTES.txt and a comment in the Deployment say which value to change.
*/ -}}
{{- if regexMatch "(^|/)stakater/reloader(-[a-z0-9]+)?$" $repository -}}
{{- $kreload := "kreload" -}}
{{- if .Values.global.imageRegistry -}}
{{- $kreload = printf "%s/kreload" (trimSuffix "/" .Values.global.imageRegistry) -}}
{{- end -}}
{{- $_ := set $fields "ref" (printf "%s:%s" $kreload .Chart.AppVersion) -}}
{{- $_ := set $fields "replaced" $ref -}}
{{- $_ := set $fields "source" $source -}}
{{- end -}}
{{- $fields | toJson -}}
{{- end -}}

{{/* The sentence that says a Reloader image was replaced, for NOTES.txt and the Deployment. */}}
{{- define "kreload.imageReplacedNote" -}}
{{- $image := include "kreload.imageFields" . | fromJson -}}
{{- with $image.replaced -}}
{{ $image.source }} names Stakater Reloader's image {{ . }}, which cannot run kreload's flags: {{ $image.ref }} runs instead. Set {{ $image.source }} (and its tag) to your kreload image.
{{- end -}}
{{- end -}}

{{/*
Scoping values that only apply in global mode and are set in another mode: dropped, as Reloader
drops them; NOTES.txt and a comment in the Deployment say so.
*/}}
{{- define "kreload.droppedScopingNote" -}}
{{- $mode := include "kreload.mode" . -}}
{{- if ne $mode "global" -}}
{{- $dropped := list -}}
{{- range $value := list "ignoreNamespaces" "namespaceSelector" -}}
{{- if include "kreload.joinList" (index $.Values.reloader $value) -}}
{{- $dropped = append $dropped (printf "reloader.%s" $value) -}}
{{- end -}}
{{- end -}}
{{- with $dropped -}}
{{ join " and " . }}: honoured only when watching all namespaces, so ignored in {{ ternary "scoped mode (reloader.namespaces)" "single-namespace mode (reloader.watchGlobally=false)" (eq $mode "scoped") }}, as in Reloader.
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kreload.image" -}}
{{- (include "kreload.imageFields" . | fromJson).ref -}}
{{- end -}}

{{/*
Trimmed, non-empty elements of a list or of one string, joined with commas. Strings are not split:
a selector such as `k in (a,b)` carries its own commas.
*/}}
{{- define "kreload.joinList" -}}
{{- $items := . | default list -}}
{{- if kindIs "string" . -}}
{{- $items = list . -}}
{{- end -}}
{{- $clean := list -}}
{{- range $items -}}
{{- $item := trim (toString .) -}}
{{- if $item -}}
{{- $clean = append $clean $item -}}
{{- end -}}
{{- end -}}
{{- join "," $clean -}}
{{- end -}}

{{/* reloader.namespaces (list or comma-separated string) as a sorted, de-duplicated JSON array. */}}
{{- define "kreload.scopedNamespaces" -}}
{{- $raw := .Values.reloader.namespaces -}}
{{- $items := list -}}
{{- if kindIs "string" $raw -}}
{{- $items = splitList "," $raw -}}
{{- else if $raw -}}
{{- $items = $raw -}}
{{- end -}}
{{- $clean := list -}}
{{- range $items -}}
{{- $item := trim (toString .) -}}
{{- if $item -}}
{{- $clean = append $clean $item -}}
{{- end -}}
{{- end -}}
{{- $clean | uniq | sortAlpha | toJson -}}
{{- end -}}

{{/*
Scoping mode, with the controller's precedence (spec §11): `scoped` when reloader.namespaces is
non-empty, `namespace` when watchGlobally is false (KUBERNETES_NAMESPACE = release namespace),
otherwise `global`.
*/}}
{{- define "kreload.mode" -}}
{{- if fromJsonArray (include "kreload.scopedNamespaces" .) -}}
scoped
{{- else if eq (toString .Values.reloader.watchGlobally) "false" -}}
namespace
{{- else -}}
global
{{- end -}}
{{- end -}}

{{/* Namespaces that get a Role with the watch rules (empty in global mode) as a JSON array. */}}
{{- define "kreload.watchedNamespaces" -}}
{{- $mode := include "kreload.mode" . -}}
{{- if eq $mode "scoped" -}}
{{- include "kreload.scopedNamespaces" . -}}
{{- else if eq $mode "namespace" -}}
{{- list (include "kreload.namespace" .) | toJson -}}
{{- else -}}
{{- list | toJson -}}
{{- end -}}
{{- end -}}

{{- define "kreload.leaseNamespace" -}}
{{- default (include "kreload.namespace" .) .Values.reloader.leaderElection.namespace -}}
{{- end -}}

{{/*
One row per controller flag that a value sets. `value` is the path under `reloader.`; `type` says
how the value becomes the flag:
  bool      --flag=true when the value is true, nothing otherwise
  scalar    --flag=<value> when the value is non-empty and differs from `omit`
  list      --flag=<a,b> from a list or a comma-separated string, when non-empty
  set       --flag=<items> naming every member whose bool value is true
  scoped    --flag=<namespaces> from reloader.namespaces (sorted, de-duplicated)
  json      --flag=<the value as JSON> when the value is non-empty
`include` instead of `value` takes the value from that template (a derived setting).
`when` restricts the row to the global scoping mode, to leader election or to enablePProf.
*/}}
{{- define "kreload.flagTable" -}}
- { value: autoReloadAll, flag: auto-reload-all, type: bool }
- { value: reloadStrategy, flag: reload-strategy, type: scalar, omit: default }
- { value: reloadOnCreate, flag: reload-on-create, type: bool }
- { value: reloadOnDelete, flag: reload-on-delete, type: bool }
- { value: syncAfterRestart, flag: sync-after-restart, type: bool }
- { value: isArgoRollouts, flag: is-Argo-Rollouts, type: bool }
- { value: isOpenshift, flag: is-openshift, type: scalar, omit: true }
- { value: customWorkloadKinds, flag: custom-workload-kinds, type: json }
- { value: enableCSIIntegration, flag: enable-csi-integration, type: bool }
- { value: enableReloadPolicies, flag: enable-reload-policies, type: bool }
- { flag: resources-to-ignore, type: set, members: [[ignoreConfigMaps, configmaps], [ignoreSecrets, secrets]] }
- { flag: ignored-workload-types, type: set, members: [[ignoreJobs, jobs], [ignoreCronJobs, cronjobs]] }
- { value: includeHelmSecrets, flag: include-helm-secrets, type: bool }
- { value: webhookUrl, flag: webhook-url, type: scalar }
- { value: enableConfigRevisions, flag: enable-config-revisions, type: bool }
- { value: dryRun, flag: dry-run, type: bool }
- { value: namespaces, flag: namespaces, type: scoped }
- { value: ignoreNamespaces, flag: namespaces-to-ignore, type: list, when: global }
- { value: namespaceSelector, flag: namespace-selector, type: list, when: global }
- { value: resourceLabelSelector, flag: resource-label-selector, type: list }
- { value: syncDelay, flag: sync-delay, type: scalar }
- { value: syncMaxDelay, flag: sync-max-delay, type: scalar }
- { value: workerThreads, flag: worker-threads, type: scalar }
- { value: resyncPeriod, flag: resync-period, type: scalar }
- { value: baselineStore, flag: baseline-store, type: scalar, omit: namespace }
- { value: enableRestartWindows, flag: enable-restart-windows, type: bool }
- { value: flapMaxChanges, flag: flap-max-changes, type: scalar, omit: 0 }
- { value: flapPeriod, flag: flap-period, type: scalar, omit: 5m }
- { value: flapCoolDown, flag: flap-cool-down, type: scalar, omit: 2m }
- { value: maxConcurrentRollouts, flag: max-concurrent-rollouts, type: scalar, omit: 0 }
- { value: maxConcurrentRolloutsPerNamespace, flag: max-concurrent-rollouts-per-namespace, type: scalar, omit: 0 }
- { value: rolloutWaves, flag: rollout-waves, type: bool }
- { value: canary, flag: canary, type: scalar, omit: 1 }
- { value: rolloutDeadline, flag: rollout-deadline, type: scalar }
- { value: haltOnFailedRollout, flag: halt-on-failed-rollout, type: scalar, omit: true }
- { value: undoFailedRollouts, flag: undo-failed-rollouts, type: bool }
- { include: kreload.leaderElection, flag: enable-ha, type: bool }
- { value: leaderElection.namespace, flag: leader-election-namespace, type: scalar, when: ha }
- { value: leaderElection.id, flag: leader-election-id, type: scalar, when: ha }
- { value: leaderElection.leaseDuration, flag: leader-election-lease-duration, type: scalar, when: ha }
- { value: leaderElection.renewDeadline, flag: leader-election-renew-deadline, type: scalar, when: ha }
- { value: leaderElection.retryPeriod, flag: leader-election-retry-period, type: scalar, when: ha }
- { value: leaderElection.releaseOnCancel, flag: leader-election-release-on-cancel, type: scalar, omit: true, when: ha }
- { value: shardMode, flag: shard-mode, type: scalar, omit: leader-election }
- { value: shardBuckets, flag: shard-buckets, type: scalar, omit: 32, when: ha }
- { value: logFormat, flag: log-format, type: scalar }
- { value: logLevel, flag: log-level, type: scalar }
- { value: metricsPort, flag: metrics-port, type: scalar }
- { value: enableDebugExplain, flag: enable-debug-explain, type: bool }
- { value: enablePProf, flag: enable-pprof, type: bool }
- { value: pprofAddr, flag: pprof-addr, type: scalar, when: pprof }
- { value: custom_annotations.auto, flag: auto-annotation, type: scalar }
- { value: custom_annotations.configmap_auto, flag: configmap-auto-annotation, type: scalar }
- { value: custom_annotations.secret_auto, flag: secret-auto-annotation, type: scalar }
- { value: custom_annotations.configmap, flag: configmap-annotation, type: scalar }
- { value: custom_annotations.secret, flag: secret-annotation, type: scalar }
- { value: custom_annotations.search, flag: auto-search-annotation, type: scalar }
- { value: custom_annotations.match, flag: search-match-annotation, type: scalar }
- { value: custom_annotations.ignore, flag: ignore-annotation, type: scalar }
- { value: custom_annotations.pausePeriod, flag: pause-deployment-annotation, type: scalar }
- { value: custom_annotations.pauseTime, flag: pause-deployment-time-annotation, type: scalar }
- { value: custom_annotations.configmap_exclude, flag: configmap-exclude-annotation, type: scalar }
- { value: custom_annotations.secret_exclude, flag: secret-exclude-annotation, type: scalar }
- { value: custom_annotations.secretproviderclass, flag: secretproviderclass-annotation, type: scalar }
- { value: custom_annotations.secretproviderclass_auto, flag: secretproviderclass-auto-annotation, type: scalar }
- { value: custom_annotations.secretproviderclass_exclude, flag: secretproviderclass-exclude-annotation, type: scalar }
{{- end -}}

{{/* The container's args as a YAML list, derived from kreload.flagTable. */}}
{{- define "kreload.args" -}}
{{- $r := .Values.reloader -}}
{{- $mode := include "kreload.mode" . -}}
{{- $when := dict "always" true "global" (eq $mode "global") "ha" (eq (include "kreload.leaderElection" .) "true") "pprof" (eq (toString $r.enablePProf) "true") -}}
{{- $args := list -}}
{{- range $row := fromYamlArray (include "kreload.flagTable" .) -}}
{{- if index $when (default "always" $row.when) -}}
{{- $value := $r -}}
{{- if $row.include -}}
{{- $value = include $row.include $ -}}
{{- else -}}
{{- range splitList "." (default "" $row.value) -}}
{{- if kindIs "map" $value -}}
{{- $value = index $value . -}}
{{- else -}}
{{- $value = "" -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $text := "" -}}
{{- if eq $row.type "bool" -}}
{{- $text = ternary "true" "" (eq (toString $value) "true") -}}
{{- else if eq $row.type "scalar" -}}
{{- $text = ternary "" (toString $value) (or (kindIs "invalid" $value) (eq (toString $value) (toString $row.omit))) -}}
{{- else if eq $row.type "list" -}}
{{- $text = include "kreload.joinList" $value -}}
{{- else if eq $row.type "json" -}}
{{- $text = ternary "" (toJson $value) (empty $value) -}}
{{- else if eq $row.type "scoped" -}}
{{- $text = fromJsonArray (include "kreload.scopedNamespaces" $) | join "," -}}
{{- else if eq $row.type "set" -}}
{{- $items := list -}}
{{- range $member := $row.members -}}
{{- if eq (toString (index $r (first $member))) "true" -}}
{{- $items = append $items (last $member) -}}
{{- end -}}
{{- end -}}
{{- $text = join "," $items -}}
{{- end -}}
{{- if $text -}}
{{- $args = append $args (printf "--%s=%s" $row.flag $text) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toYaml $args -}}
{{- end -}}

{{/*
RBAC rules for the watched namespaces (spec §13.11), derived from the enabled features. Global mode
puts them in a ClusterRole; scoped and single-namespace modes in one Role per watched namespace.
*/}}
{{- define "kreload.watchRules" -}}
{{- $r := .Values.reloader -}}
{{- $read := list "get" "list" "watch" -}}
{{- $rules := list -}}
{{- $sources := list -}}
{{- if not $r.ignoreConfigMaps -}}
{{- $sources = append $sources "configmaps" -}}
{{- end -}}
{{- if not $r.ignoreSecrets -}}
{{- $sources = append $sources "secrets" -}}
{{- end -}}
{{- if $sources -}}
{{- $rules = append $rules (dict "apiGroups" (list "") "resources" $sources "verbs" $read) -}}
{{- end -}}
{{- if and (eq (include "kreload.mode" .) "global") (include "kreload.joinList" $r.namespaceSelector) -}}
{{- $rules = append $rules (dict "apiGroups" (list "") "resources" (list "namespaces") "verbs" $read) -}}
{{- end -}}
{{- /* The workload kinds' rules are generated from their table (templates/_kind-rules.tpl). */ -}}
{{- range $rule := fromYamlArray (include "kreload.kindRules" .) -}}
{{- $granted := true -}}
{{- range $value := $rule.when | default list -}}
{{- if not (index $r $value) -}}
{{- $granted = false -}}
{{- end -}}
{{- end -}}
{{- range $value := $rule.unless | default list -}}
{{- if index $r $value -}}
{{- $granted = false -}}
{{- end -}}
{{- end -}}
{{- if $granted -}}
{{- $rules = append $rules (dict "apiGroups" (list $rule.apiGroup) "resources" $rule.resources "verbs" $rule.verbs) -}}
{{- end -}}
{{- end -}}
{{- /* Configured kinds (docs/custom-kinds.md): their own resource, and pods when they may evict. */ -}}
{{- $evicts := false -}}
{{- range $kind := $r.customWorkloadKinds | default list -}}
{{- $rules = append $rules (dict "apiGroups" (list $kind.group) "resources" (list $kind.resource) "verbs" (list "get" "list" "watch" "patch")) -}}
{{- if and $kind.podSelectorPath (or (not $kind.strategies) (has "evict" $kind.strategies)) -}}
{{- $evicts = true -}}
{{- end -}}
{{- end -}}
{{- if $evicts -}}
{{- $rules = append $rules (dict "apiGroups" (list "") "resources" (list "pods") "verbs" (list "get" "list")) -}}
{{- $rules = append $rules (dict "apiGroups" (list "") "resources" (list "pods/eviction") "verbs" (list "create")) -}}
{{- end -}}
{{- if $r.enableCSIIntegration -}}
{{- $rules = append $rules (dict "apiGroups" (list "secrets-store.csi.x-k8s.io") "resources" (list "secretproviderclasspodstatuses" "secretproviderclasses") "verbs" $read) -}}
{{- end -}}
{{- if $r.enableReloadPolicies -}}
{{- /* ReloadPolicies (docs/reload-policy.md): read them, write only their status. */ -}}
{{- $rules = append $rules (dict "apiGroups" (list "kreload.io") "resources" (list "reloadpolicies") "verbs" $read) -}}
{{- $rules = append $rules (dict "apiGroups" (list "kreload.io") "resources" (list "reloadpolicies/status") "verbs" (list "get" "patch" "update")) -}}
{{- end -}}
{{- if $r.enableConfigRevisions -}}
{{- /* Snapshots: create them, move their ownerReferences to revisions, sweep orphans (docs/adr/0036). */ -}}
{{- $rules = append $rules (dict "apiGroups" (list "") "resources" $sources "verbs" (list "create" "patch" "delete")) -}}
{{- $rules = append $rules (dict "apiGroups" (list "apps") "resources" (list "replicasets" "controllerrevisions") "verbs" (list "list")) -}}
{{- end -}}
{{- $rules = append $rules (dict "apiGroups" (list "") "resources" (list "events") "verbs" (list "create" "patch")) -}}
{{- toYaml $rules -}}
{{- end -}}

{{/* Configuration mistakes the schema cannot express; they would make kreload exit 2 at start. */}}
{{- define "kreload.validate" -}}
{{- $r := .Values.reloader -}}
{{- if and $r.ignoreSecrets $r.ignoreConfigMaps -}}
{{- fail "reloader.ignoreSecrets and reloader.ignoreConfigMaps cannot both be true: nothing would be watched" -}}
{{- end -}}
{{- if and $r.dryRun $r.webhookUrl -}}
{{- fail "reloader.dryRun cannot be combined with reloader.webhookUrl" -}}
{{- end -}}
{{- end -}}

{{/* Pull secrets from global.imagePullSecrets and reloader.deployment.imagePullSecrets. */}}
{{- define "kreload.imagePullSecrets" -}}
{{- $secrets := list -}}
{{- range concat (.Values.global.imagePullSecrets | default list) (.Values.reloader.deployment.imagePullSecrets | default list) -}}
{{- if kindIs "string" . -}}
{{- $secrets = append $secrets (dict "name" .) -}}
{{- else -}}
{{- $secrets = append $secrets . -}}
{{- end -}}
{{- end -}}
{{- if $secrets -}}
{{- toYaml $secrets -}}
{{- end -}}
{{- end -}}

{{/*
"true" when the ServiceMonitor or PodMonitor (argument: (list root "serviceMonitor"|"podMonitor"))
is enabled and the cluster serves the Prometheus Operator's API. As in Reloader's chart, an install
into a cluster without the CRDs skips the monitor (NOTES.txt says so) instead of failing.
*/}}
{{- define "kreload.monitorRendered" -}}
{{- $root := index . 0 -}}
{{- $monitor := index $root.Values.reloader (index . 1) | default dict -}}
{{- if and $monitor.enabled ($root.Capabilities.APIVersions.Has "monitoring.coreos.com/v1") -}}
true
{{- end -}}
{{- end -}}
