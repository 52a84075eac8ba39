//! The one error type of the console's server functions. Its messages are
//! written for users; internal detail is logged on the server and never sent.

use leptos::server_fn::{
    Bytes, Decodes,
    error::{FromServerFnError, IntoAppError, ServerFnErrorErr},
};
use serde::{Deserialize, Serialize};

/// What went wrong, in words a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum AppError {
    /// No valid session.
    #[error("You are not signed in.")]
    Unauthenticated,
    /// A value the user gave is not acceptable; the message says why.
    #[error("{0}")]
    Invalid(String),
    /// The user may not see or do this; the message says what and why (the cluster's words).
    /// Not passing: asking again gets the same answer until someone grants it.
    #[error("{0}")]
    Forbidden(String),
    /// Something the user asked for does not exist, or they cannot see it.
    #[error("{0} does not exist, or you cannot see it.")]
    NotFound(String),
    /// A failure on the server; details are in the server's log.
    #[error("Something went wrong on the server. Try again in a moment.")]
    Internal,
    /// A service or cluster the page needs does not answer right now: down, restarting,
    /// busy or slow. Passing: the page says so and tries again by itself, after
    /// `retry_after` seconds when the service named a time.
    #[error("{message}")]
    Unavailable { message: String, retry_after: Option<u32> },
    /// The request did not reach the server function or its answer was unreadable. Said in
    /// words (the browser's own, "TypeError: Failed to fetch", told a user nothing).
    #[error("{}", transport_message(.0))]
    Transport(ServerFnErrorErr),
}

impl AppError {
    /// Whether trying again later may succeed by itself (the page retries on its own).
    pub fn is_passing(&self) -> bool {
        matches!(self, AppError::Unavailable { .. } | AppError::Transport(_))
    }

    /// Whether it says that the session ended (signed out, revoked, expired): the tab then
    /// says so and stops what it keeps doing for the session (`crate::session_end`).
    pub fn ends_session(&self) -> bool {
        matches!(self, AppError::Unauthenticated)
    }

    /// Seconds the service asked to wait before trying again, if it named any.
    pub fn retry_after(&self) -> Option<u32> {
        match self {
            AppError::Unavailable { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// What a user is told when a call did not get through: the request never reached the
/// console (the browser is offline, the network or the console is down), or its answer could
/// not be read (a proxy's page instead of the console's answer, a console of another version).
fn transport_message(error: &ServerFnErrorErr) -> &'static str {
    match error {
        // Given up on by the browser (`crate::api::client`): the request may have arrived.
        ServerFnErrorErr::Request(why) if why == crate::api::client::TIMED_OUT => {
            "The console did not answer within 45 s: check your network connection. If you sent a \
             change, it may have been made: look before you send it again."
        }
        ServerFnErrorErr::Request(_) => "The console cannot be reached: check your network connection.",
        _ => "The console's answer could not be read. Reload the page to try again.",
    }
}

impl FromServerFnError for AppError {
    /// Decoded from text, as the answers are (`crate::api::codec`): one copy of its
    /// deserializer in the wasm instead of one per reader.
    type Encoder = crate::api::codec::JsonText;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        AppError::Transport(value)
    }

    /// Every server function's error in the browser passes here: one place learns that the
    /// session ended, whichever call found out.
    fn de(data: Bytes) -> Self {
        let error = <Self::Encoder as Decodes<Self>>::decode(data)
            .unwrap_or_else(|e| ServerFnErrorErr::Deserialization(e.to_string()).into_app_error());
        #[cfg(feature = "hydrate")]
        if error.ends_session() {
            crate::session_end::refused();
        }
        error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_unauthenticated_answer_ends_the_session() {
        assert!(AppError::Unauthenticated.ends_session());
        for other in [
            AppError::Invalid("x".into()),
            AppError::Forbidden("x".into()),
            AppError::NotFound("x".into()),
            AppError::Internal,
            AppError::Unavailable { message: "down".into(), retry_after: None },
            AppError::Transport(ServerFnErrorErr::Request("offline".into())),
        ] {
            assert!(!other.ends_session(), "{other:?}");
        }
        let offline = AppError::Transport(ServerFnErrorErr::Request("TypeError: Failed to fetch".into()));
        assert!(!offline.to_string().contains("TypeError"), "the browser's words stay out: {offline}");
        assert!(offline.to_string().contains("check your network connection"));
        let timed_out = AppError::Transport(ServerFnErrorErr::Request(crate::api::client::TIMED_OUT.into()));
        assert!(timed_out.is_passing(), "a read given up on is tried again");
        let within = format!("did not answer within {} s", crate::api::client::ANSWER_WITHIN.as_secs());
        assert!(timed_out.to_string().contains(&within), "the limit as it is: {timed_out}");
        let decoded = AppError::de(AppError::Unauthenticated.ser());
        assert_eq!(decoded, AppError::Unauthenticated, "read back as the browser reads it");
    }
}
