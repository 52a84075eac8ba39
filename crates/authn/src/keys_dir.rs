//! authn's signing keys from a keys directory (`--signing-keys-dir`, a Kubernetes Secret mounted
//! as files, see `fundament_tokens::keys_dir`), reloaded when it changes: every replica of authn
//! signs with the key the directory names and publishes all of its keys, and a rotation is an
//! update of the Secret, with no restart and no sign-out.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use fundament_tokens::{KeyError, Signer, keys_dir};

/// How often the directory is read: a Secret update reaches the pod within its kubelet sync
/// period (about a minute); this adds at most a few seconds.
pub const POLL: Duration = Duration::from_secs(2);

/// Reads the directory every `period` and swaps in its keys when its contents change. A
/// directory that cannot be read (half-written, a key missing) keeps the keys in use, logged
/// once per distinct problem.
pub fn follow(dir: PathBuf, signer: Arc<RwLock<Signer>>, period: Duration) -> tokio::task::JoinHandle<()> {
    // Taken now, not when the task first runs: a change made in between is still a change.
    let mut seen = keys_dir::fingerprint(&dir).ok();
    tokio::spawn(async move {
        let mut last_error: Option<String> = None;
        loop {
            tokio::time::sleep(period).await;
            match reload_if_changed(&dir, &mut seen) {
                Ok(None) => {}
                Ok(Some(next)) => {
                    let kid = next.current_kid().to_string();
                    *signer.write().unwrap_or_else(std::sync::PoisonError::into_inner) = next;
                    last_error = None;
                    tracing::info!(dir = %dir.display(), signing_kid = %kid, "signing keys reloaded");
                }
                Err(error) => {
                    let text = error.to_string();
                    if last_error.as_deref() != Some(text.as_str()) {
                        tracing::warn!(error = %text, "signing keys directory unusable; keeping the keys in use");
                        last_error = Some(text);
                    }
                }
            }
        }
    })
}

fn reload_if_changed(dir: &std::path::Path, seen: &mut Option<u64>) -> Result<Option<Signer>, KeyError> {
    let now = keys_dir::fingerprint(dir)?;
    if *seen == Some(now) {
        return Ok(None);
    }
    let signer = Signer::from_keys_dir(dir)?;
    *seen = Some(now);
    Ok(Some(signer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_change_of_the_directory_is_picked_up_and_a_broken_one_keeps_the_keys() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("one.pem"), keys_dir::generate_pem()).unwrap();
        std::fs::write(dir.path().join("current"), "one").unwrap();
        let signer = Arc::new(RwLock::new(Signer::from_keys_dir(dir.path()).unwrap()));
        let first = signer.read().unwrap().current_kid().to_string();
        let task = follow(dir.path().to_path_buf(), Arc::clone(&signer), Duration::from_millis(20));
        let kids = |s: &Arc<RwLock<Signer>>| s.read().unwrap().jwks()["keys"].as_array().unwrap().len();
        // Until `done` holds, for at most 5 s: the follower reads the directory every 20 ms, but
        // a loaded machine may run it late.
        let until = async |done: &dyn Fn() -> bool| {
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while !done() && std::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };

        std::fs::write(dir.path().join("two.pem"), keys_dir::generate_pem()).unwrap();
        until(&|| kids(&signer) == 2).await;
        assert_eq!(kids(&signer), 2, "the next key is published");
        assert_eq!(signer.read().unwrap().current_kid(), first, "and does not sign yet");

        std::fs::write(dir.path().join("current"), "two").unwrap();
        until(&|| signer.read().unwrap().current_kid() != first).await;
        let second = signer.read().unwrap().current_kid().to_string();
        assert_ne!(second, first, "now it signs");

        // Nothing to wait for when the keys rightly stay: a pause of several reads, then a look.
        std::fs::write(dir.path().join("current"), "three").unwrap();
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert_eq!(signer.read().unwrap().current_kid(), second, "a broken directory keeps the keys");
        task.abort();
    }
}
