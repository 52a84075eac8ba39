//! The signal that stops a command that serves: SIGTERM or Ctrl-C. Its own module, so its log
//! line's target says what it is (`server::signal`) whichever command is stopping.

/// SIGTERM or Ctrl-C (SIGINT): handled from the moment this is called, not from its first
/// poll, so a signal that arrives while the stack is still starting is not the default action
/// (an abrupt exit without a drain) but a graceful stop once it is up. Call it before binding.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{SignalKind, signal};
    let terminate = signal(SignalKind::terminate());
    let interrupt = signal(SignalKind::interrupt());
    async move {
        let received = |registered: std::io::Result<tokio::signal::unix::Signal>| async move {
            match registered {
                Ok(mut signal) => {
                    signal.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            () = received(terminate) => {},
            () = received(interrupt) => {},
        }
        tracing::info!("shutting down");
    }
}

#[cfg(test)]
mod tests {

    /// The line names the signal's module, not `server::dev`: the standalone services log it too.
    #[tokio::test]
    async fn the_shutting_down_line_has_the_signal_target() {
        let buffer = fundament_telemetry::CapturedLogs::default();
        let lines = buffer.clone();
        let sub = fundament_telemetry::subscriber(
            fundament_telemetry::LogFormat::Json,
            tracing_subscriber::EnvFilter::new("info"),
            move || lines.clone(),
        );
        let _guard = tracing::subscriber::set_default(sub);
        // Handled from here on: the SIGINT below does not end the test process.
        let shutdown = super::shutdown_signal();
        let sent = std::process::Command::new("kill")
            .args(["-INT", &std::process::id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        tokio::time::timeout(std::time::Duration::from_secs(10), shutdown).await.unwrap();
        let text = buffer.text();
        let json: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(json["message"], "shutting down", "{text}");
        assert_eq!(json["target"], "server::signal", "{text}");
    }
}
