//! One line of a Kubernetes watch stream, as the watch hub (`watch.rs`) reads it: the event's
//! type, then what that type needs of its object: a changed object's metadata, an ERROR's
//! Status code. Plain parsing, apart from the browser's streams, so it is tested on its own.

use serde::Deserialize;
use serde_json::Value;

/// How deep a line is read when serde_json's own depth limit refuses it: the metadata is all
/// the hub needs, and it is near the top.
const READ_DEPTH: usize = 32;

/// One watch event. The type decides how its object is read, so a custom resource's own
/// fields (a top-level `code` that is a string) are never read as a Status's.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", content = "object", rename_all = "UPPERCASE")]
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
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(crate) struct Changed {
    #[serde(default)]
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
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(crate) struct Status {
    /// Read as any JSON: a Status with a code that is not a number still ends the watch.
    #[serde(default)]
    code: Value,
}

impl Status {
    /// The HTTP code it carries (410: the version is too old to resume from).
    pub(crate) fn code(&self) -> Option<u16> {
        self.code.as_u64().and_then(|code| u16::try_from(code).ok())
    }
}

/// Reads one line of a watch stream. An object nested deeper than serde_json reads is read
/// without its deepest parts (its metadata is all that is needed).
pub(crate) fn parse_event_line(line: &str) -> Result<WatchEvent, serde_json::Error> {
    serde_json::from_str(line).or_else(|error| {
        match fundament_kube_core::json_depth::prune_deeper_than(line.as_bytes(), READ_DEPTH) {
            Some(pruned) => serde_json::from_slice(&pruned),
            None => Err(error),
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
