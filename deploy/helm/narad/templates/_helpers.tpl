{{/*
Names. The full name is cut to 52 characters: a StatefulSet's pods carry a
controller-revision-hash label made of its name plus 11 characters, and
"<fullname>-headless" must stay a valid 63-character DNS label.
*/}}
{{- define "narad.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 52 | trimSuffix "-" -}}
{{- end -}}

{{- define "narad.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The headless Service that gives every pod its stable DNS name. */}}
{{- define "narad.headlessName" -}}
{{- printf "%s-headless" (include "narad.fullname" .) -}}
{{- end -}}

{{- define "narad.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "narad.selectorLabels" -}}
app.kubernetes.io/name: {{ include "narad.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "narad.labels" -}}
helm.sh/chart: {{ include "narad.chart" . }}
{{ include "narad.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: broker
{{- end -}}

{{- define "narad.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* The Secret holding the cluster secret and the admin password. */}}
{{- define "narad.secretName" -}}
{{- .Values.security.existingSecret | default (include "narad.fullname" .) -}}
{{- end -}}

{{/*
The pod's stable DNS name: <pod>.<headless>.<namespace>.svc.<domain>.
Call with (list $ ordinal).
*/}}
{{- define "narad.podHost" -}}
{{- $root := index . 0 -}}
{{- printf "%s-%d.%s.%s.svc.%s" (include "narad.fullname" $root) (index . 1) (include "narad.headlessName" $root) $root.Release.Namespace $root.Values.clusterDomain -}}
{{- end -}}

{{/*
NARAD_CLUSTER_PEERS: every pod of the StatefulSet as id@host:raftport, the
id being the pod name (the node's NARAD_NODE_ID).
*/}}
{{- define "narad.peers" -}}
{{- $peers := list -}}
{{- range $i := until (int .Values.replicas) -}}
{{- $peers = append $peers (printf "%s-%d@%s:%d" (include "narad.fullname" $) $i (include "narad.podHost" (list $ $i)) (int $.Values.ports.raft)) -}}
{{- end -}}
{{- join "," $peers -}}
{{- end -}}

{{/* NARAD_CLUSTER_INITIAL_MEMBERS: the first initialClusterSize pod names. */}}
{{- define "narad.initialMembers" -}}
{{- $ids := list -}}
{{- range $i := until (min (int .Values.initialClusterSize) (int .Values.replicas) | int) -}}
{{- $ids = append $ids (printf "%s-%d" (include "narad.fullname" $) $i) -}}
{{- end -}}
{{- join "," $ids -}}
{{- end -}}

{{/*
Checks no schema can express, each failing the render with the fix.
*/}}
{{- define "narad.validate" -}}
{{- if eq (int .Values.replicas) 2 -}}
{{- fail "replicas: 2 is not a valid Narad cluster (a cluster needs at least 3 peers); use 1 for a single node or 3 or more" -}}
{{- end -}}
{{- if and .Values.security.enabled (not .Values.security.existingSecret) -}}
{{- if not .Values.security.clusterSecret -}}
{{- fail "security.clusterSecret is required (or name a Secret in security.existingSecret): the chart does not generate one, see values.yaml. E.g. --set security.clusterSecret=$(openssl rand -hex 32)" -}}
{{- end -}}
{{- if not .Values.security.adminPassword -}}
{{- fail "security.adminPassword is required (or name a Secret in security.existingSecret): it is the root user admin's password. E.g. --set security.adminPassword=$(openssl rand -base64 24)" -}}
{{- end -}}
{{- end -}}
{{- if and (ge (int .Values.replicas) 3) .Values.security.enabled (not .Values.security.allowPlaintextRaft) (not .Values.security.raftTLS.existingSecret) -}}
{{- fail "a secured Narad cluster needs Raft TLS: set security.raftTLS.existingSecret, or security.allowPlaintextRaft=true on a network you trust" -}}
{{- end -}}
{{- if and .Values.serviceMonitor.enabled .Values.security.enabled (not .Values.metrics.unauthenticated) (not .Values.serviceMonitor.basicAuth.secretName) -}}
{{- fail "serviceMonitor.basicAuth.secretName is required while security is on: /metrics needs a Narad user (or set metrics.unauthenticated=true)" -}}
{{- end -}}
{{- end -}}
