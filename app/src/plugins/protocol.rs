//! The postMessage protocol, host side (seed "The postMessage protocol",
//! docs/architecture.md): flat `{type, ...fields}` objects. Everything a plugin page
//! sends is parsed into [`PluginMessage`] or dropped; nothing else is trusted.

use serde::Serialize;
use serde_json::Value;

use super::model::{is_dns1123_label, is_dns1123_subdomain};

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

/// Parses the `data` of a `message` event (as JSON).
pub fn parse(data: &Value) -> Result<PluginMessage, Refusal> {
    let kind = data.get("type").and_then(Value::as_str).ok_or(Refusal::Unknown)?;
    match kind {
        "plugin:ready" => Ok(PluginMessage::Ready),
        "plugin:resize" => {
            let height = data.get("height").and_then(Value::as_f64).filter(|h| h.is_finite() && *h >= 0.0);
            height.map(|h| PluginMessage::Resize(clamp_height(h))).ok_or_else(|| {
                Refusal::Invalid("plugin:resize needs a non-negative number `height`".to_owned())
            })
        }
        "plugin:request-token-refresh" => Ok(PluginMessage::RequestTokenRefresh),
        "plugin:navigate" => {
            let name = data.get("name").and_then(Value::as_str).unwrap_or_default();
            if !is_dns1123_subdomain(name) {
                return Err(Refusal::Invalid(format!(
                    "plugin:navigate: {name:?} is not a valid object name"
                )));
            }
            let namespace = match data.get("namespace") {
                None | Some(Value::Null) => None,
                Some(Value::String(ns)) if ns.is_empty() => None,
                Some(Value::String(ns)) if is_dns1123_label(ns) => Some(ns.clone()),
                Some(other) => {
                    return Err(Refusal::Invalid(format!(
                        "plugin:navigate: {other} is not a valid namespace name"
                    )));
                }
            };
            Ok(PluginMessage::Navigate { name: name.to_owned(), namespace })
        }
        "plugin:create" => Ok(PluginMessage::Create),
        "plugin:navigate-back" => Ok(PluginMessage::NavigateBack),
        _ => Err(Refusal::Unknown),
    }
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
    fn parses_the_six_plugin_messages() {
        assert_eq!(parse(&json!({"type": "plugin:ready"})), Ok(PluginMessage::Ready));
        assert_eq!(parse(&json!({"type": "plugin:resize", "height": 321.2})), Ok(PluginMessage::Resize(322)));
        assert_eq!(
            parse(&json!({"type": "plugin:request-token-refresh"})),
            Ok(PluginMessage::RequestTokenRefresh)
        );
        assert_eq!(
            parse(&json!({"type": "plugin:navigate", "name": "web-tls", "namespace": "prod"})),
            Ok(PluginMessage::Navigate { name: "web-tls".into(), namespace: Some("prod".into()) })
        );
        assert_eq!(
            parse(&json!({"type": "plugin:navigate", "name": "letsencrypt", "namespace": ""})),
            Ok(PluginMessage::Navigate { name: "letsencrypt".into(), namespace: None })
        );
        assert_eq!(parse(&json!({"type": "plugin:create"})), Ok(PluginMessage::Create));
        assert_eq!(parse(&json!({"type": "plugin:navigate-back"})), Ok(PluginMessage::NavigateBack));
    }

    #[test]
    fn refuses_unknown_and_hostile_messages() {
        for data in
            [json!(null), json!("plugin:ready"), json!({"type": 1}), json!({"type": "fundament:init"})]
        {
            assert_eq!(parse(&data), Err(Refusal::Unknown), "{data}");
        }
        for data in [
            json!({"type": "plugin:navigate", "name": "../../clusters"}),
            json!({"type": "plugin:navigate", "name": "a/b"}),
            json!({"type": "plugin:navigate", "name": "https://evil.example"}),
            json!({"type": "plugin:navigate", "name": "ok", "namespace": "Bad_NS"}),
            json!({"type": "plugin:navigate", "name": "ok", "namespace": 3}),
            json!({"type": "plugin:navigate"}),
            json!({"type": "plugin:resize", "height": "9e9"}),
            json!({"type": "plugin:resize", "height": -1}),
            json!({"type": "plugin:resize"}),
        ] {
            assert!(matches!(parse(&data), Err(Refusal::Invalid(_))), "{data}");
        }
    }

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
