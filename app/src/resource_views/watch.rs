//! A Kubernetes watch from the browser, through the console's own cluster
//! route (same origin: the session cookie goes to the console only, which
//! calls kube-api-proxy with the user's token). It only tells its owner that
//! something changed; the owner asks the server for the new state. Browser only.

use std::cell::Cell;
use std::rc::Rc;

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, ReadableStreamDefaultReader, RequestInit, Response};

/// How a watch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchEnd {
    /// The server closed it (timeout) or the network dropped: start again.
    Closed,
    /// 410: the version is too old; list again, then watch from the new one.
    Gone,
    /// Refused (401/403/404…): do not retry.
    Refused,
}

/// Stops the watch when dropped.
pub struct WatchHandle {
    controller: AbortController,
    stopped: Rc<Cell<bool>>,
}

impl Drop for WatchHandle {
    fn drop(&mut self) {
        self.stopped.set(true);
        self.controller.abort();
    }
}

/// Starts watching `url`; `changed` runs for every event but bookmarks,
/// `ended` once when the stream ends (not after the handle is dropped).
pub fn watch(
    url: &str,
    changed: impl Fn() + 'static,
    ended: impl FnOnce(WatchEnd) + 'static,
) -> Option<WatchHandle> {
    let controller = AbortController::new().ok()?;
    let init = RequestInit::new();
    init.set_signal(Some(&controller.signal()));
    let response = web_sys::window()?.fetch_with_str_and_init(url, &init);
    let stopped = Rc::new(Cell::new(false));
    let alive = stopped.clone();
    leptos::task::spawn_local(async move {
        let end = read(response, &changed, &alive).await;
        if !alive.get() {
            ended(end);
        }
    });
    Some(WatchHandle { controller, stopped })
}

async fn read(response: js_sys::Promise, changed: &dyn Fn(), stopped: &Cell<bool>) -> WatchEnd {
    let Ok(response) = JsFuture::from(response).await.and_then(|r| r.dyn_into::<Response>()) else {
        return WatchEnd::Closed;
    };
    match response.status() {
        200 => {}
        410 => return WatchEnd::Gone,
        500..=599 => return WatchEnd::Closed,
        _ => return WatchEnd::Refused,
    }
    let Some(reader) =
        response.body().and_then(|b| b.get_reader().dyn_into::<ReadableStreamDefaultReader>().ok())
    else {
        return WatchEnd::Closed;
    };
    let Ok(decoder) = web_sys::TextDecoder::new() else { return WatchEnd::Closed };
    let options = web_sys::TextDecodeOptions::new();
    options.set_stream(true);
    let mut buffer = String::new();
    loop {
        if stopped.get() {
            return WatchEnd::Closed;
        }
        let Ok(chunk) = JsFuture::from(reader.read()).await else { return WatchEnd::Closed };
        let done = js_sys::Reflect::get(&chunk, &JsValue::from_str("done")).ok().and_then(|d| d.as_bool());
        if done != Some(false) {
            return WatchEnd::Closed;
        }
        let Ok(value) = js_sys::Reflect::get(&chunk, &JsValue::from_str("value")) else {
            return WatchEnd::Closed;
        };
        let Ok(bytes) = value.dyn_into::<js_sys::Uint8Array>() else { return WatchEnd::Closed };
        let Ok(text) = decoder.decode_with_js_u8_array_and_options(&bytes, &options) else {
            return WatchEnd::Closed;
        };
        buffer.push_str(&text);
        while let Some(end) = buffer.find('\n') {
            let line: String = buffer.drain(..=end).collect();
            match event_type(&line).as_deref() {
                Some("BOOKMARK") | None => {}
                Some("ERROR") => return WatchEnd::Gone,
                Some(_) => changed(),
            }
        }
    }
}

/// The `type` of one watch event line.
fn event_type(line: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    value.get("type")?.as_str().map(str::to_owned)
}
