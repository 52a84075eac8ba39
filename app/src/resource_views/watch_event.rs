//! One line of a Kubernetes watch stream, as the watch hub (`watch.rs`) reads it: the event's
//! type, then what that type needs of its object: a changed object's metadata, an ERROR's
//! Status code. Plain parsing, apart from the browser's streams, so it is tested on its own.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// How deep a line is read when serde_json's own depth limit refuses it: the metadata is all
/// the hub needs, and it is near the top.
const READ_DEPTH: usize = 32;

/// One watch event. The type decides what is read of its object, so a custom resource's own
/// fields (a top-level `code` that is a string) are never taken for a Status's.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum WatchEvent {
    Added(Changed),
    Modified(Changed),
    Deleted(Changed),
    /// No change: only a resourceVersion to resume from.
    Bookmark(Changed),
    /// The watch ends (the server closes it after this).
    Error(Status),
}

/// The object of an ADDED, MODIFIED, DELETED or BOOKMARK event: only its metadata is read.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Changed {
    pub metadata: Meta,
}

/// What the hub reads of an object's metadata.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub(crate) struct Meta {
    pub name: Option<String>,
    pub namespace: Option<String>,
    #[serde(rename = "resourceVersion")]
    pub resource_version: Option<String>,
}

/// The Status of an ERROR event.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Status {
    code: Option<u64>,
}

impl Status {
    /// The HTTP code it carries (410: the version is too old to resume from).
    pub(crate) fn code(&self) -> Option<u16> {
        self.code.and_then(|code| u16::try_from(code).ok())
    }
}

/// How a watch connection (or the list before it) ended, and so what the hub does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// Closed by the server, dropped by the network, or a passing failure (5xx, 429): resume.
    Dropped,
    /// 410: the version is too old to resume from.
    Gone,
    /// Refused for good for this collection (403, 404…).
    Refused,
    /// 401: the session ended. Not this collection's matter: every watch of the tab stops and
    /// none is tried again (`crate::session_end`).
    SignedOut,
}

/// How an answer of this status ends the connection (`None`: 200, it goes on).
pub(crate) fn end_of(status: u16) -> Option<End> {
    match status {
        200 => None,
        401 => Some(End::SignedOut),
        410 => Some(End::Gone),
        429 | 500..=599 => Some(End::Dropped),
        _ => Some(End::Refused),
    }
}

/// How an ERROR event with this Status code ends the stream.
pub(crate) fn end_of_error(code: Option<u16>) -> End {
    match code {
        Some(410) | None => End::Gone,
        Some(401) => End::SignedOut,
        Some(_) => End::Dropped,
    }
}

/// A line as read in one pass: the type, and of the object its metadata and a top-level `code`
/// of any JSON type (a number is kept; anything else is no code). Plain structs with a lenient
/// field, not a tagged enum or a `serde_json::Value`: both would add their buffering code to
/// the console's main wasm module, which every first load downloads.
#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    object: Object,
}

#[derive(Deserialize, Default)]
struct Object {
    #[serde(default)]
    metadata: Meta,
    #[serde(default)]
    code: Code,
}

/// Any JSON value; a whole number that fits is kept.
#[derive(Default)]
struct Code(Option<u64>);

impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CodeVisitor)
    }
}

struct CodeVisitor;

