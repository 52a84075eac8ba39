//! How the browser calls the console's server functions: Leptos's `fetch` client, with a limit
//! on the wait for an answer. A connection the network lost without a word (a laptop's sleep,
//! a NAT or proxy forgetting it) fails no request by itself for many minutes, and a page would
//! show "Loading" all that while; past [`ANSWER_WITHIN`] the call is aborted and fails as a
//! transport error ([`TIMED_OUT`]), which the page shows and, for a read, tries again.

use leptos::server_fn::client::Client;
use leptos::server_fn::client::browser::BrowserClient;
use leptos::server_fn::error::FromServerFnError;
use leptos::server_fn::request::browser::BrowserRequest;
use leptos::server_fn::response::browser::BrowserResponse;

/// Longer than any server function takes when the console answers: each of its calls has 10 s
/// (`plugins::backend`), a user's turn waits 5 s at most, and an audit tail holds 5 s.
pub const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(45);

/// What a call given up on carries (`crate::error` says it in words).
pub const TIMED_OUT: &str = "no answer in time";

/// [`BrowserClient`], giving up on a call without an answer after [`ANSWER_WITHIN`].
pub struct PatientClient;

impl<E, InputStreamError, OutputStreamError> Client<E, InputStreamError, OutputStreamError> for PatientClient
where
    E: FromServerFnError,
    InputStreamError: FromServerFnError,
    OutputStreamError: FromServerFnError,
{
    type Request = BrowserRequest;
    type Response = BrowserResponse;

    #[cfg(not(feature = "hydrate"))]
    fn send(req: Self::Request) -> impl Future<Output = Result<Self::Response, E>> + Send {
        // The server runs its functions in place: nothing is sent from there.
        <BrowserClient as Client<E, InputStreamError, OutputStreamError>>::send(req)
    }

    #[cfg(feature = "hydrate")]
    fn send(req: Self::Request) -> impl Future<Output = Result<Self::Response, E>> + Send {
        use futures::future::{Either, select};
        use leptos::server_fn::error::ServerFnErrorErr;
        send_wrapper::SendWrapper::new(async move {
            let call = <BrowserClient as Client<E, InputStreamError, OutputStreamError>>::send(req);
            match select(Box::pin(call), Box::pin(sleep(ANSWER_WITHIN))).await {
                Either::Left((answer, _)) => answer,
                // Dropping the call aborts its fetch.
                Either::Right(((), _call)) => {
                    Err(E::from_server_fn_error(ServerFnErrorErr::Request(TIMED_OUT.into())))
                }
            }
        })
    }

    fn open_websocket(
        path: &str,
    ) -> impl Future<
        Output = Result<
            (
                impl futures::Stream<Item = Result<leptos::server_fn::Bytes, leptos::server_fn::Bytes>>
                + Send
                + 'static,
                impl futures::Sink<leptos::server_fn::Bytes> + Send + 'static,
            ),
            E,
        >,
    > + Send {
        <BrowserClient as Client<E, InputStreamError, OutputStreamError>>::open_websocket(path)
    }

    fn spawn(future: impl Future<Output = ()> + Send + 'static) {
        <BrowserClient as Client<E, InputStreamError, OutputStreamError>>::spawn(future)
    }
}

/// Resolves after `wait` (the page's own timer, so a test's clock moves it too).
#[cfg(feature = "hydrate")]
async fn sleep(wait: std::time::Duration) {
    let ms = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX);
    let timer = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(window) = web_sys::window() {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(timer).await;
}
