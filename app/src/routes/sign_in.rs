//! `/sign-in`, and the same panel on any page opened while signed out.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::api::session::{SignInFailure, SignInMethods, sign_in_methods};

/// The sign-in page; `?next=` says where to go afterwards, `?error=` why the
/// last attempt failed.
#[component]
pub fn SignInPage() -> impl IntoView {
    view! {
        <main id="main" class="grid min-h-screen place-items-center p-6">
            <SignInPanel next=None />
        </main>
    }
}

/// The sign-in card. Signing in is a plain form post answered with a redirect
/// and a full page load: the same with and without JavaScript.
///
/// Its code is a wasm chunk of its own, loaded only where it is shown: every page shows it
/// when signed out, so it would otherwise be in the main chunk, which every signed-in page's
/// first load downloads too (the sign-in methods and seed users, their deserializers, the
/// choices' views).
/// `next`: where to go after signing in; `None`: the page's `?next=`.
#[component]
pub fn SignInPanel(next: Option<String>) -> impl IntoView {
    crate::chunks::lazy_view(sign_in_panel(next))
}

/// Loads the panel's chunk (before hydrating a page the server rendered with it).
#[cfg(feature = "hydrate")]
pub(crate) async fn preload() {
    __preload_sign_in_panel().await
}

#[lazy]
fn sign_in_panel(next: Option<String>) -> AnyView {
    view! { <div class="contents" data-chunk={crate::chunks::Chunk::SignIn.name()}><Panel next /></div> }
        .into_any()
}

#[component]
fn Panel(next: Option<String>) -> impl IntoView {
    // From the raw query, decoded once: the router's query map decodes its values a second
    // time, which turned a page's `%26` back into a separator (`?q=R%26D` came back as `?q=R&D`).
    // Here, in the panel's chunk, it costs the main wasm nothing.
    let next = next.unwrap_or_else(|| {
        let search = leptos_router::hooks::use_location().search.get_untracked();
        query_value(&search, "next").unwrap_or_else(|| "/".to_owned())
    });
    let query = use_query_map();
    let failure = query.read_untracked().get("error").and_then(|c| SignInFailure::from_code(&c));
    // The page a sign-out lands on: the console's other tabs check their session
    // (`crate::session_end`). Here, in the panel's chunk, it costs the main wasm nothing.
    let methods = sign_in_methods();
    #[cfg(feature = "hydrate")]
    Effect::new(|_| crate::session_end::announce_signed_out());
    view! {
        <Title text="Sign in" />
        <section class="card mx-auto my-10 w-full max-w-md" aria-labelledby="sign-in-heading">
            <h1 id="sign-in-heading" class="text-2xl font-semibold tracking-tight">"Sign in to Fundament"</h1>
            {failure.map(|f| view! { <p role="alert" class="mt-3 text-sm text-danger">{f.message()}</p> })}
            {methods.without_organization.clone().map(|email| view! { <WithoutOrganization email /> })}
            {(failure == Some(SignInFailure::ProviderSignOutFailed)).then(|| view! {
                // The ID token hint was kept for this: the step that ends the provider's session.
                <p class="mt-2 text-sm">
                    <a class="link" href=crate::api::session::OIDC_END_SESSION_PATH rel="external">
                        "Try again to sign out of the identity provider"
                    </a>
                </p>
            })}
            <SignInChoices methods next />
        </section>
    }
}

/// Signed in, but a member of no organization: signing in again would land here again, so the
/// panel says why and offers the way out (another account).
#[component]
fn WithoutOrganization(email: String) -> impl IntoView {
    view! {
        <div role="alert" class="mt-3 rounded-lg border border-danger/40 bg-danger/10 p-3 text-sm" data-without-organization="">
            <p class="font-semibold text-danger">"Your account has no access yet"</p>
            <p class="mt-1">
                {format!(
                    "You are signed in as {email}, but this account is not a member of any organization here, so there is nothing to open. Ask your administrator to add it, or sign in with another account."
                )}
            </p>
            <form method="post" action="/api/sign-out" class="mt-2">
                <button type="submit" class="link">"Sign out"</button>
            </form>
        </div>
    }
}

#[component]
fn SignInChoices(methods: SignInMethods, next: String) -> impl IntoView {
    if !methods.mock && methods.oidc.is_none() {
        return view! {
            <p class="mt-2 text-muted">"Single sign-on is not configured for this console. Ask your administrator."</p>
        }
        .into_any();
    }
    view! {
        {methods.oidc.map(|provider| view! { <ProviderSignIn provider next=next.clone() /> })}
        {methods.mock.then(|| view! { <SeedUsers users=methods.users next=next.clone() /> })}
    }
    .into_any()
}

/// "Sign in with <provider>": a link, because the way to the provider is a navigation
/// (the console's `form-action 'self'` would stop a form's redirect to it). `rel="external"`
/// keeps the client-side router from taking it for one of its own routes.
#[component]
fn ProviderSignIn(provider: String, next: String) -> impl IntoView {
    let href = format!("/sign-in/oidc/start?next={}", query_escape(&next));
    view! {
        <p class="mt-4">
            <a class="choice font-medium" href=href rel="external">
                {format!("Sign in with {provider}")}
            </a>
        </p>
    }
}

/// The first value of `name` in a raw query string (`?a=b&…` or `a=b&…`), form-decoded once:
/// `%XX` escapes and `+` for a space. A malformed escape is kept as it is.
pub(crate) fn query_value(search: &str, name: &str) -> Option<String> {
    let raw = search
        .trim_start_matches('?')
        .split('&')
        .find_map(|pair| pair.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')))?;
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(high), Some(low)) => {
                    out.push((high * 16 + low) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// Percent-encodes a value for a query string (the browser and the server read it back alike).
pub(crate) fn query_escape(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[component]
fn SeedUsers(users: Vec<crate::api::session::SeedUser>, next: String) -> impl IntoView {
    view! {
        <p class="mt-2 text-muted">"Development stack: choose a seed user."</p>
        <ul class="mt-4 space-y-2">
            {users
                .into_iter()
                .map(|user| {
                    view! {
                        <li>
                            <form method="post" action="/api/sign-in">
                                <input type="hidden" name="email" value=user.email.clone() />
                                <input type="hidden" name="next" value=next.clone() />
                                // The accessible name is the visible text ("Sign in as
                                // alice@…"), so speech input users can say what they see.
                                <button type="submit" class="choice">
                                    <span class="font-medium">
                                        <span class="sr-only">"Sign in as "</span>
                                        {user.email}
                                    </span>
                                    <span class="text-sm text-muted">{format!("{} · {}", user.name, user.role)}</span>
                                </button>
                            </form>
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
}

#[cfg(test)]
mod tests {
    use super::query_value;

    /// `next` is decoded once: a page's own escapes (`%26` in its query) survive the sign-in.
    #[test]
    fn the_query_value_is_decoded_once() {
        let search = "?next=%2Fclusters%3Fq%3DR%2526D%2520%252350&error=x";
        assert_eq!(query_value(search, "next").as_deref(), Some("/clusters?q=R%26D%20%2350"));
        assert_eq!(query_value(search, "error").as_deref(), Some("x"));
        assert_eq!(query_value("next=/a+b", "next").as_deref(), Some("/a b"));
        assert_eq!(query_value("?next=%zz%2", "next").as_deref(), Some("%zz%2"), "kept as it is");
        assert_eq!(query_value("?nextpage=1", "next"), None);
        assert_eq!(query_value("", "next"), None);
    }
}