impl<'de> Visitor<'de> for CodeVisitor {
    type Value = Code;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Code, E> {
        Ok(Code(Some(v)))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Code, E> {
        Ok(Code(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Code, E> {
        Ok(Code(None))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Code, E> {
        Ok(Code(None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Code, E> {
        Ok(Code(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Code, E> {
        Ok(Code(None))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Code, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Code(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Code, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Code(None))
    }
}

/// Why a line is not an event the hub reads.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LineError {
    #[error("not a watch event: {0}")]
    Json(#[from] serde_json::Error),
    #[error("an event of an unknown type {0:?}")]
    UnknownType(String),
}

/// Reads one line of a watch stream. An object nested deeper than serde_json reads is read
/// without its deepest parts (its metadata is all that is needed).
pub(crate) fn parse_event_line(line: &str) -> Result<WatchEvent, LineError> {
    let line: Line = serde_json::from_str(line).or_else(|error| {
        // Read from text like the first try (pruning keeps UTF-8 whole): `from_slice` would
        // put a second copy of every deserializer of these types into the main chunk.
        match fundament_kube_core::json_depth::prune_deeper_than(line.as_bytes(), READ_DEPTH)
            .and_then(|pruned| String::from_utf8(pruned).ok())
        {
            Some(pruned) => serde_json::from_str(&pruned),
            None => Err(error),
        }
    })?;
    let changed = Changed { metadata: line.object.metadata };
    Ok(match line.kind.as_str() {
        "ADDED" => WatchEvent::Added(changed),
        "MODIFIED" => WatchEvent::Modified(changed),
        "DELETED" => WatchEvent::Deleted(changed),
        "BOOKMARK" => WatchEvent::Bookmark(changed),
        "ERROR" => WatchEvent::Error(Status { code: line.object.code.0 }),
        _ => return Err(LineError::UnknownType(line.kind)),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_401_ends_the_session_not_just_the_watch() {
        assert_eq!(end_of(200), None);
        assert_eq!(end_of(401), Some(End::SignedOut), "the session ended: stop, never retry");
        assert_eq!(end_of(403), Some(End::Refused));
        assert_eq!(end_of(404), Some(End::Refused));
        assert_eq!(end_of(410), Some(End::Gone));
        assert_eq!(end_of(429), Some(End::Dropped));
        assert_eq!(end_of(503), Some(End::Dropped));
        assert_eq!(end_of_error(Some(401)), End::SignedOut);
        assert_eq!(end_of_error(Some(410)), End::Gone);
        assert_eq!(end_of_error(None), End::Gone);
        assert_eq!(end_of_error(Some(500)), End::Dropped);
    }

    fn changed(name: &str, resource_version: &str) -> Changed {
        Changed {
            metadata: Meta {
                name: Some(name.into()),
                namespace: Some("ns".into()),
                resource_version: Some(resource_version.into()),
            },
        }
    }

    /// A custom resource may have a top-level `code` of its own, of any type: it is not a
    /// Status's (reading it as one refused the line, and the stream with it).
    #[test]
    fn a_changed_object_with_its_own_code_field_is_read() {
        let line = r#"{"type":"MODIFIED","object":{"apiVersion":"example.com/v1","kind":"Thing","code":"x","metadata":{"name":"a","namespace":"ns","resourceVersion":"12"},"spec":{"code":{"nested":true}}}}"#;
        assert_eq!(parse_event_line(line).unwrap(), WatchEvent::Modified(changed("a", "12")));
        let object_first = r#"{"object":{"code":[1],"metadata":{"name":"b","namespace":"ns","resourceVersion":"13"}},"type":"ADDED"}"#;
        assert_eq!(parse_event_line(object_first).unwrap(), WatchEvent::Added(changed("b", "13")));
    }

    #[test]
    fn an_error_carries_its_status_code() {
        let gone = r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}"#;
        let WatchEvent::Error(status) = parse_event_line(gone).unwrap() else { panic!("an error") };
        assert_eq!(status.code(), Some(410));
        let WatchEvent::Error(status) =
            parse_event_line(r#"{"type":"ERROR","object":{"kind":"Status"}}"#).unwrap()
        else {
            panic!("an error")
        };
        assert_eq!(status.code(), None);
    }

    #[test]
    fn bookmarks_deep_objects_and_unreadable_lines() {
        let bookmark = r#"{"type":"BOOKMARK","object":{"kind":"Thing","metadata":{"resourceVersion":"20"}}}"#;
        let expected = Changed { metadata: Meta { resource_version: Some("20".into()), ..Meta::default() } };
        assert_eq!(parse_event_line(bookmark).unwrap(), WatchEvent::Bookmark(expected));

        let mut deep = json!("leaf");
        for _ in 0..200 {
            deep = json!([deep]);
        }
        let line = json!({"type": "DELETED", "object": {"metadata": {"name": "a", "namespace": "ns", "resourceVersion": "21"}, "spec": deep}});
        assert_eq!(parse_event_line(&line.to_string()).unwrap(), WatchEvent::Deleted(changed("a", "21")));

        assert!(parse_event_line("not json").is_err());
        assert!(parse_event_line(r#"{"type":"SOMETHING","object":{}}"#).is_err());
    }
}
