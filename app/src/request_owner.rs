//! Each request keeps its own reactive owner across awaits.
//!
//! Leptos finds contexts (the request's headers, its session, its response options, the
//! `<head>` it writes into) through the *current* owner, a thread-local. Its server rendering
//! sets that thread-local when it makes a request's root owner (`Owner::new_root`) and never
//! puts the previous one back, and some of its code reads it again after an `.await`
//! (`leptos_integration_utils`'s `from_app` looks up the split manifest and the `<head>` to add
//! the lazy routes' preload links to). On a multi-threaded runtime a request resumed on
//! another worker then sees whichever request last set that worker's thread-local:
//! - its preload links go into another request's page, or nowhere;
//! - a server function's owner (`Owner::new()`, a child of the current one) is made a child of
//!   another request's root, so a context it did not provide itself would be read from that
//!   request, and that request's end cleans it up mid-call.
//!
//! [`own_owner`] wraps every request (its handler and its body): each poll starts with the
//! owner this request left at the end of its previous poll (none before its first) and puts
//! the worker's previous owner back when it returns. The owner is the request's own, as on a
//! single thread where nothing else runs between two polls.

use axum::{
    body::{Body, Bytes, HttpBody},
    extract::Request,
    middleware::Next,
    response::Response,
};
use leptos::reactive::owner::Owner;
use std::{
    future::Future,
    pin::Pin,
    task::{Context, Poll},
};

/// Middleware (`axum::middleware::from_fn`): the request's handler and its response body
/// are polled with the request's own owner, see the module's documentation.
pub async fn own_owner(request: Request, next: Next) -> Response {
    let mut owned = OwnedBy::new(Box::pin(next.run(request)));
    let response = (&mut owned).await;
    // The body goes on with the owner its handler left (the page's root, while it streams).
    let owner = owned.owner;
    response.map(|body| Body::new(OwnedBy { inner: body, owner }))
}

/// A future or body polled with its own current owner (see the module's documentation).
pub struct OwnedBy<T> {
    inner: T,
    /// The current owner at the end of the last poll.
    owner: Option<Owner>,
}

impl<T> OwnedBy<T> {
    /// Starts without an owner: whatever another task left on this thread is not this one's.
    pub fn new(inner: T) -> Self {
        Self { inner, owner: None }
    }

    /// Runs `poll` with this one's owner as the current one, keeps the owner it leaves and
    /// puts the thread's previous owner back.
    fn polled<R>(&mut self, poll: impl FnOnce(&mut T) -> R) -> R {
        // Put back when dropped: after the poll, or while a panic in it unwinds.
        let _previous = PutBack(Owner::current());
        make_current(self.owner.as_ref());
        let result = poll(&mut self.inner);
        self.owner = Owner::current();
        result
    }
}

/// The thread's owner before a poll, made current again when dropped.
struct PutBack(Option<Owner>);

impl Drop for PutBack {
    fn drop(&mut self) {
        make_current(self.0.as_ref());
    }
}

/// Makes `owner` the thread's current owner, or leaves none.
fn make_current(owner: Option<&Owner>) {
    match owner {
        Some(owner) => owner.set(),
        None => {
            if let Some(current) = Owner::current() {
                current.unset();
            }
        }
    }
}

impl<F: Future + Unpin> Future for OwnedBy<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.get_mut().polled(|inner| Pin::new(inner).poll(cx))
    }
}

impl HttpBody for OwnedBy<Body> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        self.get_mut().polled(|inner| Pin::new(inner).poll_frame(cx))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use leptos::prelude::{provide_context, use_context};
    use std::sync::Arc;
    use tokio::sync::Barrier;

    /// What a request of the server's rendering does: makes its root owner (which becomes the
    /// thread's current one), gives it a context, waits for something, and reads its context
    /// again through the current owner.
    ///
    /// Returns what it read and its root (kept until both requests are done, as a streaming
    /// response keeps it).
    async fn request(name: &'static str, both_started: Arc<Barrier>) -> (Option<&'static str>, Owner) {
        let root = Owner::new_root(None);
        root.with(|| provide_context(name));
        // The other request makes its root on this thread while this one waits.
        both_started.wait().await;
        tokio::task::yield_now().await;
        (use_context::<&'static str>(), root)
    }

    #[tokio::test]
    async fn a_request_resumed_after_another_started_sees_its_own_owner() {
        let barrier = Arc::new(Barrier::new(2));
        let ((a, _), (b, _)) = tokio::join!(
            OwnedBy::new(Box::pin(request("alice", barrier.clone()))),
            OwnedBy::new(Box::pin(request("bob", barrier))),
        );
        assert_eq!((a, b), (Some("alice"), Some("bob")));
        assert!(Owner::current().is_none(), "no request's owner is left on the thread");
    }

    #[tokio::test]
    async fn unwrapped_the_first_request_sees_the_second_ones_owner() {
        // The failure the wrapper exists for, shown on the same two requests. Should Leptos
        // put the previous owner back one day, this fails, and the wrapper may be unneeded.
        let barrier = Arc::new(Barrier::new(2));
        let ((a, _), (b, _)) = tokio::join!(request("alice", barrier.clone()), request("bob", barrier));
        assert_eq!((a, b), (Some("bob"), Some("bob")));
        if let Some(owner) = Owner::current() {
            owner.unset();
        }
    }

    #[tokio::test]
    async fn a_new_owner_in_a_request_has_no_parent_from_another_request() {
        let left_behind = Owner::new_root(None);
        left_behind.with(|| provide_context("someone else's"));
        left_behind.set();
        let seen = OwnedBy::new(Box::pin(async {
            // What a server function's handler does first.
            let owner = Owner::new();
            owner.with(use_context::<&'static str>)
        }))
        .await;
        assert_eq!(seen, None);
        assert_eq!(Owner::current(), Some(left_behind.clone()), "the thread's owner is put back");
        left_behind.unset();
    }

    #[tokio::test]
    async fn a_poll_that_panics_still_puts_the_threads_owner_back() {
        let left_behind = Owner::new_root(None);
        left_behind.set();
        let mut panicking = OwnedBy::new(Box::pin(async {
            let _root = Owner::new_root(None);
            panic!("a handler that panics");
        }));
        let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let waker = futures::task::noop_waker();
            let _ = Pin::new(&mut panicking).poll(&mut Context::from_waker(&waker));
        }));
        assert!(polled.is_err());
        assert_eq!(Owner::current(), Some(left_behind.clone()));
        left_behind.unset();
    }
}
