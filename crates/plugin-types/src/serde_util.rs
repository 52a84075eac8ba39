//! Deserializers for the leniency the readers had before they were typed.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// An explicit `null` is an absent field (as the definition schema and
/// upstream's decoder treat it): the default.
pub(crate) use fundament_kube_core::object::null_default;

/// A value of the wrong type reads as the default. For fields that only
/// inform (an installation's phase, message and labels): a reader that indexed
/// JSON got "nothing" for them, and the object stays usable.
pub(crate) fn or_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let value = Value::deserialize(d)?;
    Ok(serde_json::from_value(value).unwrap_or_default())
}
