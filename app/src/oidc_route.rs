//! The console's side of OpenID Connect sign-in (authn does the protocol):
//!
//! - `GET /sign-in/oidc/start?next=<path>` asks authn for the authorization URL and a sealed
//!   transaction, keeps the transaction in `__Host-fundament_oidc_tx` and sends the browser to
//!   the provider. A link, not a form: the console's CSP has `form-action 'self'`, which
//!   Chromium applies to a form's redirects too, so a form could not lead to the provider.
//! - `GET /sign-in/oidc/callback?code&state` (the redirect URI) hands code, state and the
//!   transaction to authn, sets the session cookie and the ID token hint, and answers a page
//!   that moves on to the return path by itself. Not a redirect: the session cookie is
//!   `SameSite=Strict`, and a redirect would still belong to the provider's cross-site
//!   navigation, so the browser would not send it on the next page; the page's own
//!   navigation is same-site.
//! - `GET /sign-in/oidc/end-session` (where sign-out leads) ends the provider's session too,
//!   with the ID token as `id_token_hint`, when the provider offers `end_session_endpoint`.
//!
//! Every failure goes to `/sign-in?error=<code>` with one log line naming the reason, never
//! the code, state, transaction or a token.

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
    match state.sessions.oidc_start(&next, replacing.as_deref()).await {
        Ok(started) => see_other(
            &started.authorization_url,
            &[fundament_session::oidc_transaction_cookie(Some(&started.transaction), started.max_age)],
        ),
        // Logged by the session authority, which saw authn's answer.
        Err(failure) => failed(failure, &next, &[]),
    }
}

/// `GET /sign-in/oidc/callback`.
pub async fn callback(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    Query(query): Query<CallbackQuery>,
) -> Response {
    // The transaction is used once, whatever happens next.
    let clear = fundament_session::oidc_transaction_cookie(None, 0);
    if state.oidc_provider.is_none() {
        return failed(SignInFailure::Unavailable, "/", &[clear]);
    }
    if let Some(error) = query.error.as_deref() {
        // RFC 6749 §4.1.2.1: a registered code; only that is logged, never the description.
        let error: String = error.chars().filter(char::is_ascii_graphic).take(64).collect();
        tracing::warn!(reason = "provider-error", %error, "oidc sign-in: the provider answered an error");
        let failure =
            if error == "access_denied" { SignInFailure::Denied } else { SignInFailure::ProviderError };
        return failed(failure, "/", &[clear]);
    }
    let Some(transaction) = one_cookie(&headers, fundament_session::OIDC_TRANSACTION_COOKIE) else {
        tracing::warn!(
            reason = "transaction-invalid",
            "oidc sign-in: callback without one transaction cookie"
        );
        return failed(SignInFailure::TransactionInvalid, "/", &[clear]);
    };
    match state.sessions.oidc_finish(&query.code, &query.state, &transaction).await {
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
                return failed(SignInFailure::Failed, "/", &[clear]);
            }
            let mut cookies = vec![clear, session];
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
        // A callback whose state is not the transaction's is another sign-in's (two tabs
        // signing in at once: the second start replaced the cookie): that sign-in keeps its
        // transaction and can still finish. Any other outcome used this one up.
        Err(SignInFailure::StateMismatch) => failed(SignInFailure::StateMismatch, "/", &[]),
        Err(failure) => failed(failure, "/", &[clear]),
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

    /// What authn answers for every callback in these tests.
    #[derive(Debug)]
    struct Finishes(SignInFailure);

    impl crate::state::SessionAuthority for Finishes {
        fn dev_sign_in<'a>(
            &'a self,
            _: &'a str,
        ) -> std::pin::Pin<
            Box<
                dyn Future<Output = Result<crate::state::IssuedSession, crate::state::SignInError>>
                    + Send
                    + 'a,
            >,
        > {
            Box::pin(async { Err(crate::state::SignInError::Failed) })
        }
        fn verify(&self, _: &str) -> Option<crate::state::SessionUser> {
            None
        }
        fn sign_out<'a>(
            &'a self,
            _: &'a str,
        ) -> std::pin::Pin<Box<dyn Future<Output = crate::state::SignOutOutcome> + Send + 'a>> {
            Box::pin(async { crate::state::SignOutOutcome::Ended })
        }
        fn oidc_finish<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
            _: &'a str,
        ) -> std::pin::Pin<
            Box<dyn Future<Output = Result<crate::state::OidcSignedIn, SignInFailure>> + Send + 'a>,
        > {
            let failure = self.0;
            Box::pin(async move { Err(failure) })
        }
    }

    /// Two tabs sign in at once: the first one's callback finds the second one's transaction
    /// (state mismatch) and leaves it, so the second can still finish; any other failure ends
    /// the transaction it used.
    #[tokio::test]
    async fn a_callback_of_another_sign_in_leaves_its_transaction() {
        for (failure, clears) in [(SignInFailure::StateMismatch, false), (SignInFailure::CodeRejected, true)]
        {
            let mut state = crate::resource_views::api::scope_tests::state_with_gateway("http://127.0.0.1:9");
            state.sessions = std::sync::Arc::new(Finishes(failure));
            state.oidc_provider = Some("Test IdP".into());
            let mut headers = HeaderMap::new();
            let cookie = format!("{}=sealed", fundament_session::OIDC_TRANSACTION_COOKIE);
            headers.insert(header::COOKIE, cookie.parse().unwrap());
            let query = CallbackQuery { code: "c".into(), state: "s".into(), error: None };
            let response = callback(State(state), headers, Query(query)).await;
            let cleared = response.headers().get_all(header::SET_COOKIE).iter().any(|c| {
                c.to_str().unwrap().starts_with(&format!("{}=;", fundament_session::OIDC_TRANSACTION_COOKIE))
            });
            assert_eq!(cleared, clears, "{failure:?}");
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
