//! What kube-api-proxy tells a user about a cluster beyond its Kubernetes API
//! (`GET <kube-api-proxy>/clusters/<id>`): in real mode, the Shoot behind it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterInfo {
    /// The Gardener Shoot that is the cluster (real mode); `None` elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shoot: Option<ShootSummary>,
}

/// A Shoot as its status tells it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShootSummary {
    pub namespace: String,
    pub name: String,
    /// The `shoot.gardener.cloud/status` label: `healthy`, `progressing`, `unhealthy`, `unknown`.
    #[serde(default)]
    pub health: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_operation: Option<LastOperation>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

/// `status.lastOperation` of a Shoot.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastOperation {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub progress: i64,
}

/// One of a Shoot's `status.conditions`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Condition {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub status: String,
}

impl ShootSummary {
    /// One line for people: `healthy · Reconcile Succeeded (100 %)`.
    pub fn describe(&self) -> String {
        let health = if self.health.is_empty() { "unknown" } else { &self.health };
        match &self.last_operation {
            Some(op) => format!("{health} · {} {} ({} %)", op.kind, op.state, op.progress),
            None => health.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shoot_reads_and_describes_itself() {
        let info: ClusterInfo = serde_json::from_str(
            r#"{"shoot":{"namespace":"garden-acme-corp","name":"prod-eu","health":"healthy",
                "lastOperation":{"type":"Reconcile","state":"Succeeded","progress":100},
                "conditions":[{"type":"APIServerAvailable","status":"True"}]}}"#,
        )
        .unwrap();
        let shoot = info.shoot.unwrap();
        assert_eq!(shoot.describe(), "healthy · Reconcile Succeeded (100 %)");
        assert_eq!(shoot.conditions[0].kind, "APIServerAvailable");
        let bare: ClusterInfo = serde_json::from_str("{}").unwrap();
        assert_eq!(bare.shoot, None);
        assert_eq!(ShootSummary::default().describe(), "unknown");
    }
}
