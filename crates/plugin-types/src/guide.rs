//! `spec.guides.<Kind>`: what the console tells users about objects of one
//! kind of the plugin, beyond what the CRD says.
//!
//! A CRD describes fields; it does not say what a condition reason means,
//! what a label is for, or what to do when the API server refuses a write.
//! The plugin knows, so it ships that as data and the console renders it for
//! any kind, without plugin-specific code.

use serde::{Deserialize, Serialize};

use crate::serde_util::null_default;

/// The guide of one kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KindGuide {
    /// The labels objects of the kind carry, in the order to show them.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<LabelGuide>,
    /// One row per condition type and reason.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<ConditionAdvice>,
    /// Conditions that summarise others and carry the reason of the first
    /// False one of them (such as a Ready that is False with reason
    /// OverCeiling of Applied).
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub summaries: Vec<Summary>,
    /// What to do about the API server's refusals of a write.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub refusals: Vec<Refusal>,
}

/// One label of the kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LabelGuide {
    #[serde(default, deserialize_with = "null_default")]
    pub key: String,
    /// What its value is.
    #[serde(default, deserialize_with = "null_default")]
    pub description: String,
}

/// What a condition reason means and what the user should do about it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionAdvice {
    /// The condition type, e.g. `Applied`.
    #[serde(rename = "type", default, deserialize_with = "null_default")]
    pub condition_type: String,
    #[serde(default, deserialize_with = "null_default")]
    pub reason: String,
    #[serde(default, deserialize_with = "null_default")]
    pub meaning: String,
    #[serde(default, deserialize_with = "null_default")]
    pub what_to_do: String,
}

/// A condition that reports the reason of the first False of its sources.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Summary {
    /// The summary condition's type, e.g. `Ready`.
    #[serde(rename = "type", default, deserialize_with = "null_default")]
    pub condition_type: String,
    /// The conditions it summarises, in the order it takes the first False one.
    #[serde(default, deserialize_with = "null_default")]
    pub of: Vec<String>,
}

/// One refusal: the fixed pieces of the API server's message, in order (the
/// names the server puts between them are not part of it), and what to do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Refusal {
    #[serde(default, deserialize_with = "null_default")]
    pub contains: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub what_to_do: String,
}

impl KindGuide {
    /// The advice for a condition, or `None` for a reason the plugin does not
    /// describe (a view then shows only the condition's own message rather
    /// than guessing).
    ///
    /// Types and reasons match exactly, as Kubernetes compares them. A summary
    /// condition (see [`Summary`]) carries the reason of its first False
    /// source, so when its own type has no row of that reason, the row of
    /// the first source that has one is returned; its `condition_type` then
    /// names the condition the reason really belongs to, which lets a view say
    /// where the problem is. A reason the summary has a row of itself (its
    /// `Healthy`) keeps that row.
    pub fn advice(&self, condition_type: &str, reason: &str) -> Option<&ConditionAdvice> {
        let row = |ty: &str| self.conditions.iter().find(|a| a.condition_type == ty && a.reason == reason);
        row(condition_type).or_else(|| {
            self.summaries
                .iter()
                .find(|s| s.condition_type == condition_type)
                .and_then(|s| s.of.iter().find_map(|ty| row(ty)))
        })
    }

    /// The description of a label, if the guide has one.
    pub fn label_description(&self, key: &str) -> Option<&str> {
        self.labels.iter().find(|l| l.key == key).map(|l| l.description.as_str())
    }

    /// What to do about a refused write, or `None` if the message is not one
    /// the guide describes.
    ///
    /// The API server wraps the plugin's sentence in its own text (a policy
    /// name, the object's name) and puts names in the middle of it, so only
    /// the fixed pieces are matched, in order, ignoring ASCII case and
    /// collapsing whitespace (kubectl wraps and the server capitalises). A
    /// message may list several refusals; the hint of the one that starts
    /// first is returned, as that is the one the user reads first.
    pub fn refusal_hint(&self, message: &str) -> Option<&str> {
        let text = normalize(message);
        self.refusals
            .iter()
            .filter_map(|r| {
                let pieces: Vec<String> = r.contains.iter().map(|p| collapse(p)).collect();
                find_pieces(&text, &pieces).map(|at| (at, r.what_to_do.as_str()))
            })
            .min_by_key(|(at, _)| *at)
            .map(|(_, hint)| hint)
    }
}

/// Lowercase (ASCII only, so byte offsets stay meaningful) with every run of
/// whitespace turned into one space, trimmed.
fn normalize(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for word in message.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().map(|c| c.to_ascii_lowercase()));
    }
    out
}

