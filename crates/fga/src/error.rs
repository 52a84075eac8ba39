use std::path::PathBuf;
use std::time::Duration;

/// Why a `can_view` check or loading the tuple store failed. Each message is
/// one line; callers log it and answer that cluster access cannot be checked (never
/// "allowed"), without the detail: [`FgaError::summary`] is what they may show.
#[derive(Debug, thiserror::Error)]
pub enum FgaError {
    /// The OpenFGA settings cannot work (URL, store id); found at start-up.
    #[error("invalid OpenFGA settings: {0}")]
    Config(String),
    /// The request did not reach OpenFGA or its answer could not be read.
    #[error("OpenFGA request failed: {0}")]
    Transport(String),
    /// OpenFGA did not answer within the timeout.
    #[error("OpenFGA did not answer within {0:?}")]
    Timeout(Duration),
    /// OpenFGA answered with a non-2xx status.
    #[error("OpenFGA answered {status}: {body}")]
    Status {
        /// The HTTP status.
        status: http::StatusCode,
        /// The start of the response body, for the log.
        body: String,
    },
    /// OpenFGA answered 2xx, but not with `{"allowed": <bool>}`.
    #[error("OpenFGA answered with an unexpected body: {0}")]
    BadResponse(String),
    /// The tuples file of mock mode cannot be read or is invalid.
    #[error("tuples file {}: {reason}", .path.display())]
    TuplesFile {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the entry (`tuples[2]`) where there is one.
        reason: String,
    },
}

/// [`FgaError::client_message`] for a check that failed.
pub const UNAVAILABLE: &str =
    "cluster access cannot be checked: the authorization service (OpenFGA) is unavailable; try again";

/// [`FgaError::client_message`] for a check that timed out.
pub const UNANSWERED: &str =
    "cluster access cannot be checked: the authorization service (OpenFGA) did not answer in time; try again";

impl FgaError {
    /// The check ran out of time: a caller answers "try again later" for it as for the other
    /// failures, but with its own status (a gateway's 504).
    pub fn is_timeout(&self) -> bool {
        matches!(self, FgaError::Timeout(_))
    }

    /// What a caller is told when its check could not be made: which dependency failed and
    /// what to do, the same words from every service (the gateway's Status, plugin-proxy's
    /// text, authn's Connect error); never the cause, which names addresses.
    pub fn client_message(&self) -> &'static str {
        if self.is_timeout() { UNANSWERED } else { UNAVAILABLE }
    }

    /// What went wrong, for anyone to read (a service's `/readyz?verbose`): the kind of
    /// failure only. The error's own text stays in the log: it names OpenFGA's address, its
    /// answer's body or a file's path.
    pub fn summary(&self) -> String {
        match self {
            FgaError::Config(_) => "misconfigured".to_owned(),
            FgaError::Transport(_) => "unavailable".to_owned(),
            FgaError::Timeout(after) => format!("no answer within {after:?}"),
            FgaError::Status { status, .. } => format!("answered HTTP {}", status.as_u16()),
            FgaError::BadResponse(_) => "unexpected answer".to_owned(),
            FgaError::TuplesFile { .. } => "tuples file unusable".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_names_the_kind_of_failure_and_nothing_of_its_detail() {
        let cases = [
            (FgaError::Transport("connect to http://10.0.0.7:8080 refused".into()), "unavailable"),
            (FgaError::Timeout(Duration::from_secs(5)), "no answer within 5s"),
            (
                FgaError::Status { status: http::StatusCode::BAD_GATEWAY, body: "at 10.0.0.7".into() },
                "answered HTTP 502",
            ),
            (FgaError::BadResponse("<html>10.0.0.7".into()), "unexpected answer"),
        ];
        for (error, summary) in cases {
            assert_eq!(error.summary(), summary);
        }
        assert!(FgaError::Timeout(Duration::from_millis(300)).is_timeout());
        assert_eq!(FgaError::Timeout(Duration::from_secs(5)).client_message(), UNANSWERED);
        assert_eq!(FgaError::Transport("x".into()).client_message(), UNAVAILABLE);
        assert!(!FgaError::Transport(String::new()).is_timeout());
    }
}
