//! Real mode: each cluster is a Gardener Shoot labelled `fundament.io/cluster-id=<id>`,
//! reached with an admin kubeconfig the garden issues for it (`adminkubeconfig`
//! subresource). A shoot's connection is built once and rebuilt at 70 % of its kubeconfig's
//! lifetime; concurrent first requests share one build; in between, a request costs no
//! round trip to the garden. The shoot's [`Upstream`] is kept across rebuilds, so the
//! ServiceAccount tokens it cached (per user) survive a new kubeconfig.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use fundament_kube_core::ObjectMeta;
use fundament_kube_core::cluster_info::{Condition, LastOperation, ShootSummary};
use http::Method;
use kube::config::Kubeconfig;
use serde::{Deserialize, Serialize};

use crate::cache::Cache;
use crate::clusters::ClusterError;
use crate::upstream::{ServerVerification, Upstream, kube_config_of};

/// The label that ties a Shoot to a Fundament cluster id.
pub const CLUSTER_ID_LABEL: &str = "fundament.io/cluster-id";

/// How long an admin kubeconfig is asked to live (Gardener's minimum is 600 s).
pub const ADMIN_KUBECONFIG_SECONDS: i64 = 3600;

/// The share of an admin kubeconfig's lifetime after which it is replaced.
const REBUILD_AT: f64 = 0.7;

pub struct Garden {
    /// The garden's API server, as the gateway (its kubeconfig's identity).
    garden: Upstream,
    verification: ServerVerification,
    expiration_seconds: i64,
    /// Cluster id → the shoot's connection, fresh until 70 % of its kubeconfig's lifetime.
    shoots: Cache<String, Arc<Upstream>>,
    /// Cluster id → its Shoot's status, for the console's cluster list.
    summaries: Cache<String, ShootSummary>,
    /// Every shoot connected so far: rebuilt in place, never replaced.
    connected: Mutex<HashMap<String, Arc<Upstream>>>,
    /// The garden namespaces whose Shoots may be clusters; empty: any the garden's kubeconfig
    /// can list.
    namespaces: Vec<String>,
}

#[derive(Deserialize)]
struct ShootList {
    #[serde(default)]
    items: Vec<Shoot>,
}

