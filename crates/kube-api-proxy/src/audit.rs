//! One audit line per plugin-path request, refusals included: who, which
//! installation, what was asked, and what the gateway decided.

use std::sync::Mutex;

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct AuditLine {
    pub audit: &'static str,
    pub user: String,
    pub cluster_id: String,
    pub installation_id: String,
    pub installation_name: String,
    pub plugin_name: String,
    pub plugin_version: String,
    pub definition_hash: String,
    pub pinned_definition_hash: String,
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
    pub namespace: String,
    pub verb: String,
    pub decision: String,
    pub status: u16,
    pub latency_ms: f64,
}

/// Where audit lines go.
pub trait AuditSink: Send + Sync + 'static {
    fn record(&self, line: &AuditLine);
}

/// The log: one `plugin gateway request` event with every field (a JSON line
/// when logs are JSON), under the target `audit`.
pub struct LogAudit;

impl AuditSink for LogAudit {
    fn record(&self, l: &AuditLine) {
        tracing::info!(
            target: "audit",
            audit = l.audit,
            user = %l.user,
            cluster_id = %l.cluster_id,
            installation_id = %l.installation_id,
            installation_name = %l.installation_name,
            plugin_name = %l.plugin_name,
            plugin_version = %l.plugin_version,
            definition_hash = %l.definition_hash,
            pinned_definition_hash = %l.pinned_definition_hash,
            group = %l.group,
            resource = %l.resource,
            subresource = %l.subresource,
            name = %l.name,
            namespace = %l.namespace,
            verb = %l.verb,
            decision = %l.decision,
            status = l.status,
            latency_ms = l.latency_ms,
            "plugin gateway request"
        );
    }
}

/// Keeps lines in memory (tests, and anyone who wants to inspect them).
#[derive(Default)]
pub struct MemoryAudit(pub Mutex<Vec<AuditLine>>);

impl AuditSink for MemoryAudit {
    fn record(&self, line: &AuditLine) {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(line.clone());
    }
}

impl MemoryAudit {
    pub fn lines(&self) -> Vec<AuditLine> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}
