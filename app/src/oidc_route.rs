//! The console's side of OpenID Connect sign-in (authn does the protocol):
//!
//! - `GET /sign-in/oidc/start?next=<path>` asks authn for the authorization URL and a sealed
//!   transaction, keeps the transaction in a cookie of this sign-in's own, named for the
//!   `state` of the URL (`__Host-fundament_oidc_tx_<stamp>_<tag>`,
//!   [`fundament_session::oidc_transaction`]; the browser keeps three at most, the newest) and
//!   sends the browser to the provider. A link, not a form: the console's CSP has
//!   `form-action 'self'`, which Chromium applies to a form's redirects too, so a form could
//!   not lead to the provider.
//! - `GET /sign-in/oidc/callback?code&state` (the redirect URI) hands code, state and the
//!   transaction cookie of that state to authn, clears that cookie (only that one: other
//!   tabs' sign-ins go on), sets the session cookie and the ID token hint, and answers a page
//!   that moves on to the return path by itself. Not a redirect: the session cookie is
//!   `SameSite=Strict`, and a redirect would still belong to the provider's cross-site
//!   navigation, so the browser would not send it on the next page; the page's own
//!   navigation is same-site.
//! - `GET /sign-in/oidc/end-session` (where sign-out leads) ends the provider's session too,
//!   with the ID token as `id_token_hint`, when the provider offers `end_session_endpoint`.
//!
//! Every failure goes to `/sign-in?error=<code>` with one log line naming the reason, never
//! the code, state, transaction or a token.

use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, StatusCode, header};
use serde::Deserialize;

use crate::api::session::{SignInFailure, safe_next};
use crate::state::ConsoleState;

pub const START_PATH: &str = "/sign-in/oidc/start";
pub const CALLBACK_PATH: &str = "/sign-in/oidc/callback";
pub const END_SESSION_PATH: &str = crate::api::session::OIDC_END_SESSION_PATH;

#[derive(Debug, Deserialize)]
pub struct StartQuery {
    #[serde(default)]
    next: String,
    /// Set on the console's own step again ([`start`]): never bounced twice.
    #[serde(default)]
    again: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct CallbackQuery {
    #[serde(default)]
    code: String,
    #[serde(default)]
    state: String,
    #[serde(default)]
    error: Option<String>,
}

fn see_other(location: &str, cookies: &[String]) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    finish(response, cookies)
}

fn finish(mut response: Response, cookies: &[String]) -> Response {
    let headers = response.headers_mut();
    for cookie in cookies {
        if let Ok(value) = HeaderValue::from_str(cookie) {
            headers.append(header::SET_COOKIE, value);
        }
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // The provider never learns which console page the user was on, nor the callback's code.
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// Back to the sign-in page, saying why.
fn failed(failure: SignInFailure, next: &str, cookies: &[String]) -> Response {
    let mut location = format!("/sign-in?error={}", failure.code());
    if next != "/" {
        location.push_str("&next=");
        location.push_str(&crate::api::session::ssr::query_escape(next));
    }
    see_other(&location, cookies)
}

/// A page that goes on to `target` by itself (and offers a link, for the rare browser that
/// does not follow a meta refresh). No script: it works with JavaScript off.
fn onward(target: &str, what: &str, cookies: &[String]) -> Response {
    let target = crate::markup::escape(target);
    let body = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{what}</title>\
         <meta http-equiv=\"refresh\" content=\"0;url={target}\"></head>\
         <body><p>{what}… <a href=\"{target}\">Continue</a></p></body></html>"
    );
    let mut response =
        (StatusCode::OK, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response();
    response.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        ),
    );
    finish(response, cookies)
}

fn one_cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    let cookies = headers.get_all(header::COOKIE);
    match fundament_session::single_cookie(cookies.iter(), name) {
        fundament_session::SessionCookie::One(value) => Some(value.to_owned()),
        _ => None,
    }
}

