//! `/sign-in`, and the same panel on any page opened while signed out.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::{
    api::session::{SignIn, SignInMethods, sign_in_options},
    components::status::{Loading, error_fallback},
};

/// The sign-in page; `?next=` says where to go afterwards.
#[component]
pub fn SignInPage() -> impl IntoView {
    let query = use_query_map();
    let next = query
        .read_untracked()
        .get("next")
        .unwrap_or_else(|| "/".to_owned());
    view! {
        <main id="main" class="grid min-h-screen place-items-center p-6">
            <SignInPanel next />
        </main>
    }
}

/// The sign-in card.
#[component]
pub fn SignInPanel(next: String) -> impl IntoView {
    let options = Resource::new_blocking(|| (), |_| sign_in_options());
    view! {
        <Title text="Sign in" />
        <section class="card mx-auto my-10 w-full max-w-md" aria-labelledby="sign-in-heading">
            <h1 id="sign-in-heading" class="text-2xl font-semibold tracking-tight">"Sign in to Fundament"</h1>
            <Suspense fallback=|| view! { <Loading label="Loading sign-in options…" /> }>
                <ErrorBoundary fallback=error_fallback>
                    {
                        let next = next.clone();
                        move || {
                            let next = next.clone();
                            Suspend::new(async move { options.await.map(|o| view! { <SignInChoices options=o next /> }) })
                        }
                    }
                </ErrorBoundary>
            </Suspense>
        </section>
    }
}

#[component]
fn SignInChoices(options: SignInMethods, next: String) -> impl IntoView {
    let action = expect_context::<ServerAction<SignIn>>();
    let error = move || {
        action
            .value()
            .get()
            .and_then(Result::err)
            .map(|e| e.to_string())
    };
    if !options.mock {
        return view! {
            <p class="mt-2 text-muted">"Single sign-on is not configured for this console. Ask your administrator."</p>
        }
        .into_any();
    }
    view! {
        <p class="mt-2 text-muted">"Development stack: choose a seed user."</p>
        <p role="alert" class="mt-3 text-sm text-danger empty:hidden">{error}</p>
        <ul class="mt-4 space-y-2">
            {options
                .users
                .into_iter()
                .map(|user| {
                    let next = next.clone();
                    let label = format!("Sign in as {}", user.email);
                    view! {
                        <li>
                            <ActionForm action>
                                <input type="hidden" name="email" value=user.email.clone() />
                                <input type="hidden" name="next" value=next />
                                <button type="submit" class="choice" aria-label=label>
                                    <span class="font-medium">{user.name}</span>
                                    <span class="text-sm text-muted">{user.email}</span>
                                    <span class="text-xs text-muted">{user.role}</span>
                                </button>
                            </ActionForm>
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
    .into_any()
}
