//! The console's postMessage protocol with plugin pages (seed "The postMessage
//! protocol", version 1): flat `{type, ...fields}` objects. The console parses
//! a page's messages into [`PluginMessage`] (validating names with the
//! Kubernetes rules, which is why the parser lives with the console) and sends
//! [`HostMessage`]s; `plugin-sdk.d.ts` is the same protocol for page authors.

use serde::Serialize;

/// The frame is never shorter than this (px), so a page that reports 0 stays visible.
pub const MIN_FRAME_HEIGHT: u32 = 80;
/// Nor taller than this (px): a page cannot make the console scroll forever.
pub const MAX_FRAME_HEIGHT: u32 = 20_000;
/// The height before the first `plugin:resize`.
pub const INITIAL_FRAME_HEIGHT: u32 = 480;

/// A message from a plugin page, validated.
#[derive(Debug, Clone, PartialEq)]
pub enum PluginMessage {
    Ready,
    /// The page's content height, already clamped.
    Resize(u32),
    RequestTokenRefresh,
    /// Open an object of the same kind; the name (and namespace) are valid names.
    Navigate {
        name: String,
        namespace: Option<String>,
    },
    Create,
    NavigateBack,
}

/// Why a message from the right frame was still refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Not a `{type}` object, or a type the host does not know.
    Unknown,
    /// A known type with fields that are missing or invalid; the text says which.
    Invalid(String),
}

/// Rounds a reported height up and keeps it within the bounds.
pub fn clamp_height(height: f64) -> u32 {
    let h = height.ceil().min(f64::from(MAX_FRAME_HEIGHT));
    (h as u32).clamp(MIN_FRAME_HEIGHT, MAX_FRAME_HEIGHT)
}

/// The object a detail view shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResourceRef {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// `fundament:init`'s payload (every field of the seed's table).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Init {
    pub protocol_version: u32,
    pub theme: &'static str,
    pub plugin_name: String,
    pub crd_kind: String,
    pub view: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<ResourceRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<Vec<String>>,
    pub kube_api_proxy_url: String,
    pub cluster_id: String,
    /// `null` while the first mint has not succeeded; `fundament:token-refreshed`
    /// or `fundament:auth-failed` follows.
    pub token: Option<String>,
    pub token_expires_at: Option<i64>,
}

/// A message to a plugin page.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum HostMessage {
    #[serde(rename = "fundament:init")]
    Init(Box<Init>),
    #[serde(rename = "fundament:theme-changed")]
    ThemeChanged { theme: &'static str },
    #[serde(rename = "fundament:token-refreshed", rename_all = "camelCase")]
    TokenRefreshed { token: String, token_expires_at: i64 },
    #[serde(rename = "fundament:auth-failed")]
    AuthFailed { reason: &'static str },
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn heights_are_clamped() {
        assert_eq!(clamp_height(0.0), MIN_FRAME_HEIGHT);
        assert_eq!(clamp_height(1e12), MAX_FRAME_HEIGHT);
        assert_eq!(clamp_height(640.0), 640);
    }

    #[test]
    fn host_messages_are_flat_with_the_seed_field_names() {
        let init = HostMessage::Init(Box::new(Init {
            protocol_version: 1,
            theme: "dark",
            plugin_name: "acme-corp--cert-manager".into(),
            crd_kind: "Certificate".into(),
            view: "detail",
            resource: Some(ResourceRef { name: "web-tls".into(), namespace: Some("prod".into()) }),
            namespaces: None,
            kube_api_proxy_url: "http://localhost:8081".into(),
            cluster_id: "c".into(),
            token: Some("t".into()),
            token_expires_at: Some(5),
        }));
        assert_eq!(
            serde_json::to_value(&init).unwrap(),
            json!({
                "type": "fundament:init", "protocolVersion": 1, "theme": "dark",
                "pluginName": "acme-corp--cert-manager", "crdKind": "Certificate", "view": "detail",
                "resource": {"name": "web-tls", "namespace": "prod"},
                "kubeApiProxyUrl": "http://localhost:8081", "clusterId": "c", "token": "t", "tokenExpiresAt": 5
            })
        );
        assert_eq!(
            serde_json::to_value(HostMessage::TokenRefreshed { token: "t".into(), token_expires_at: 9 })
                .unwrap(),
            json!({"type": "fundament:token-refreshed", "token": "t", "tokenExpiresAt": 9})
        );
        assert_eq!(
            serde_json::to_value(HostMessage::AuthFailed { reason: "revoked" }).unwrap(),
            json!({"type": "fundament:auth-failed", "reason": "revoked"})
        );
        assert_eq!(
            serde_json::to_value(HostMessage::ThemeChanged { theme: "light" }).unwrap(),
            json!({"type": "fundament:theme-changed", "theme": "light"})
        );
    }
}