/// `GET /sign-in/oidc/start`.
/// A session the browser still holds is replaced by the one this sign-in makes: authn revokes
/// it when the sign-in finishes. It is read here because the callback never sees it (a
/// `SameSite=Strict` cookie is not sent on the provider's redirect back), and only a live
/// session goes to authn. Nothing ends before the sign-in does, so a link to this path ends no
/// session by itself.
pub async fn start(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    Query(query): Query<StartQuery>,
) -> Response {
    let next = safe_next(&query.next, &state.console_origin);
    if state.oidc_provider.is_none() {
        return failed(SignInFailure::Unavailable, &next, &[]);
    }
    // Started from another site's link: the browser sent no `SameSite=Strict` session cookie,
    // so the session this sign-in replaces would not be known, nor ended. One step through a
    // page of the console's own (a same-origin navigation) brings it.
    let cross_site = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|site| matches!(site, "cross-site" | "same-site"));
    if cross_site && query.again.is_none() {
        let again =
            format!("/sign-in/oidc/start?next={}&again=1", crate::api::session::ssr::query_escape(&next));
        return onward(&again, "Signing in", &[]);
    }
    let replacing =
        crate::state::session_token_of(&headers).filter(|token| state.sessions.verify(token).is_some());
    let started = match state.sessions.oidc_start(&next, replacing.as_deref()).await {
        Ok(started) => started,
        // Logged by the session authority, which saw authn's answer.
        Err(failure) => return failed(failure, &next, &[]),
    };
    let Some(sign_in_state) = state_of(&started.authorization_url) else {
        tracing::error!("oidc sign-in: authn's authorization URL has no single state");
        return failed(SignInFailure::Failed, &next, &[]);
    };
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let cookies = fundament_session::oidc_start_cookies(
        headers.get_all(header::COOKIE).iter(),
        &sign_in_state,
        // Beside it, where to return: a failure's way back (authn's sealed copy is not opened then).
        &fundament_session::oidc_transaction_value(&started.transaction, &next),
        started.max_age,
        now,
    );
    see_other(&started.authorization_url, &cookies)
}

/// The `state` the provider will return to this sign-in's callback: the one of the
/// authorization URL authn made (which sealed the same into the transaction). `None` without
/// one, or with several (the provider would return one of them: not a URL authn makes).
fn state_of(authorization_url: &str) -> Option<String> {
    let url = url::Url::parse(authorization_url).ok()?;
    let mut states = url.query_pairs().filter(|(name, _)| name == "state").map(|(_, value)| value);
    match (states.next(), states.next()) {
        (Some(state), None) if !state.is_empty() => Some(state.into_owned()),
        _ => None,
    }
}

/// `GET /sign-in/oidc/callback`.
pub async fn callback(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    Query(query): Query<CallbackQuery>,
) -> Response {
    // The transaction of this callback's state is used once, whatever happens next; other
    // sign-ins' (other tabs of this browser) stay for their own callbacks. The provider returns
    // the state with an error too.
    let found =
        fundament_session::oidc_callback_transaction(headers.get_all(header::COOKIE).iter(), &query.state);
    let clear = found.clear;
    // Where a failure goes back to: the page the sign-in was started for, as its start kept it
    // (checked again: the cookie is not sealed). A success takes authn's sealed copy.
    let back =
        found.return_path.map_or_else(|| "/".to_owned(), |next| safe_next(&next, &state.console_origin));
    if state.oidc_provider.is_none() {
        return failed(SignInFailure::Unavailable, &back, &clear);
    }
    if let Some(error) = query.error.as_deref() {
        // RFC 6749 §4.1.2.1: a registered code; only that is logged, never the description.
        let error: String = error.chars().filter(char::is_ascii_graphic).take(64).collect();
        tracing::warn!(reason = "provider-error", %error, "oidc sign-in: the provider answered an error");
        let failure =
            if error == "access_denied" { SignInFailure::Denied } else { SignInFailure::ProviderError };
        return failed(failure, &back, &clear);
    }
    let fundament_session::SessionCookie::One(transaction) = found.cookie else {
        tracing::warn!(
            reason = "transaction-invalid",
            "oidc sign-in: callback without one transaction cookie of its state"
        );
        return failed(SignInFailure::TransactionInvalid, &back, &clear);
    };
    match state.sessions.oidc_finish(&query.code, &query.state, transaction).await {
        Ok(signed_in) => {
            let next = safe_next(&signed_in.return_path, &state.console_origin);
            let max_age = signed_in.session.max_age;
            let session = fundament_session::cookie_header(Some(&signed_in.session.token), max_age);
            if !fundament_session::fits_a_browser(&session) {
                // A browser drops it without a word and the sign-in would loop; authn bounds
                // what goes into the token, so this is a fault to name, not a user's.
                tracing::error!(
                    bytes = session.len(),
                    "oidc sign-in: the session cookie is too large to keep"
                );
                return failed(SignInFailure::Failed, &back, &clear);
            }
            let mut cookies = clear;
            cookies.push(session);
            let id = fundament_session::oidc_id_token_cookie(Some(&signed_in.id_token), max_age);
            if fundament_session::fits_a_browser(&id) {
                cookies.push(id);
            } else {
                // Kept only as the hint that ends the provider's session at sign-out: without it
                // sign-out ends ours and leaves the provider's for the provider to time out.
                tracing::warn!(
                    bytes = signed_in.id_token.len(),
                    "oidc sign-in: the provider's ID token is too large for a cookie; sign-out will not end the provider's session"
                );
            }
            tracing::info!("signed in through the identity provider");
            onward(&next, "Signed in", &cookies)
        }
        // Whatever the failure, the transaction of this state is used up. `state-mismatch`
        // included: a cookie named for this state whose transaction holds another was set by
        // no start of ours.
        Err(failure) => failed(failure, &back, &clear),
    }
}

