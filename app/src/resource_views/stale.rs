//! What a live view (the generated list and detail) shows when reading its content again fails
//! for a passing reason (the console or the cluster unreachable for a moment, this browser
//! offline): the content on screen stays, said to be out of date, and the view asks again after
//! `RETRY_SECONDS` (or the service's `Retry-After`, counted down by the error page's own
//! `RetryIn`) until an answer comes. Before, a refresh that a watch event started and that failed so
//! replaced the table or the object with the error until the next try. A failure that asking
//! again cannot change (forbidden, not found: the object was deleted), or the answer to another
//! question (a new filter), is shown as it is.

use leptos::prelude::*;

use crate::components::status::{RETRY_SECONDS, RetryIn};
use crate::error::AppError;

/// Why the content on screen could not be read again, and in how many seconds it is asked again.
pub type Stale = (String, u32);

/// The answer on screen and the question it answers (`K`: a list's query; `()` for an object),
/// and why it could not be read again, while it cannot.
pub struct KeptAnswer<K: Send + Sync + 'static, T: Send + Sync + 'static> {
    shown: StoredValue<Option<(K, T)>>,
    pub stale: RwSignal<Option<Stale>>,
}

impl<K: Send + Sync + 'static, T: Send + Sync + 'static> Clone for KeptAnswer<K, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K: Send + Sync + 'static, T: Send + Sync + 'static> Copy for KeptAnswer<K, T> {}

impl<K: Send + Sync + 'static, T: Send + Sync + 'static> Default for KeptAnswer<K, T> {
    fn default() -> Self {
        Self { shown: StoredValue::new(None), stale: RwSignal::new(None) }
    }
}

impl<K, T> KeptAnswer<K, T>
where
    K: PartialEq + Clone + Send + Sync + 'static,
    T: Clone + Send + Sync + 'static,
{
    /// Keeps what `resource` shows, whose answers answer `question()` at the time they come:
    /// hydrated from the server's answer, or read since.
    pub fn remember(self, resource: Resource<Result<T, AppError>>, question: impl Fn() -> K + 'static)
    where
        T: serde::Serialize + serde::de::DeserializeOwned,
    {
        Effect::new(move |_| {
            resource.with(|answer| {
                if let Some(Ok(value)) = answer {
                    self.shown.set_value(Some((question(), value.clone())));
                }
            })
        });
    }

    /// The answer to show for `answer` to `asked` (the one on screen, on a passing failure to
    /// read the same again), noting whether it is out of date. The view may be gone by the
    /// answer (its stored value and signals with it): then `answer` as it is.
    pub fn settle(self, asked: &K, answer: Result<T, AppError>) -> Result<T, AppError> {
        let (answer, stale) = match answer {
            Ok(value) => (Ok(value), None),
            Err(error) => {
                let wait = error.retry_after().unwrap_or(RETRY_SECONDS);
                self.shown
                    .try_with_value(|shown| {
                        keep_shown_on_passing_failure(asked, Err(error.clone()), shown.as_ref())
                    })
                    .map(|(answer, why)| (answer, why.map(|why| (why, wait))))
                    .unwrap_or((Err(error), None))
            }
        };
        self.stale.try_set(stale);
        answer
    }
}

/// What a view shows for `answer` to `asked`, given what is on screen (`shown`, with the
/// question it answers), and why that is shown instead, if it is.
pub fn keep_shown_on_passing_failure<K: PartialEq, T: Clone>(
    asked: &K,
    answer: Result<T, AppError>,
    shown: Option<&(K, T)>,
) -> (Result<T, AppError>, Option<String>) {
    match (answer, shown) {
        (Err(error), Some((question, value))) if error.is_passing() && question == asked => {
            (Ok(value.clone()), Some(error.to_string()))
        }
        (answer, _) => (answer, None),
    }
}

/// Above the content while it is out of date: `what` is "The list" or "The object"; `retry`
/// reads it again when the count is down.
#[component]
pub fn StaleNote(stale: RwSignal<Option<Stale>>, what: &'static str, retry: Callback<()>) -> impl IntoView {
    move || {
        stale.get().map(|(why, wait)| {
            view! {
                <p role="status" data-stale="" class="mb-3 rounded-lg border border-line bg-raised p-3 text-sm">
                    {format!(
                        "{what} could not be refreshed: {why} It shows what was loaded last; the console tries again."
                    )}
                    " "<RetryIn seconds=wait retry />
                </p>
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::keep_shown_on_passing_failure;
    use crate::error::AppError;

    #[test]
    fn a_passing_failure_to_refresh_keeps_what_is_shown_and_says_why() {
        let shown = ("web", 7);
        let down =
            || AppError::Unavailable { message: "The cluster does not answer.".into(), retry_after: None };
        assert_eq!(
            keep_shown_on_passing_failure(&"web", Err(down()), Some(&shown)),
            (Ok(7), Some("The cluster does not answer.".into()))
        );
        assert_eq!(
            keep_shown_on_passing_failure(
                &"web",
                Err(AppError::Transport(leptos::server_fn::error::ServerFnErrorErr::Request("reset".into()))),
                Some(&shown)
            )
            .0,
            Ok(7)
        );
        // A fresh answer replaces it; another question's failure, a failure asking again cannot
        // change, or nothing shown yet: the error as it is.
        assert_eq!(keep_shown_on_passing_failure(&"web", Ok(8), Some(&shown)), (Ok(8), None));
        assert_eq!(keep_shown_on_passing_failure(&"db", Err(down()), Some(&shown)), (Err(down()), None));
        for lasting in [AppError::Forbidden("no".into()), AppError::NotFound("DemoItem web".into())] {
            assert_eq!(
                keep_shown_on_passing_failure(&"web", Err(lasting.clone()), Some(&shown)),
                (Err(lasting), None)
            );
        }
        assert_eq!(keep_shown_on_passing_failure::<_, i32>(&"web", Err(down()), None), (Err(down()), None));
    }
}
