//! What a test logged: an in-memory writer for [`crate::subscriber`] or any `tracing`
//! subscriber, and the text written to it. One for every crate's tests, which each had a copy.

use std::sync::{Arc, Mutex, PoisonError};

use tracing_subscriber::fmt::MakeWriter;

/// Log lines written in memory. Clones share the same text.
#[derive(Debug, Clone, Default)]
pub struct CapturedLogs(Arc<Mutex<Vec<u8>>>);

impl CapturedLogs {
    /// Everything written so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(PoisonError::into_inner)).into_owned()
    }
}

impl std::io::Write for CapturedLogs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'w> MakeWriter<'w> for CapturedLogs {
    type Writer = CapturedLogs;

    fn make_writer(&'w self) -> Self::Writer {
        self.clone()
    }
}