/// `GET /sign-in/oidc/end-session`: the last step of sign-out. When authn gives no end-session
/// URL (it is down, or the provider offers none), the ID token hint stays (a retry from the
/// sign-in page can still end the provider's session) and the sign-in page says the provider's
/// session may still be open; `pending` (from sign-out) is not lost meanwhile: the provider's
/// open session is the graver news on a shared machine, and the console goes on telling authn.
pub async fn end_session(
    State(state): State<ConsoleState>,
    Query(query): Query<EndSessionQuery>,
    headers: HeaderMap,
) -> Response {
    let hint = one_cookie(&headers, fundament_session::OIDC_ID_TOKEN_COOKIE);
    // Only after our own sign-out: with a live session this is a stray link, not a sign-out.
    let live = crate::state::session_token_of(&headers).and_then(|t| state.sessions.verify(&t)).is_some();
    // The ID token is cleared only by the step it is kept for. Without it (another site's
    // navigation here: the Strict cookie stays behind, yet a top-level answer may still set one)
    // or with a live session, the answer clears nothing; else any site could make the user's
    // next sign-out leave the provider's session open.
    let used = hint.is_some() && !live;
    let url = match (&hint, live, state.oidc_provider.is_some()) {
        (Some(hint), false, true) => state.sessions.oidc_end_session_url(hint).await,
        _ => None,
    };
    match url {
        // A page, not a redirect: sign-out is a form post, and `form-action 'self'` covers its
        // redirects; the page's own navigation to the provider is not a form's.
        Some(url) => onward(&url, "Signing out", &[fundament_session::oidc_id_token_cookie(None, 0)]),
        // The provider's session could not be ended: the hint is kept for a retry.
        None if used && state.oidc_provider.is_some() => {
            tracing::warn!(
                pending = query.pending.is_some(),
                "sign-out: the identity provider's session could not be ended"
            );
            see_other(&format!("/sign-in?error={}", SignInFailure::ProviderSignOutFailed.code()), &[])
        }
        None => {
            let clear: Vec<String> =
                if used { vec![fundament_session::oidc_id_token_cookie(None, 0)] } else { Vec::new() };
            match query.pending {
                Some(_) => {
                    see_other(&format!("/sign-in?error={}", SignInFailure::SignOutPending.code()), &clear)
                }
                None => see_other("/sign-in", &clear),
            }
        }
    }
}

/// The query of [`end_session`]: `pending` when sign-out could not tell authn yet.
#[derive(Debug, Default, Deserialize)]
pub struct EndSessionQuery {
    pending: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_onward_page_escapes_its_target_and_forbids_everything_else() {
        let response = onward("/a\"><script>x</script>", "Signed in", &["c=1".into()]);
        let csp = response.headers()[header::CONTENT_SECURITY_POLICY].to_str().unwrap().to_owned();
        assert!(csp.starts_with("default-src 'none'"), "{csp}");
        assert_eq!(response.headers()[header::CACHE_CONTROL], "no-store");
        assert_eq!(response.headers()[header::REFERRER_POLICY], "no-referrer");
        assert_eq!(response.headers()[header::SET_COOKIE], "c=1");
    }

