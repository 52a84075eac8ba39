//! The server functions' answer encoding: JSON, decoded in the browser from text.
//!
//! server_fn's own `Json` decodes answers with `serde_json::from_slice`, while a resource the
//! server rendered is decoded at hydration with `serde_json::from_str`. Every type that goes
//! both ways (the plugin registry, a kind, the session's parts) then has its deserializer
//! compiled twice into the wasm, once per reader: 36 KB of the main chunk's 790 KB (brotli
//! finds the copies alike, so 1.6 KB of what is served). Decoding answers from text too keeps
//! one copy, which the browser need not compile twice. The bytes on the wire are `Json`'s.

use leptos::server_fn::{Bytes, ContentType, Decodes, Encodes, Format, FormatType, codec::Post};
use serde::{Serialize, de::DeserializeOwned};

/// JSON, decoded from text.
pub struct JsonText;

impl ContentType for JsonText {
    const CONTENT_TYPE: &'static str = "application/json";
}

impl FormatType for JsonText {
    const FORMAT_TYPE: Format = Format::Text;
}

impl<T: Serialize> Encodes<T> for JsonText {
    type Error = serde_json::Error;

    fn encode(output: &T) -> Result<Bytes, Self::Error> {
        serde_json::to_vec(output).map(Bytes::from)
    }
}

impl<T: DeserializeOwned> Decodes<T> for JsonText {
    type Error = serde_json::Error;

    fn decode(bytes: Bytes) -> Result<T, Self::Error> {
        let text = std::str::from_utf8(&bytes).map_err(<serde_json::Error as serde::de::Error>::custom)?;
        serde_json::from_str(text)
    }
}

/// JSON in a POST, in place of server_fn's `Json`: every server function's `output`, and the
/// `input` of those that take JSON arguments.
pub type Json = Post<JsonText>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_round_trip_and_bad_utf8_is_a_decode_error() {
        let bytes = <JsonText as Encodes<Vec<String>>>::encode(&vec!["a".into(), "é".into()]).unwrap();
        assert_eq!(&bytes[..], "[\"a\",\"é\"]".as_bytes());
        let back: Vec<String> = <JsonText as Decodes<Vec<String>>>::decode(bytes).unwrap();
        assert_eq!(back, ["a", "é"]);
        let bad = <JsonText as Decodes<Vec<String>>>::decode(Bytes::from_static(b"[\"\xff\"]"));
        assert!(bad.is_err());
    }
}
