//! Sessions for the server functions' tests: a token names its user.

use std::future::Future;
use std::pin::Pin;

use crate::state::{IssuedSession, SessionAuthority, SessionUser, SignInError, SignOutOutcome};

/// Sessions whose token names its user: `token-of-<user>`, or `token-of-<user>#<n>` for a
/// user's n-th session. Any other token is no session; no one signs in.
#[derive(Debug)]
pub struct TokensOfUsers;

impl SessionAuthority for TokensOfUsers {
    fn dev_sign_in<'a>(
        &'a self,
        _: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<IssuedSession, SignInError>> + Send + 'a>> {
        Box::pin(async { Err(SignInError::Failed) })
    }

    fn verify(&self, token: &str) -> Option<SessionUser> {
        let user = token.strip_prefix("token-of-")?.split('#').next()?;
        Some(SessionUser { id: user.to_owned(), email: String::new(), name: String::new() })
    }

    fn sign_out<'a>(&'a self, _: &'a str) -> Pin<Box<dyn Future<Output = SignOutOutcome> + Send + 'a>> {
        Box::pin(async { SignOutOutcome::Ended })
    }
}
