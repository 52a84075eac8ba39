//! The OpenFGA switch: a `can_view` checker that fails its checks as the real OpenFGA client
//! ([`fundament_fga::OpenFgaClient`]) fails them when OpenFGA is down, restarting, slow or
//! answering an error status, so every service's handling of it can be tried in mock mode.

use std::sync::Arc;
use std::time::Duration;

use fundament_fga::{CanView, FgaError};
use futures::future::BoxFuture;

use crate::{Effect, Switch};

/// `inner`'s checks, through the OpenFGA switch:
///
/// | fault | a check |
/// |---|---|
/// | none | `inner` answers |
/// | down, restarting | fails at once with [`FgaError::Transport`], as a refused connection does |
/// | slow | waits, then `inner` answers; past the timeout (the real client's 5 s unless set) it fails with [`FgaError::Timeout`] |
/// | status N | fails with [`FgaError::Status`] N |
///
/// A `slow` switch is bounded the way the real client bounds a slow OpenFGA, so a delay longer
/// than the timeout is a timeout, never a hang.
pub struct FaultyCanView {
    inner: Arc<dyn CanView>,
    switch: Switch,
    timeout: Duration,
}

impl FaultyCanView {
    /// `inner` behind `switch`, with the real client's timeout ([`fundament_fga::DEFAULT_TIMEOUT`]).
    pub fn new(inner: Arc<dyn CanView>, switch: Switch) -> Self {
        Self { inner, switch, timeout: fundament_fga::DEFAULT_TIMEOUT }
    }

    /// The same with another timeout (a real client configured with another, a test).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

impl CanView for FaultyCanView {
    fn can_view<'a>(
        &'a self,
        user_id: &'a str,
        cluster_id: &'a str,
    ) -> BoxFuture<'a, Result<bool, FgaError>> {
        Box::pin(async move {
            // Read before the effect: a flip between the two reads gives one of the two
            // settings' failures, which is all a check racing a flip can expect.
            let unreachable = self.switch.unreachable();
            match self.switch.effect() {
                Effect::Pass => self.inner.can_view(user_id, cluster_id).await,
                Effect::Delay(wait) => tokio::time::timeout(self.timeout, async {
                    tokio::time::sleep(wait).await;
                    self.inner.can_view(user_id, cluster_id).await
                })
                .await
                .map_err(|_| FgaError::Timeout(self.timeout))?,
                Effect::Refuse(refusal) if unreachable => Err(FgaError::Transport(refusal.message)),
                Effect::Refuse(refusal) => {
                    Err(FgaError::Status { status: refusal.status, body: refusal.message })
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Fault, Service};
    use std::time::Instant;

    /// Everyone may view everything: any failure is the switch's.
    struct Yes;

    impl CanView for Yes {
        fn can_view<'a>(&'a self, _: &'a str, _: &'a str) -> BoxFuture<'a, Result<bool, FgaError>> {
            Box::pin(async { Ok(true) })
        }
    }

    fn checker(switch: &Switch) -> FaultyCanView {
        FaultyCanView::new(Arc::new(Yes), switch.clone())
    }

    #[tokio::test]
    async fn each_fault_fails_a_check_as_the_real_client_would_and_none_passes_it() {
        let switch = Switch::new(Service::OpenFga);
        let fga = checker(&switch);
        assert!(fga.can_view("alice", "c").await.expect("passes"));
        switch.set(Fault::Down);
        let down = fga.can_view("alice", "c").await.expect_err("down");
        assert!(
            matches!(&down, FgaError::Transport(m) if m.starts_with("openfga is down (development fault switch: PUT /dev/faults/openfga")),
            "{down}"
        );
        switch.set(Fault::Status { status: 500 });
        let status = fga.can_view("alice", "c").await.expect_err("status");
        assert!(matches!(&status, FgaError::Status { status, .. } if status.as_u16() == 500), "{status}");
        switch.set(Fault::None);
        assert!(fga.can_view("alice", "c").await.expect("passes again"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_restart_refuses_checks_until_it_is_over() {
        let switch = Switch::new(Service::OpenFga);
        let fga = checker(&switch);
        switch.set(Fault::Restarting { seconds: 3 });
        let error = fga.can_view("alice", "c").await.expect_err("restarting");
        assert!(matches!(&error, FgaError::Transport(m) if m.contains("restarting")), "{error}");
        tokio::time::sleep(Duration::from_secs(4)).await;
        assert!(fga.can_view("alice", "c").await.expect("back"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_check_answers_after_its_delay_and_times_out_past_the_timeout() {
        let switch = Switch::new(Service::OpenFga);
        let fga = checker(&switch);
        switch.set(Fault::Slow { delay_ms: 3_000 });
        let started = tokio::time::Instant::now();
        assert!(fga.can_view("alice", "c").await.expect("within the 5 s"));
        assert_eq!(started.elapsed().as_secs(), 3);

        switch.set(Fault::Slow { delay_ms: 60_000 });
        let started = tokio::time::Instant::now();
        let error = fga.can_view("alice", "c").await.expect_err("past the timeout");
        assert!(matches!(error, FgaError::Timeout(after) if after == fundament_fga::DEFAULT_TIMEOUT));
        assert_eq!(started.elapsed().as_secs(), fundament_fga::DEFAULT_TIMEOUT.as_secs());
    }

    #[tokio::test]
    async fn the_timeout_can_be_set() {
        let switch = Switch::new(Service::OpenFga);
        let fga = checker(&switch).with_timeout(Duration::from_millis(50));
        switch.set(Fault::Slow { delay_ms: 10_000 });
        let started = Instant::now();
        let error = fga.can_view("alice", "c").await.expect_err("past the timeout");
        assert!(matches!(error, FgaError::Timeout(after) if after == Duration::from_millis(50)));
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    }
}
