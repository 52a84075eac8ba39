//! Passes a body on as it arrives — never buffered whole — and stops it when
//! it grows past a cap or goes quiet for longer than an idle timeout. A body
//! that is stopped ends with an error, which the server turns into a reset
//! connection: the client sees a broken transfer, never a truncated success.
#![forbid(unsafe_code)]

use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use http_body_util::BodyExt;

/// Why a body was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    TooLarge {
        limit: usize,
    },
    Idle {
        after: Duration,
    },
    /// Not ended within its total time ([`within`]).
    Slow {
        after: Duration,
    },
    Broken,
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stopped::TooLarge { limit } => write!(f, "body larger than {limit} bytes"),
            Stopped::Idle { after } => write!(f, "body idle for {} s", after.as_secs()),
            Stopped::Slow { after } => write!(f, "body not ended within {} s", after.as_secs()),
            Stopped::Broken => f.write_str("body broken off by the sender"),
        }
    }
}

impl std::error::Error for Stopped {}

/// `body`, streamed with at most `limit` bytes and at most `idle` between two chunks.
pub fn capped<B>(body: B, limit: usize, idle: Duration) -> Body
where
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Send,
{
    let stream = futures::stream::unfold((body, 0usize, false), move |(mut body, seen, done)| async move {
        if done {
            return None;
        }
        loop {
            let next = match tokio::time::timeout(idle, body.frame()).await {
                Err(_) => return Some((Err(Stopped::Idle { after: idle }), (body, seen, true))),
                Ok(None) => return None,
                Ok(Some(Err(_))) => return Some((Err(Stopped::Broken), (body, seen, true))),
                Ok(Some(Ok(frame))) => frame,
            };
            // Trailers are dropped: nothing behind these proxies sends any that matter.
            let Ok(data) = next.into_data() else { continue };
            let seen = seen + data.len();
            if seen > limit {
                return Some((Err(Stopped::TooLarge { limit }), (body, seen, true)));
            }
            return Some((Ok(data), (body, seen, false)));
        }
    });
    Body::from_stream(stream)
}

/// `body`, keeping `guard` alive until the body ends (or is dropped unread): a slot or a
/// permit that counts an answer in flight is given back when the answer is over.
pub fn holding<G: Send + 'static>(body: Body, guard: G) -> Body {
    use futures::StreamExt;
    Body::from_stream(body.into_data_stream().map(move |chunk| {
        let _held = &guard;
        chunk
    }))
}

/// `body`, stopped (with an error) if it has not ended `total` from now: a sender that keeps
/// a trickle going, each chunk within the idle time, cannot hold the answer open for ever.
pub fn within(body: Body, total: Duration) -> Body {
    use futures::StreamExt;
    let deadline = tokio::time::Instant::now() + total;
    let stream =
        futures::stream::unfold((body.into_data_stream(), false), move |(mut body, done)| async move {
            if done {
                return None;
            }
            match tokio::time::timeout_at(deadline, body.next()).await {
                Err(_) => Some((Err(Stopped::Slow { after: total }), (body, true))),
                Ok(None) => None,
                Ok(Some(Err(_))) => Some((Err(Stopped::Broken), (body, true))),
                Ok(Some(Ok(data))) => Some((Ok(data), (body, false))),
            }
        });
    Body::from_stream(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read(body: Body) -> Result<Vec<u8>, String> {
        body.collect().await.map(|c| c.to_bytes().to_vec()).map_err(|e| e.to_string())
    }

    #[tokio::test]
    async fn passes_small_bodies_and_stops_large_ones() {
        let ok = capped(Body::from("hello"), 5, Duration::from_secs(1));
        assert_eq!(read(ok).await.unwrap(), b"hello");
        let big = capped(Body::from("hello!"), 5, Duration::from_secs(1));
        assert!(read(big).await.unwrap_err().contains("larger than 5 bytes"));
    }

    #[tokio::test]
    async fn stops_a_trickle_at_its_total_time_and_passes_a_body_that_ends_in_it() {
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(8);
        let trickle = tokio::spawn(async move {
            // A chunk every 20 ms, each well within any idle time, for ever.
            while tx.send(Ok(Bytes::from_static(b"a"))).await.is_ok() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        let slow = Body::from_stream(tokio_stream_from(rx));
        let started = std::time::Instant::now();
        let err = read(within(capped(slow, 1 << 20, Duration::from_secs(1)), Duration::from_millis(200)))
            .await
            .unwrap_err();
        assert!(err.contains("not ended within"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
        trickle.abort();
        assert_eq!(read(within(Body::from("done"), Duration::from_secs(1))).await.unwrap(), b"done");
    }

    #[tokio::test]
    async fn stops_a_body_that_goes_quiet() {
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(1);
        tx.send(Ok(Bytes::from_static(b"a"))).await.unwrap();
        let slow = Body::from_stream(tokio_stream_from(rx));
        let err = read(capped(slow, 100, Duration::from_millis(50))).await.unwrap_err();
        assert!(err.contains("idle"), "{err}");
        drop(tx);
    }

    fn tokio_stream_from(
        mut rx: tokio::sync::mpsc::Receiver<Result<Bytes, std::io::Error>>,
    ) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> {
        futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
    }
}
