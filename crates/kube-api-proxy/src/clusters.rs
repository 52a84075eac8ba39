//! The clusters behind the gateway, by id: a fixed set (mock mode's embedded cluster, a
//! sandbox's kubeconfig), or the Shoots of a Gardener (real mode), each reached through its
//! admin kubeconfig.

use std::collections::HashMap;
use std::sync::Arc;

use fundament_health::DependencyHealth;
use fundament_kube_core::Status;
use fundament_kube_core::cluster_info::ClusterInfo;

use crate::garden::Garden;
use crate::upstream::{Upstream, UpstreamError};

/// Why a cluster id does not lead to a cluster.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("cluster {0} is not reachable from kube-api-proxy")]
    Unknown(String),
    #[error("cluster {0} not found: no Shoot is labelled fundament.io/cluster-id={0}")]
    NoShoot(String),
    #[error("found {count} shoots labelled with cluster {id}, expected exactly one")]
    AmbiguousShoot { id: String, count: usize },
    #[error("the garden: {0}")]
    Garden(#[from] UpstreamError),
    #[error("the admin kubeconfig of shoot {shoot}: {detail}")]
    AdminKubeconfig { shoot: String, detail: String },
}

impl ClusterError {
    /// The answer a client gets: what it can act on, never the garden's internals.
    pub fn status(&self) -> Status {
        match self {
            ClusterError::Unknown(_) => Status::service_unavailable(self.to_string()),
            ClusterError::NoShoot(id) => Status::not_found_because(format!("cluster {id} not found")),
            ClusterError::AmbiguousShoot { .. } => Status::internal(self),
            ClusterError::Garden(_) | ClusterError::AdminKubeconfig { .. } => {
                tracing::warn!(error = %self, "a cluster could not be reached through the garden");
                Status::service_unavailable("the cluster cannot be reached right now, try again shortly")
            }
        }
    }
}

pub enum Clusters {
    /// Canonical (lower-case) cluster id → its API server.
    Fixed(HashMap<String, Arc<Upstream>>),
    /// Every Shoot of the garden labelled `fundament.io/cluster-id`.
    Garden(Arc<Garden>),
}

impl Clusters {
    /// One cluster under `id`.
    pub fn one(id: &str, upstream: Upstream) -> Self {
        Clusters::Fixed(HashMap::from([(id.to_string(), Arc::new(upstream))]))
    }

    /// Whether any cluster can be reached at all: a fixed set that is not empty, or a garden
    /// (whose Shoots are found per request).
    pub fn configured(&self) -> bool {
        match self {
            Clusters::Fixed(map) => !map.is_empty(),
            Clusters::Garden(_) => true,
        }
    }

    /// What the calls so far found of each cluster, named for `/readyz?verbose`
    /// (`cluster 019b4000…0001`, and `garden` in real mode), in the order of their names. Real
    /// mode lists the shoots connected so far: the garden's others were never called.
    pub fn dependencies(&self) -> Vec<(String, Arc<DependencyHealth>)> {
        let cluster = |id: &str, up: &Upstream| {
            (format!("cluster {}", fundament_health::short_id(id)), Arc::clone(up.health()))
        };
        match self {
            Clusters::Fixed(map) => {
                let mut all: Vec<_> = map.iter().map(|(id, up)| cluster(id, up)).collect();
                all.sort_by(|a, b| a.0.cmp(&b.0));
                all
            }
            Clusters::Garden(garden) => {
                let mut shoots: Vec<_> =
                    garden.connected_all().iter().map(|(id, up)| cluster(id, up)).collect();
                shoots.sort_by(|a, b| a.0.cmp(&b.0));
                let mut all = vec![("garden".to_owned(), Arc::clone(garden.garden().health()))];
                all.extend(shoots);
                all
            }
        }
    }

    /// The cluster `id` (canonical, lower-case).
    pub async fn get(&self, id: &str) -> Result<Arc<Upstream>, ClusterError> {
        match self {
            Clusters::Fixed(map) => map.get(id).cloned().ok_or_else(|| ClusterError::Unknown(id.to_string())),
            Clusters::Garden(garden) => garden.shoot(id).await,
        }
    }

    /// What is known of cluster `id` beyond its API: its Shoot in real mode.
    pub async fn info(&self, id: &str) -> Result<ClusterInfo, ClusterError> {
        match self {
            Clusters::Fixed(map) if map.contains_key(id) => Ok(ClusterInfo::default()),
            Clusters::Fixed(_) => Err(ClusterError::Unknown(id.to_string())),
            Clusters::Garden(garden) => Ok(ClusterInfo { shoot: Some(garden.shoot_summary(id).await?) }),
        }
    }
}
