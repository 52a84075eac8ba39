//! Warnings for the client, sent as kube-apiserver sends them: one
//! `Warning: 299 - "<text>"` header each (RFC 7234's warn-code 299, no agent),
//! which kubectl prints as `Warning: <text>` and client-go hands to its
//! warning handler.
//!
//! Code deep in a write (admission, a strategy) records a warning with [`add`],
//! as kube-apiserver's `warning.AddWarning(ctx, …)` does; the API layer runs a
//! request's synchronous part inside [`recording`] and attaches what was
//! recorded with [`attach`]. Writes the cluster makes itself (fixtures, the
//! controller) record nothing: outside a recording, [`add`] does nothing.

use std::cell::RefCell;

use axum::http::{HeaderValue, header};
use axum::response::Response;

/// Past this many characters in all, each text is cut to [`CUT_LENGTH`]
/// (kube-apiserver's recorder keeps headers bounded the same way).
const MAX_TOTAL: usize = 4096;
const CUT_LENGTH: usize = 256;
/// How many warnings a response carries at most.
const MAX_COUNT: usize = 32;

thread_local! {
    // Only ever set for the duration of one synchronous call (`recording`), so it
    // never spans an await and never leaks from one request into another.
    static RECORDED: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Records `text` for the response of the request being served, once.
pub fn add(text: impl Into<String>) {
    let text = text.into();
    RECORDED.with_borrow_mut(|recorded| {
        if let Some(recorded) = recorded.as_mut()
            && recorded.len() < MAX_COUNT
            && !recorded.contains(&text)
        {
            recorded.push(text);
        }
    });
}

/// Runs `f`, returning what it answered and the warnings it recorded.
pub fn recording<R>(f: impl FnOnce() -> R) -> (R, Vec<String>) {
    let outer = PutBack(RECORDED.replace(Some(Vec::new())));
    let answer = f();
    let recorded = RECORDED.take().unwrap_or_default();
    drop(outer);
    (answer, recorded)
}

/// The recording outside `recording`'s call, put back when dropped: after the call, or while a
/// panic in it unwinds (a handler's panic is answered with a 500 and the thread serves on, and
/// its later writes outside any request must record nothing).
struct PutBack(Option<Vec<String>>);

impl Drop for PutBack {
    fn drop(&mut self) {
        RECORDED.set(self.0.take());
    }
}

/// Adds one `Warning` header per recorded text.
pub fn attach(response: &mut Response, warnings: &[String]) {
    let total: usize = warnings.iter().map(|text| text.chars().count()).sum();
    let length = if total > MAX_TOTAL { CUT_LENGTH } else { MAX_TOTAL };
    for text in warnings {
        response.headers_mut().append(header::WARNING, header_value(text, length));
    }
}

/// `299 - "<text>"`: the text quoted (`"` and `\` escaped), control characters
/// as spaces, cut at `length` characters.
fn header_value(text: &str, length: usize) -> HeaderValue {
    let mut value = String::from("299 - \"");
    for c in text.chars().take(length) {
        match c {
            '"' | '\\' => {
                value.push('\\');
                value.push(c);
            }
            c if c.is_control() => value.push(' '),
            c => value.push(c),
        }
    }
    value.push('"');
    // Every byte is visible ASCII, a space or UTF-8 (obs-text), which header values allow.
    HeaderValue::from_bytes(value.as_bytes()).unwrap_or_else(|_| HeaderValue::from_static("299 - \"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_recorded_only_inside_a_recording_and_once_each() {
        add("outside");
        let ((), recorded) = recording(|| {
            add("a");
            add("b");
            add("a");
        });
        assert_eq!(recorded, ["a", "b"]);
        let ((), recorded) = recording(|| {});
        assert!(recorded.is_empty(), "nothing leaks from one recording into the next");
    }

    #[test]
    fn a_nested_recording_keeps_the_outer_one() {
        let (inner, outer) = recording(|| {
            add("outer");
            recording(|| add("inner")).1
        });
        assert_eq!((inner, outer), (vec!["inner".to_string()], vec!["outer".to_string()]));
    }

    #[test]
    fn a_recording_whose_call_panics_leaves_none_behind() {
        let panicked = std::panic::catch_unwind(|| recording(|| panic!("a handler that panics")));
        assert!(panicked.is_err());
        assert!(RECORDED.with_borrow(Option::is_none), "outside a recording again");
    }

    #[test]
    fn header_values_quote_escape_and_cut() {
        assert_eq!(header_value("plain text", MAX_TOTAL), "299 - \"plain text\"");
        assert_eq!(header_value("say \"hi\"\\\n", MAX_TOTAL), "299 - \"say \\\"hi\\\"\\\\ \"");
        assert_eq!(header_value("ünïcode", MAX_TOTAL).as_bytes(), "299 - \"ünïcode\"".as_bytes());
        let headers = |warnings: &[String]| {
            let mut response = Response::new(axum::body::Body::empty());
            attach(&mut response, warnings);
            response.headers().get_all(header::WARNING).iter().map(|v| v.len()).collect::<Vec<_>>()
        };
        let quoting = "299 - \"\"".len();
        assert_eq!(headers(&["one".into(), "x".repeat(1000)]), [quoting + 3, quoting + 1000]);
        // Texts that together pass the total are each cut.
        assert_eq!(
            headers(&["x".repeat(3000), "y".repeat(3000)]),
            [quoting + CUT_LENGTH, quoting + CUT_LENGTH]
        );
    }
}
