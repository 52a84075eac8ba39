//! Frame tickets are single-use: plugin-proxy remembers each ticket it took
//! until the ticket would have expired anyway, so a ticket copied from a URL,
//! a log or a history entry opens nothing. Bounded: when full, expired
//! entries go first; a table full of live tickets refuses new ones (which
//! then fail like a used ticket) rather than forgetting a live one.

use std::collections::HashMap;
use std::sync::Mutex;

/// Tickets live a minute; this is room for a thousand frame loads a second.
pub const CAPACITY: usize = 100_000;

#[derive(Debug, Default)]
pub struct UsedTickets {
    used: Mutex<HashMap<String, i64>>,
}

impl UsedTickets {
    /// Takes the ticket `jti` (valid until `exp`): true the first time, false after.
    pub fn take(&self, jti: &str, exp: i64, now: i64) -> bool {
        let mut used = self.used.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if used.contains_key(jti) {
            return false;
        }
        if used.len() >= CAPACITY {
            // Past `exp` plus the verifier's leeway a ticket is refused anyway.
            used.retain(|_, e| *e + 60 > now);
            if used.len() >= CAPACITY {
                tracing::warn!("frame tickets: the table of used tickets is full; refusing new ones");
                return false;
            }
        }
        used.insert(jti.to_string(), exp);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticket_is_taken_once() {
        let t = UsedTickets::default();
        assert!(t.take("a", 100, 0));
        assert!(!t.take("a", 100, 0));
        assert!(t.take("b", 100, 0));
    }
}