/// As [`normalize`], but a piece keeps one space at either end where it had
/// whitespace: "the requester " must be followed by a word.
fn collapse(piece: &str) -> String {
    let mut out = String::with_capacity(piece.len());
    let mut space = false;
    for c in piece.chars() {
        if c.is_whitespace() {
            space = true;
        } else {
            if space {
                out.push(' ');
                space = false;
            }
            out.push(c.to_ascii_lowercase());
        }
    }
    if space {
        out.push(' ');
    }
    out
}

/// Where the pieces occur in order, each between one occurrence of the first
/// piece and the next. Bounding the search keeps two refusals in one message
/// from being stitched together into a third. No pieces, or an empty first
/// piece, match nothing.
fn find_pieces(text: &str, pieces: &[String]) -> Option<usize> {
    let (first, rest) = pieces.split_first()?;
    if first.is_empty() {
        return None;
    }
    let starts: Vec<usize> = text.match_indices(first.as_str()).map(|(at, _)| at).collect();
    starts.iter().enumerate().find_map(|(i, &start)| {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        let mut cursor = start + first.len();
        for piece in rest {
            let found = text.get(cursor..end)?.find(piece.as_str())?;
            cursor += found + piece.len();
        }
        Some(start)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ty: &str, reason: &str, what: &str) -> ConditionAdvice {
        ConditionAdvice {
            condition_type: ty.into(),
            reason: reason.into(),
            meaning: format!("{ty}/{reason}"),
            what_to_do: what.into(),
        }
    }

    fn guide() -> KindGuide {
        KindGuide {
            labels: vec![LabelGuide { key: "x.io/owner".into(), description: "Who owns it.".into() }],
            conditions: vec![
                row("Synced", "Failed", "Fix the source."),
                row("Checked", "Failed", "Fix the check."),
                row("Checked", "Stale", "Wait."),
                row("Ready", "Healthy", "Nothing."),
            ],
            summaries: vec![Summary {
                condition_type: "Ready".into(),
                of: vec!["Synced".into(), "Checked".into()],
            }],
            refusals: vec![
                Refusal {
                    contains: vec!["the user ".into(), " may not touch ".into()],
                    what_to_do: "Ask.".into(),
                },
                Refusal { contains: vec!["name is too long".into()], what_to_do: "Shorten it.".into() },
            ],
        }
    }

    #[test]
    fn summaries_resolve_to_the_first_source_with_a_row() {
        let g = guide();
        assert_eq!(g.advice("Synced", "Failed").unwrap().what_to_do, "Fix the source.");
        let a = g.advice("Ready", "Failed").unwrap();
        assert_eq!((a.condition_type.as_str(), a.what_to_do.as_str()), ("Synced", "Fix the source."));
        assert_eq!(g.advice("Ready", "Stale").unwrap().condition_type, "Checked");
        assert_eq!(g.advice("Ready", "Healthy").unwrap().condition_type, "Ready", "its own row first");
        assert_eq!(g.advice("Synced", "Stale"), None, "only summaries resolve");
        assert_eq!(g.advice("ready", "Failed"), None, "types are case-sensitive");
        assert_eq!(g.advice("Ready", "failed"), None);
        assert_eq!(KindGuide::default().advice("Ready", "Healthy"), None);
    }

    #[test]
    fn labels_are_looked_up_by_key() {
        assert_eq!(guide().label_description("x.io/owner"), Some("Who owns it."));
        assert_eq!(guide().label_description("x.io/other"), None);
    }

    #[test]
    fn refusals_match_their_pieces_in_order() {
        let g = guide();
        assert_eq!(g.refusal_hint("denied: The user\n  bob may NOT touch things"), Some("Ask."));
        assert_eq!(g.refusal_hint("bob may not touch things, the user"), None, "out of order");
        assert_eq!(g.refusal_hint("the userbob may not touch"), None, "the space after a piece counts");
        // The first refusal in the message wins.
        assert_eq!(g.refusal_hint("name is too long; the user bob may not touch x"), Some("Shorten it."));
        // A sentence does not borrow the tail of a later one.
        assert_eq!(g.refusal_hint("the user bob; the user carol, so x may not touch y"), Some("Ask."));
        assert_eq!(
            g.refusal_hint("the user bob is fine; the user carol is fine may not touch it"),
            Some("Ask.")
        );
        assert_eq!(g.refusal_hint("the user bob; name"), None);
        assert_eq!(g.refusal_hint(""), None);
        let empty = KindGuide { refusals: vec![Refusal::default()], ..KindGuide::default() };
        assert_eq!(empty.refusal_hint("anything"), None, "a refusal without pieces matches nothing");
    }
}
