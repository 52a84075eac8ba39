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

/// The first line of a stored draft: another version's is not read.
const FORMAT: &str = "fundament-kept-draft/1";

/// The `sessionStorage` key of the one draft a tab keeps.
pub const STORAGE_KEY: &str = "fundament-kept-draft";

/// How long a kept draft waits for its user: a sign-in takes a minute or two, through an
/// identity provider a few more; an hour later the object, or the user's intent, has moved on.
pub const MAX_AGE_MS: u64 = 60 * 60 * 1000;

/// One form's edits, whose they are and where. Stored as five lines, the form's record last
/// (it may hold line breaks; the others cannot, or they would not match on return): JSON here
/// would put its reader in the main wasm, which every first load downloads (issue 16).
#[derive(Debug, Clone, PartialEq)]
pub struct KeptDraft {
    /// The user's id (`crate::api::session::Viewer::id`), not a name: two users may share one.
    pub user: String,
    /// The form's path and query.
    pub page: String,
    /// When it was kept (milliseconds since the epoch, the browser's clock).
    pub kept_at_ms: u64,
    /// The form's own record of its edits.
    pub form: String,
}

impl KeptDraft {
    /// The stored text; anything else than a draft (another version's, a hand edit) is `None`.
    pub fn parse(text: &str) -> Option<Self> {
        let mut lines = text.splitn(5, '\n');
        if lines.next()? != FORMAT {
            return None;
        }
        let kept_at_ms = lines.next()?.parse().ok()?;
        let (user, page, form) = (lines.next()?, lines.next()?, lines.next()?);
        Some(Self { user: user.to_owned(), page: page.to_owned(), kept_at_ms, form: form.to_owned() })
    }

    pub fn to_text(&self) -> String {
        format!("{FORMAT}\n{}\n{}\n{}\n{}", self.kept_at_ms, self.user, self.page, self.form)
    }

    /// The form's edits, when `user` is back at `page` within [`MAX_AGE_MS`] of the keeping (a
    /// clock set back counts as late, not as early).
    pub fn returned_to(self, user: &str, page: &str, now_ms: u64) -> Option<String> {
        // Whole milliseconds: parsing or writing a float would bring float formatting into the
        // main wasm (about 10 KB).
        let in_time = now_ms.checked_sub(self.kept_at_ms).is_some_and(|age| age <= MAX_AGE_MS);
        let one_line = !user.contains('\n') && !page.contains('\n');
        (in_time && one_line && self.user == user && self.page == page).then_some(self.form)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft() -> KeptDraft {
        KeptDraft {
            user: "alice-id".into(),
            page: "/plugin-resources/x/demoitems.demo.fundament.io/a?ns=default&edit=1".into(),
            kept_at_ms: 1_000_000,
            form: r#"{"labels":"team=a"}"#.into(),
        }
    }

    #[test]
    fn the_same_user_back_at_the_same_page_in_time_takes_the_edits() {
        let d = draft();
        let (user, page) = (d.user.clone(), d.page.clone());
        let back = KeptDraft::parse(&d.to_text()).expect("its own text");
        assert_eq!(back, d);
        assert_eq!(back.returned_to(&user, &page, 1_000_000 + MAX_AGE_MS).as_deref(), Some(d.form.as_str()));
    }

    #[test]
    fn another_user_another_page_or_too_late_takes_nothing() {
        let d = draft();
        assert_eq!(d.clone().returned_to("bob-id", &d.page, d.kept_at_ms + 1), None);
        // The detail page and the edit form share a path: the query tells them apart.
        let detail = d.page.replace("&edit=1", "");
        assert_eq!(d.clone().returned_to(&d.user, &detail, d.kept_at_ms + 1), None);
        assert_eq!(d.clone().returned_to(&d.user, &d.page, d.kept_at_ms + MAX_AGE_MS + 1), None);
        assert_eq!(d.clone().returned_to(&d.user, &d.page, d.kept_at_ms - 1), None);
    }

    #[test]
    fn what_is_not_a_draft_is_none() {
        for text in [
            "",
            "{}",
            "fundament-kept-draft/1",
            "fundament-kept-draft/1\nsoon\nalice-id\n/\n{}",
            "fundament-kept-draft/1\n0\nalice-id\n/",
            "fundament-kept-draft/0\n0\nalice-id\n/\n{}",
        ] {
            assert_eq!(KeptDraft::parse(text), None, "{text}");
        }
    }

    #[test]
    fn a_form_record_over_several_lines_comes_back_whole() {
        let d = KeptDraft { form: "{\n\"yaml\": \"a: 1\\nb: 2\"\n}\n".into(), ..draft() };
        assert_eq!(KeptDraft::parse(&d.to_text()), Some(d));
    }

    #[test]
    fn a_user_or_page_over_two_lines_takes_nothing_back() {
        // Stored, it would read as another user and page (the lines shift): never a match.
        let d = KeptDraft { user: "alice\nid".into(), ..draft() };
        let back = KeptDraft::parse(&d.to_text()).expect("five lines and more");
        assert_eq!(back.clone().returned_to("alice\nid", &d.page, d.kept_at_ms), None);
        assert_eq!(back.returned_to("alice", &d.page, d.kept_at_ms), None);
    }
}
