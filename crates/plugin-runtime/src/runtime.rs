//! The plugin's identity and its reported state, shared by every handler.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use serde::Serialize;

use crate::assets::Assets;

/// The lifecycle phase a plugin reports. plugin-controller maps it onto the PluginInstallation:
/// installing → Deploying, running → Running, degraded → Degraded, failed → Failed,
/// uninstalling → Terminating. Serialised lower-case, as the controller expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Installing,
    Running,
    Degraded,
    Failed,
    Uninstalling,
}

/// Who this plugin is: the published definition it was built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginInfo {
    /// The definition's `metadata.name`.
    pub name: String,
    /// The definition's `metadata.version`.
    pub version: String,
    /// `sha256:<hex>` of the published definition, so the controller can compare it with its pin.
    pub definition_hash: String,
}

/// The answer of `GetStatus`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Status {
    pub(crate) phase: Phase,
    pub(crate) message: String,
}

/// The runtime of one plugin process. Cheap to clone: every clone shares the same state, so the
/// plugin keeps one to report through while the server holds another.
#[derive(Debug, Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    info: PluginInfo,
    assets: Assets,
    status: RwLock<Status>,
    ready: AtomicBool,
}

impl Runtime {
    /// A runtime in phase `installing`, not ready.
    pub fn new(info: PluginInfo, assets: Assets) -> Runtime {
        let status = Status { phase: Phase::Installing, message: String::new() };
        Runtime {
            inner: Arc::new(Inner {
                info,
                assets,
                status: RwLock::new(status),
                ready: AtomicBool::new(false),
            }),
        }
    }

    /// The plugin can do its work: `/readyz` answers 200 from now on and the phase becomes
    /// `running` (with an empty message, so an "installing …" message does not linger).
    /// Readiness is never withdrawn: a plugin in trouble reports `degraded` or `failed` instead.
    pub fn report_ready(&self) {
        self.inner.ready.store(true, Ordering::Release);
        self.set_status(Phase::Running, "");
    }

    /// Reports a phase and a human-readable message, shown on the PluginInstallation.
    /// It does not change readiness.
    pub fn set_status(&self, phase: Phase, message: &str) {
        // Not `message`: that is the event's own field, and a JSON line would carry the key twice.
        // The plugin's name: `fundament dev` runs every plugin's runtime in one process.
        tracing::info!(plugin = %self.inner.info.name, phase = ?phase, status_message = message, "plugin status");
        let mut status = self.inner.status.write().unwrap_or_else(PoisonError::into_inner);
        *status = Status { phase, message: message.to_owned() };
    }

    /// The whole HTTP surface; see the crate documentation.
    pub fn router(&self) -> axum::Router {
        crate::server::router(self.clone())
    }

    pub(crate) fn is_ready(&self) -> bool {
        self.inner.ready.load(Ordering::Acquire)
    }

    pub(crate) fn status(&self) -> Status {
        self.inner.status.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    pub(crate) fn info(&self) -> &PluginInfo {
        &self.inner.info
    }

    pub(crate) fn assets(&self) -> &Assets {
        &self.inner.assets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> Runtime {
        let info =
            PluginInfo { name: "demo".into(), version: "v1".into(), definition_hash: "sha256:00".into() };
        Runtime::new(info, Assets::None)
    }

    #[test]
    fn starts_installing_and_not_ready() {
        let rt = runtime();
        assert!(!rt.is_ready());
        assert_eq!(rt.status(), Status { phase: Phase::Installing, message: String::new() });
    }

    #[test]
    fn report_ready_makes_it_ready_and_running() {
        let rt = runtime();
        rt.set_status(Phase::Installing, "installing the operator");
        rt.report_ready();
        assert!(rt.is_ready());
        assert_eq!(rt.status(), Status { phase: Phase::Running, message: String::new() });
    }

    #[test]
    fn clones_share_state_and_status_does_not_touch_readiness() {
        let rt = runtime();
        let other = rt.clone();
        other.set_status(Phase::Degraded, "webhook unreachable");
        assert_eq!(rt.status().phase, Phase::Degraded);
        assert_eq!(rt.status().message, "webhook unreachable");
        assert!(!rt.is_ready());
    }

    #[test]
    fn the_status_line_has_each_key_once() {
        let buffer = fundament_telemetry::CapturedLogs::default();
        let lines = buffer.clone();
        let sub = fundament_telemetry::subscriber(
            fundament_telemetry::LogFormat::Json,
            tracing_subscriber::EnvFilter::new("info"),
            move || lines.clone(),
        );
        tracing::subscriber::with_default(sub, || {
            runtime().set_status(Phase::Degraded, "webhook unreachable")
        });
        let text = buffer.text();
        let line = text.lines().next().unwrap_or_else(|| panic!("no line: {text}"));
        assert_eq!(line.matches("\"message\":").count(), 1, "{line}");
        let json: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(json["message"], "plugin status", "{line}");
        assert_eq!(json["status_message"], "webhook unreachable", "{line}");
        assert_eq!(json["phase"], "Degraded", "{line}");
        assert_eq!(json["plugin"], runtime().inner.info.name, "{line}");
    }

    #[test]
    fn phases_serialise_lower_case() {
        let all = [Phase::Installing, Phase::Running, Phase::Degraded, Phase::Failed, Phase::Uninstalling];
        let json = serde_json::to_string(&all).unwrap();
        assert_eq!(json, r#"["installing","running","degraded","failed","uninstalling"]"#);
    }
}