/// What the gateway reads of a Shoot.
#[derive(Deserialize)]
struct Shoot {
    metadata: ObjectMeta,
    #[serde(default)]
    status: ShootStatus,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ShootStatus {
    #[serde(default)]
    last_operation: Option<LastOperation>,
    #[serde(default)]
    conditions: Vec<Condition>,
}

/// The label Gardener keeps a Shoot's health in.
const STATUS_LABEL: &str = "shoot.gardener.cloud/status";

/// How long a Shoot's status is shown as read (the cluster list asks on every load).
const SUMMARY_FRESH: Duration = Duration::from_secs(10);

/// `authentication.gardener.cloud/v1alpha1` `AdminKubeconfigRequest`.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AdminKubeconfigRequest {
    api_version: String,
    kind: String,
    spec: AdminKubeconfigSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<AdminKubeconfigStatus>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AdminKubeconfigSpec {
    expiration_seconds: i64,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AdminKubeconfigStatus {
    /// Base64 of a kubeconfig YAML.
    kubeconfig: String,
    /// RFC 3339.
    expiration_timestamp: String,
}

impl Garden {
    /// `garden` reaches the garden's API server; the shoots' kubeconfigs are checked with
    /// `verification` as the garden's own was.
    pub fn new(garden: Upstream, verification: ServerVerification) -> Self {
        Self {
            garden,
            verification,
            expiration_seconds: ADMIN_KUBECONFIG_SECONDS,
            shoots: Cache::new(10_000),
            summaries: Cache::new(10_000),
            connected: Mutex::default(),
            namespaces: Vec::new(),
        }
    }

    /// Finds a cluster's Shoot in `namespaces` only (none: in any namespace). Whoever may
    /// create or label a Shoot where the gateway looks can claim a cluster id: a lone impostor
    /// (the real Shoot gone, or not made yet) would receive the cluster's calls.
    pub fn in_namespaces(mut self, namespaces: Vec<String>) -> Self {
        self.namespaces = namespaces;
        self
    }

    /// Asks for admin kubeconfigs that live `seconds` (the garden may grant less or refuse
    /// less than its minimum): a test or a deployment with its own policy; otherwise
    /// [`ADMIN_KUBECONFIG_SECONDS`].
    pub fn with_expiration_seconds(mut self, seconds: i64) -> Self {
        self.expiration_seconds = seconds;
        self
    }

    /// The garden's own connection (round trips to it are counted there).
    pub fn garden(&self) -> &Upstream {
        &self.garden
    }

    /// The shoot of cluster `id` if it was connected before, without asking the garden
    /// whether its kubeconfig is still current (its own calls are counted there).
    pub fn connected(&self, id: &str) -> Option<Arc<Upstream>> {
        self.connected.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(id).cloned()
    }

    /// Every shoot connected so far, by cluster id.
    pub fn connected_all(&self) -> Vec<(String, Arc<Upstream>)> {
        let connected = self.connected.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        connected.iter().map(|(id, up)| (id.clone(), Arc::clone(up))).collect()
    }

    /// The shoot of cluster `id`, connected with a current admin kubeconfig.
    pub async fn shoot(&self, id: &str) -> Result<Arc<Upstream>, ClusterError> {
        self.shoots.get(id.to_string(), || self.connect(id)).await
    }

    /// The Shoot labelled with `id`, as (namespace, name).
    async fn find_shoot(&self, id: &str) -> Result<(String, String), ClusterError> {
        let shoot = self.the_shoot(id).await?;
        Ok((shoot.metadata.namespace, shoot.metadata.name))
    }

    /// The Shoot of cluster `id` as its status tells it, read at most every 10 s.
    pub async fn shoot_summary(&self, id: &str) -> Result<ShootSummary, ClusterError> {
        self.summaries
            .get(id.to_string(), || async {
                let Shoot { metadata, status } = self.the_shoot(id).await?;
                let health = metadata.labels.get(STATUS_LABEL).cloned().unwrap_or_default();
                let summary = ShootSummary {
                    namespace: metadata.namespace,
                    name: metadata.name,
                    health,
                    last_operation: status.last_operation,
                    conditions: status.conditions,
                };
                Ok((summary, SUMMARY_FRESH))
            })
            .await
    }

    /// The one Shoot labelled with `id`, in the namespaces the gateway looks in.
    async fn the_shoot(&self, id: &str) -> Result<Shoot, ClusterError> {
        let selector = format!("shoots?labelSelector={CLUSTER_ID_LABEL}%3D{id}");
        let paths: Vec<String> = if self.namespaces.is_empty() {
            vec![format!("/apis/core.gardener.cloud/v1beta1/{selector}")]
        } else {
            self.namespaces
                .iter()
                .map(|ns| format!("/apis/core.gardener.cloud/v1beta1/namespaces/{ns}/{selector}"))
                .collect()
        };
        let mut found = Vec::new();
        for path in &paths {
            let list: Option<ShootList> = self.garden.call(Method::GET, path, None).await?;
            found.extend(list.map(|l| l.items).unwrap_or_default());
        }
        let count = found.len();
        let mut items = found.into_iter();
        match (items.next(), count) {
            (None, _) => Err(ClusterError::NoShoot(id.to_string())),
            (Some(shoot), 1) => Ok(shoot),
            (Some(_), count) => Err(ClusterError::AmbiguousShoot { id: id.to_string(), count }),
        }
    }

    async fn connect(&self, id: &str) -> Result<(Arc<Upstream>, Duration), ClusterError> {
        let (namespace, name) = self.find_shoot(id).await?;
        let shoot = format!("{namespace}/{name}");
        let failed = |detail: String| ClusterError::AdminKubeconfig { shoot: shoot.clone(), detail };
        let request = AdminKubeconfigRequest {
            api_version: "authentication.gardener.cloud/v1alpha1".into(),
            kind: "AdminKubeconfigRequest".into(),
            spec: AdminKubeconfigSpec { expiration_seconds: self.expiration_seconds },
            status: None,
        };
        let path =
            format!("/apis/core.gardener.cloud/v1beta1/namespaces/{namespace}/shoots/{name}/adminkubeconfig");
        let body = serde_json::to_value(&request).map_err(|e| failed(e.to_string()))?;
        let answer: AdminKubeconfigRequest = self
            .garden
            .call(Method::POST, &path, Some(body))
            .await?
            .ok_or_else(|| failed("the garden has no adminkubeconfig subresource for it".into()))?;
        let status = answer.status.ok_or_else(|| failed("the answer has no status".into()))?;
        let yaml = base64::engine::general_purpose::STANDARD
            .decode(status.kubeconfig.trim())
            .map_err(|e| failed(format!("status.kubeconfig is not base64: {e}")))?;
        let yaml = String::from_utf8(yaml).map_err(|e| failed(e.to_string()))?;
        let kubeconfig = Kubeconfig::from_yaml(&yaml).map_err(|e| failed(e.to_string()))?;
        let config = kube_config_of(kubeconfig).await.map_err(failed)?;
        let expires = time::OffsetDateTime::parse(
            &status.expiration_timestamp,
            &time::format_description::well_known::Rfc3339,
        )
        .map_err(|e| failed(format!("status.expirationTimestamp: {e}")))?;
        let lifetime = expires - time::OffsetDateTime::now_utc();
        let lifetime = Duration::try_from(lifetime)
            .ok()
            .filter(|l| !l.is_zero())
            .ok_or_else(|| failed(format!("it expired already ({})", status.expiration_timestamp)))?;
        let upstream = {
            let mut connected = self.connected.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match connected.get(id) {
                Some(existing) => {
                    existing.reconnect(config, self.verification)?;
                    Arc::clone(existing)
                }
                None => {
                    let fresh = Arc::new(Upstream::from_kube_config(config, self.verification)?);
                    connected.insert(id.to_string(), Arc::clone(&fresh));
                    fresh
                }
            }
        };
        tracing::info!(cluster_id = %id, %shoot, expires = %status.expiration_timestamp, "shoot connected with a new admin kubeconfig");
        Ok((upstream, lifetime.mul_f64(REBUILD_AT)))
    }
}
