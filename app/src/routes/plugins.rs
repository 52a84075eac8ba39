//! `/plugins`: the plugins of the selected cluster.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::routes::{PageHeader, with_session};

/// Plugin overview.
#[component]
pub fn PluginsPage() -> impl IntoView {
    view! {
        <Title text="Plugins" />
        {with_session(|s| view! {
            <PageHeader title="Plugins" subtitle=format!("Plugins installed on {}.", s.selected_cluster) />
            <div class="card">
                <p class="font-medium">"Plugin discovery is not part of this build yet."</p>
                <p class="mt-1 text-sm text-muted">
                    "Once it is, every running plugin of the cluster is listed here and gets its own group in the sidebar."
                </p>
            </div>
        })}
    }
}
