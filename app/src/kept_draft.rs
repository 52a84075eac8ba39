//! A form's unsaved edits, kept across the sign-in that follows the end of a session.
//!
//! Before, a session that ended under an edited form (expired, revoked, signed out in another
//! tab) left the user a choice between the edits and the way back in: "Sign in again" is a
//! page load, so it lost what was typed, and a page that stayed could save nothing. Now that
//! link keeps the form's edits in the tab's `sessionStorage` (the console's origin only, this
//! tab only, gone with it: plugin pages are on origins of their own) and the same form, opened
//! again at the same address by the same user within [`MAX_AGE_MS`], takes them back once.
//! Anyone else, anywhere else or later, gets nothing, and the draft is dropped.
//!
//! What is kept is the form's own text ([`KeptDraft::form`], its values, labels, YAML and the
//! resourceVersion it was loaded at): a change someone else made meanwhile is then refused as
//! a conflict at the save, never overwritten. Here only the record and the rules, so that they
//! are tested apart from the browser (`crate::leave_guard` keeps and takes it).

use serde::{Deserialize, Serialize};

/// The `sessionStorage` key of the one draft a tab keeps.
pub const STORAGE_KEY: &str = "fundament-kept-draft";

/// How long a kept draft waits for its user: a sign-in takes a minute or two, through an
/// identity provider a few more; an hour later the object, or the user's intent, has moved on.
pub const MAX_AGE_MS: f64 = 60.0 * 60.0 * 1000.0;

/// One form's edits, whose they are and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeptDraft {
    /// The user's id (`crate::api::session::Viewer::id`), not a name: two users may share one.
    pub user: String,
    /// The form's path and query.
    pub page: String,
    /// When it was kept (milliseconds since the epoch, the browser's clock).
    pub kept_at_ms: f64,
    /// The form's own record of its edits.
    pub form: String,
}

impl KeptDraft {
    /// The stored text; anything else than a draft (another version's, a hand edit) is `None`.
    pub fn parse(text: &str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }

    pub fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The form's edits, when `user` is back at `page` within [`MAX_AGE_MS`] of the keeping (a
    /// clock set back counts as late, not as early).
    pub fn returned_to(self, user: &str, page: &str, now_ms: f64) -> Option<String> {
        let age = now_ms - self.kept_at_ms;
        let in_time = (0.0..=MAX_AGE_MS).contains(&age);
        (in_time && self.user == user && self.page == page).then_some(self.form)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft() -> KeptDraft {
        KeptDraft {
            user: "alice-id".into(),
            page: "/plugin-resources/x/demoitems.demo.fundament.io/a?ns=default&edit=1".into(),
            kept_at_ms: 1_000_000.0,
            form: r#"{"labels":"team=a"}"#.into(),
        }
    }

    #[test]
    fn the_same_user_back_at_the_same_page_in_time_takes_the_edits() {
        let d = draft();
        let (user, page) = (d.user.clone(), d.page.clone());
        let back = KeptDraft::parse(&d.to_text()).expect("its own text");
        assert_eq!(back, d);
        assert_eq!(
            back.returned_to(&user, &page, 1_000_000.0 + MAX_AGE_MS).as_deref(),
            Some(d.form.as_str())
        );
    }

    #[test]
    fn another_user_another_page_or_too_late_takes_nothing() {
        let d = draft();
        assert_eq!(d.clone().returned_to("bob-id", &d.page, d.kept_at_ms + 1.0), None);
        // The detail page and the edit form share a path: the query tells them apart.
        let detail = d.page.replace("&edit=1", "");
        assert_eq!(d.clone().returned_to(&d.user, &detail, d.kept_at_ms + 1.0), None);
        assert_eq!(d.clone().returned_to(&d.user, &d.page, d.kept_at_ms + MAX_AGE_MS + 1.0), None);
        assert_eq!(d.clone().returned_to(&d.user, &d.page, d.kept_at_ms - 1.0), None);
    }

    #[test]
    fn what_is_not_a_draft_is_none() {
        for text in [
            "",
            "null",
            "{}",
            r#"{"user":"a"}"#,
            "not json",
            r#"{"user":1,"page":"/","kept_at_ms":0,"form":""}"#,
        ] {
            assert_eq!(KeptDraft::parse(text), None, "{text}");
        }
    }
}
