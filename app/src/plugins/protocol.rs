//! The postMessage protocol, host side (seed "The postMessage protocol",
//! docs/architecture.md): flat `{type, ...fields}` objects. Everything a plugin page
//! sends is parsed into [`PluginMessage`] or dropped; nothing else is trusted.

use serde_json::Value;

use super::model::{is_dns1123_label, is_dns1123_subdomain};

/// The protocol's data and bounds are shared; parsing stays here, where the
/// names are validated.
pub use fundament_plugin_types::protocol::{
    HostMessage, INITIAL_FRAME_HEIGHT, Init, MAX_FRAME_HEIGHT, MIN_FRAME_HEIGHT, PluginMessage, Refusal,
    ResourceRef, clamp_height,
};

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

    /// Fuzz target: whatever a plugin page posts is a message or a refusal, never a panic,
    /// and what is accepted is within bounds (heights clamped, names valid).
    mod never_panics {
        use proptest::prelude::*;
        use serde_json::{Map, Value};

        use super::super::*;

        const TYPES: &[&str] = &[
            "plugin:ready",
            "plugin:resize",
            "plugin:request-token-refresh",
            "plugin:navigate",
            "plugin:create",
            "plugin:navigate-back",
            "fundament:init",
            "",
        ];

        /// An object with a known `type` and arbitrary `height`, `name` and `namespace`.
        fn message() -> impl Strategy<Value = Value> {
            let field = || prop::option::of(fundament_fuzzing::json());
            (prop::sample::select(TYPES), field(), field(), field(), field()).prop_map(
                |(kind, height, name, namespace, extra)| {
                    let mut object = Map::new();
                    object.insert("type".into(), kind.into());
                    for (key, value) in
                        [("height", height), ("name", name), ("namespace", namespace), ("x", extra)]
                    {
                        if let Some(value) = value {
                            object.insert(key.into(), value);
                        }
                    }
                    Value::Object(object)
                },
            )
        }

        proptest! {
            #![proptest_config(fundament_fuzzing::config(2048))]

            #[test]
            fn any_data_is_a_message_or_a_refusal(data in prop_oneof![message(), fundament_fuzzing::json()]) {
                match parse(&data) {
                    Ok(PluginMessage::Resize(height)) => {
                        prop_assert!((MIN_FRAME_HEIGHT..=MAX_FRAME_HEIGHT).contains(&height), "{height}");
                    }
                    Ok(PluginMessage::Navigate { name, namespace }) => {
                        prop_assert!(is_dns1123_subdomain(&name), "{name:?}");
                        prop_assert!(namespace.as_deref().is_none_or(is_dns1123_label), "{namespace:?}");
                    }
                    Ok(_) | Err(_) => {}
                }
            }
        }
    }
}
