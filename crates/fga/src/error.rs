use std::path::PathBuf;
use std::time::Duration;

/// Why a `can_view` check or loading the tuple store failed. Each message is
/// one line; callers log it and answer "internal error", never "allowed".
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