    /// A start from another site's link goes once through a page of the console's own, which
    /// brings the session cookie (and so the session the sign-in replaces); from the console's
    /// pages, a typed URL or a script without fetch metadata, it goes to the provider at once.
    #[tokio::test]
    async fn a_sign_in_started_from_another_site_steps_through_the_console_once() {
        let mut state = crate::resource_views::api::scope_tests::state_with_gateway("http://127.0.0.1:9");
        state.oidc_provider = Some("Test IdP".into());
        let start_with = |site: Option<&'static str>, again: Option<&str>| {
            let state = state.clone();
            let mut headers = HeaderMap::new();
            if let Some(site) = site {
                headers.insert("sec-fetch-site", HeaderValue::from_static(site));
            }
            let query = StartQuery { next: "/clusters?x=1".into(), again: again.map(str::to_owned) };
            async move { start(State(state), headers, Query(query)).await }
        };
        for site in ["cross-site", "same-site"] {
            let response = start_with(Some(site), None).await;
            assert_eq!(response.status(), StatusCode::OK, "{site}");
            let body = axum::body::to_bytes(response.into_body(), 10_000).await.unwrap();
            let body = String::from_utf8(body.to_vec()).unwrap();
            assert!(body.contains("url=/sign-in/oidc/start?next=/clusters%3Fx%3D1&amp;again=1"), "{body}");
        }
        // Otherwise (this test's sessions have no OpenID Connect: the sign-in page says so).
        for (site, again) in
            [(Some("same-origin"), None), (Some("none"), None), (None, None), (Some("cross-site"), Some("1"))]
        {
            let response = start_with(site, again).await;
            assert_eq!(response.status(), StatusCode::SEE_OTHER, "{site:?} {again:?}");
        }
    }

    type Boxed<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

    /// authn for these tests: start `n` answers state `state-n` and transaction `sealed-n`;
    /// every callback answers `finish` (`None`: signed in), and the transactions handed over
    /// are kept.
    #[derive(Debug, Default)]
    struct Authn {
        starts: std::sync::atomic::AtomicUsize,
        finish: Option<SignInFailure>,
        finished_with: std::sync::Mutex<Vec<String>>,
    }

    impl crate::state::SessionAuthority for Authn {
        fn dev_sign_in<'a>(
            &'a self,
            _: &'a str,
        ) -> Boxed<'a, Result<crate::state::IssuedSession, crate::state::SignInError>> {
            Box::pin(async { Err(crate::state::SignInError::Failed) })
        }
        fn verify(&self, _: &str) -> Option<crate::state::SessionUser> {
            None
        }
        fn sign_out<'a>(&'a self, _: &'a str) -> Boxed<'a, crate::state::SignOutOutcome> {
            Box::pin(async { crate::state::SignOutOutcome::Ended })
        }
        fn oidc_start<'a>(
            &'a self,
            _: &'a str,
            _: Option<&'a str>,
        ) -> Boxed<'a, Result<crate::state::OidcStarted, SignInFailure>> {
            let n = self.starts.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Box::pin(async move {
                Ok(crate::state::OidcStarted {
                    authorization_url: format!(
                        "https://idp.example/authorize?response_type=code&client_id=console&state=state-{n}&nonce=x"
                    ),
                    transaction: format!("sealed-{n}"),
                    max_age: 600,
                })
            })
        }
        fn oidc_finish<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
            transaction: &'a str,
        ) -> Boxed<'a, Result<crate::state::OidcSignedIn, SignInFailure>> {
            self.finished_with.lock().unwrap().push(transaction.to_owned());
            let finish = self.finish;
            Box::pin(async move {
                match finish {
                    Some(failure) => Err(failure),
                    None => Ok(crate::state::OidcSignedIn {
                        session: crate::state::IssuedSession { token: "user-token".into(), max_age: 3600 },
                        id_token: "id-token".into(),
                        return_path: "/clusters".into(),
                    }),
                }
            })
        }
    }

    fn console_with(authn: std::sync::Arc<Authn>) -> ConsoleState {
        let mut state = crate::resource_views::api::scope_tests::state_with_gateway("http://127.0.0.1:9");
        state.sessions = authn;
        state.oidc_provider = Some("Test IdP".into());
        state
    }

    const TX: &str = "__Host-fundament_oidc_tx";

    /// A browser's cookies for the console: each answer's `Set-Cookie` applied, sent back as
    /// the `Cookie` header.
    #[derive(Debug, Default)]
    struct Jar(Vec<(String, String)>);

    impl Jar {
        fn apply(&mut self, response: &Response) {
            for set in response.headers().get_all(header::SET_COOKIE) {
                let set = set.to_str().unwrap();
                let (pair, attributes) = set.split_once(';').unwrap();
                let (name, value) = pair.split_once('=').unwrap();
                self.0.retain(|(held, _)| held != name);
                if !attributes.contains("Max-Age=0") {
                    self.0.push((name.to_owned(), value.to_owned()));
                }
            }
        }
        fn headers(&self) -> HeaderMap {
            let mut headers = HeaderMap::new();
            headers.insert("sec-fetch-site", HeaderValue::from_static("same-origin"));
            if !self.0.is_empty() {
                let cookie = self.0.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join("; ");
                headers.insert(header::COOKIE, cookie.parse().unwrap());
            }
            headers
        }
        /// The transaction cookies held: name and value.
        fn transactions(&self) -> Vec<(String, String)> {
            self.0.iter().filter(|(name, _)| name.starts_with(TX)).cloned().collect()
        }
        async fn start(&mut self, state: &ConsoleState) -> Response {
            let query = StartQuery { next: "/clusters".into(), again: None };
            let response = start(State(state.clone()), self.headers(), Query(query)).await;
            assert_eq!(response.status(), StatusCode::SEE_OTHER);
            self.apply(&response);
            response
        }
    }

    /// The transaction cookie a start set, by name.
    fn set_by(response: &Response) -> String {
        let set = response.headers().get_all(header::SET_COOKIE);
        let own =
            set.iter().map(|c| c.to_str().unwrap()).filter(|c| !c.contains("Max-Age=0")).collect::<Vec<_>>();
        assert_eq!(own.len(), 1, "{own:?}");
        assert!(own[0].ends_with("; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=600"), "{}", own[0]);
        own[0].split('=').next().unwrap().to_owned()
    }

    /// The cookie names an answer clears.
    fn cleared_by(response: &Response) -> Vec<String> {
        let set = response.headers().get_all(header::SET_COOKIE);
        set.iter()
            .map(|c| c.to_str().unwrap())
            .filter(|c| c.ends_with("Max-Age=0"))
            .map(|c| c.split('=').next().unwrap().to_owned())
            .collect()
    }

    /// Another site can make a browser start sign-ins over and over: however many, it never
    /// holds more than three transactions (the newest), so its `Cookie` header stays small.
    #[tokio::test]
    async fn ten_starts_in_one_browser_leave_three_transactions_the_newest_ones() {
        let state = console_with(Default::default());
        let mut jar = Jar(vec![("theme".into(), "dark".into())]);
        let mut names = Vec::new();
        for _ in 0..10 {
            let response = jar.start(&state).await;
            names.push(set_by(&response));
            assert!(jar.transactions().len() <= 3, "{jar:?}");
        }
        let held: Vec<_> = jar.transactions().into_iter().map(|(name, _)| name).collect();
        assert_eq!(held, names[7..], "the newest three");
        assert_eq!(jar.0.len(), 4, "and nothing else went: {jar:?}");
        // Each under a name of its own (not the one cookie of earlier consoles).
        for name in &names {
            assert!(name.starts_with("__Host-fundament_oidc_tx_"), "{name}");
        }
    }

    /// Two tabs sign in at once: each callback finishes with its own transaction (found by the
    /// state the provider returns) and ends that one only, whatever the outcome, so the other
    /// tab's sign-in can still finish. A state of no sign-in here finds nothing and clears
    /// nothing.
    #[tokio::test]
    async fn a_callback_uses_and_clears_only_the_transaction_of_its_state() {
        let outcomes = [
            None,
            Some(SignInFailure::StateMismatch),
            Some(SignInFailure::CodeRejected),
            Some(SignInFailure::TransactionExpired),
        ];
        for finish in outcomes {
            for provider_error in [None, Some("access_denied")] {
                let authn = std::sync::Arc::new(Authn { finish, ..Default::default() });
                let state = console_with(authn.clone());
                let mut jar = Jar::default();
                jar.start(&state).await;
                let second = set_by(&jar.start(&state).await);
                jar.start(&state).await;
                let before = jar.transactions();
                let query = CallbackQuery {
                    code: "c".into(),
                    state: "state-1".into(),
                    error: provider_error.map(str::to_owned),
                };
                let response = callback(State(state.clone()), jar.headers(), Query(query)).await;
                let case = format!("{finish:?} {provider_error:?}");
                assert_eq!(cleared_by(&response), std::slice::from_ref(&second), "{case}");
                let handed: Vec<String> = authn.finished_with.lock().unwrap().clone();
                match provider_error {
                    Some(_) => assert!(handed.is_empty(), "{case}"),
                    None => assert_eq!(handed, ["sealed-1"], "{case}"),
                }
                let location =
                    response.headers().get(header::LOCATION).map(|l| l.to_str().unwrap().to_owned());
                match (finish, provider_error) {
                    (None, None) => {
                        assert_eq!(response.status(), StatusCode::OK, "{case}");
                        let set = response.headers().get_all(header::SET_COOKIE);
                        assert!(
                            set.iter().any(|c| c
                                .to_str()
                                .unwrap()
                                .starts_with("__Host-fundament_auth=user-token;"))
                        );
                    }
                    // Back to the sign-in page for the page the sign-in was started for (its
                    // start kept it beside the transaction; authn was handed only the latter).
                    (_, Some(_)) => {
                        assert_eq!(
                            location.as_deref(),
                            Some("/sign-in?error=denied&next=/clusters"),
                            "{case}"
                        )
                    }
                    (Some(failure), None) => assert_eq!(
                        location,
                        Some(format!("/sign-in?error={}&next=/clusters", failure.code())),
                        "{case}"
                    ),
                }
                jar.apply(&response);
                let others: Vec<_> = before.into_iter().filter(|(name, _)| *name != second).collect();
                assert_eq!(jar.transactions(), others, "{case}: the other tabs' stay");
            }
        }

        // No sign-in of this browser has that state: refused, and the others go on.
        let authn = std::sync::Arc::new(Authn::default());
        let state = console_with(authn.clone());
        let mut jar = Jar::default();
        jar.start(&state).await;
        jar.start(&state).await;
        for (state_of_callback, error) in [("state-7", None), ("", None), ("state-7", Some("access_denied"))]
        {
            let query = CallbackQuery {
                code: "c".into(),
                state: state_of_callback.into(),
                error: error.map(str::to_owned),
            };
            let response = callback(State(state.clone()), jar.headers(), Query(query)).await;
            assert_eq!(cleared_by(&response), Vec::<String>::new(), "{state_of_callback:?} {error:?}");
            if error.is_none() {
                assert_eq!(response.headers()[header::LOCATION], "/sign-in?error=transaction-invalid");
            }
        }
        assert!(authn.finished_with.lock().unwrap().is_empty());
    }

    #[test]
    fn the_state_of_the_authorization_url_names_the_cookie() {
        assert_eq!(
            state_of("https://idp.example/a?client_id=c&state=abc%2Bd&nonce=n").as_deref(),
            Some("abc+d")
        );
        for url in [
            "https://idp.example/a?client_id=c",
            "https://idp.example/a?state=",
            "https://idp.example/a?state=a&state=b",
            "not a url",
        ] {
            assert_eq!(state_of(url), None, "{url}");
        }
    }

    #[test]
    fn failures_keep_a_safe_next() {
        let response = failed(SignInFailure::StateMismatch, "/clusters", &[]);
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        assert_eq!(response.headers()[header::LOCATION], "/sign-in?error=state-mismatch&next=/clusters");
        let response = failed(SignInFailure::Denied, "/", &[]);
        assert_eq!(response.headers()[header::LOCATION], "/sign-in?error=denied");
    }
}
