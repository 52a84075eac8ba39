//! The objects a garden holds for its shoots, shaped as Gardener writes them:
//! project namespaces, projects, and Shoots of a healthy, reconciled cluster.

use serde_json::{Value, json};

use super::{CLUSTER_ID_LABEL, STATUS_LABEL, ShootConfig};
use crate::cluster::now_rfc3339;

/// The project namespace `garden-<project>`, labelled as Gardener labels it.
pub fn namespace(project: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": format!("garden-{project}"),
            "labels": {"gardener.cloud/role": "project", "project.gardener.cloud/name": project},
        },
    })
}

pub fn project(project: &str) -> Value {
    json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Project",
        "metadata": {"name": project},
        "spec": {
            "namespace": format!("garden-{project}"),
            "owner": {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": crate::authn::ADMIN_USER},
            "purpose": "Fundament development",
        },
        "status": {"phase": "Ready", "observedGeneration": 1},
    })
}

/// A machine type the provider has, for the worker pool.
fn machine_type(provider: &str) -> &'static str {
    match provider {
        "aws" => "m5.large",
        "azure" => "Standard_D2s_v3",
        "gcp" => "n1-standard-2",
        "openstack" => "g_c2_m4",
        _ => "standard-2",
    }
}

fn condition(kind: &str, reason: &str, message: &str, now: &str) -> Value {
    json!({
        "type": kind,
        "status": "True",
        "lastTransitionTime": now,
        "lastUpdateTime": now,
        "reason": reason,
        "message": message,
    })
}

/// The Shoot of `shoot`, reconciled and healthy, whose API server is at `url`.
pub fn object(shoot: &ShootConfig, url: &str) -> Value {
    let now = now_rfc3339();
    let namespace = shoot.namespace();
    let technical_id = format!("shoot--{}--{}", shoot.project, shoot.name);
    let seed = format!("{}-{}", shoot.provider, shoot.region);
    let version = crate::discovery::KUBE_VERSION.trim_start_matches('v');
    json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Shoot",
        "metadata": {
            "name": shoot.name,
            "namespace": namespace,
            "labels": {
                STATUS_LABEL: "healthy",
                CLUSTER_ID_LABEL: shoot.cluster_id.to_string(),
                "shoot.gardener.cloud/provider": shoot.provider,
            },
        },
        "spec": {
            "cloudProfile": {"kind": "CloudProfile", "name": shoot.provider},
            "cloudProfileName": shoot.provider,
            "credentialsBindingName": format!("{}-{}", shoot.project, shoot.provider),
            "hibernation": {"enabled": false},
            "kubernetes": {"version": version},
            "networking": {
                "type": "calico",
                "nodes": "10.250.0.0/16",
                "pods": "100.96.0.0/11",
                "services": "100.64.0.0/13",
            },
            "provider": {
                "type": shoot.provider,
                "workers": [{
                    "name": "worker-1",
                    "machine": {"type": machine_type(&shoot.provider), "image": {"name": "gardenlinux"}},
                    "minimum": 1,
                    "maximum": 3,
                    "zones": [format!("{}-a", shoot.region)],
                }],
            },
            "purpose": "evaluation",
            "region": shoot.region,
            "seedName": seed,
        },
        "status": {
            "advertisedAddresses": [{"name": "external", "url": url}],
            "clusterIdentity": format!("{technical_id}-{}-fundament", shoot.cluster_id),
            "conditions": [
                condition("APIServerAvailable", "HealthzRequestSucceeded",
                    "API server /healthz endpoint responded with success status code.", &now),
                condition("ControlPlaneHealthy", "ControlPlaneRunning",
                    "All control plane components are healthy.", &now),
                condition("EveryNodeReady", "EveryNodeReady",
                    "All nodes are ready.", &now),
                condition("SystemComponentsHealthy", "SystemComponentsRunning",
                    "All system components are healthy.", &now),
            ],
            "gardener": {"id": "fundament", "name": "fundament-garden", "version": env!("CARGO_PKG_VERSION")},
            "hibernated": false,
            "lastOperation": {
                "type": "Reconcile",
                "state": "Succeeded",
                "progress": 100,
                "description": "Shoot cluster has been successfully reconciled.",
                "lastUpdateTime": now,
            },
            "observedGeneration": 1,
            "seedName": seed,
            "technicalID": technical_id,
        },
    })
}
