//! The same contract for both stores: the in-process one and a real `redis-server` (Debian's
//! package, which scripts/setup installs), started here on a free port of loopback.

use std::sync::Arc;
use std::time::Duration;

use fundament_shared_store::testing::{RedisServer, free_port};
use fundament_shared_store::{InProcess, RedisStore, Revoked, SharedStore, now_unix};
use futures::StreamExt;

async fn redis() -> RedisServer {
    RedisServer::start().await
}

fn sid() -> String {
    format!("s-{:x}", rand_u64())
}

fn rand_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos());
    h.finish()
}

async fn single_use_keys(a: &dyn SharedStore, b: &dyn SharedStore) {
    let key = sid();
    assert!(a.take_once(&key, Duration::from_secs(60)).await.unwrap(), "first take");
    assert!(!a.take_once(&key, Duration::from_secs(60)).await.unwrap(), "taken again at the same replica");
    assert!(!b.take_once(&key, Duration::from_secs(60)).await.unwrap(), "taken again at another replica");
    let short = sid();
    assert!(a.take_once(&short, Duration::from_millis(100)).await.unwrap());
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(b.take_once(&short, Duration::from_millis(100)).await.unwrap(), "free again once expired");
}

async fn revocations(a: &dyn SharedStore, b: &dyn SharedStore) {
    let mut heard = b.revocation_events().await.unwrap();
    let live = Revoked { sid: sid(), exp: now_unix() + 3600 };
    // Expired past the verifiers' leeway: no verifier accepts its token any more.
    let old = Revoked { sid: sid(), exp: now_unix() - fundament_tokens::EXP_LEEWAY_SECS - 1 };
    a.revoke(&old).await.unwrap();
    a.revoke(&live).await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(5), heard.next()).await.unwrap().unwrap();
    assert_eq!(first, old, "announced in order");
    let second = tokio::time::timeout(Duration::from_secs(5), heard.next()).await.unwrap().unwrap();
    assert_eq!(second, live);
    let set = b.revoked(now_unix()).await.unwrap();
    assert!(set.contains(&live), "the other replica reads it: {set:?}");
    assert!(!set.contains(&old), "expired entries are not served: {set:?}");
    // Expired, but within the leeway: its token still verifies, so it is still served.
    let recent = Revoked { sid: sid(), exp: now_unix() - 1 };
    a.revoke(&recent).await.unwrap();
    assert!(b.revoked(now_unix()).await.unwrap().contains(&recent));
}

async fn leases(a: &dyn SharedStore, b: &dyn SharedStore) {
    let group = sid();
    let ttl = Duration::from_secs(30);
    assert!(a.lease(&group, "w1", 2, ttl).await.unwrap());
    assert!(b.lease(&group, "w2", 2, ttl).await.unwrap());
    assert!(!a.lease(&group, "w3", 2, ttl).await.unwrap(), "the limit holds across replicas");
    assert!(a.lease(&group, "w1", 2, ttl).await.unwrap(), "renewing a held lease always works");
    assert_eq!(b.leases(&group).await.unwrap(), 2);
    b.release(&group, "w1").await.unwrap();
    assert!(b.lease(&group, "w3", 2, ttl).await.unwrap(), "a released slot is free");
    // A lease that is not renewed lapses: a crashed replica gives its slots back.
    let lapsing = sid();
    assert!(a.lease(&lapsing, "crashed", 1, Duration::from_millis(150)).await.unwrap());
    assert!(!b.lease(&lapsing, "other", 1, ttl).await.unwrap());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(b.lease(&lapsing, "other", 1, ttl).await.unwrap(), "lapsed");
    assert_eq!(a.leases(&lapsing).await.unwrap(), 1);
}

#[tokio::test]
async fn in_process_keeps_the_contract() {
    let store = InProcess::new();
    single_use_keys(&store, &store).await;
    revocations(&store, &store).await;
    leases(&store, &store).await;
    assert!(!store.is_shared());
}

#[tokio::test]
async fn two_replicas_share_redis() {
    let redis = redis().await;
    let a = RedisStore::new(&redis.url).unwrap();
    let b = RedisStore::new(&redis.url).unwrap();
    single_use_keys(&a, &b).await;
    revocations(&a, &b).await;
    leases(&a, &b).await;
    assert!(a.is_shared());
}

#[tokio::test]
async fn redis_down_is_an_error_naming_the_store_and_it_recovers() {
    let port = free_port();
    let store = Arc::new(RedisStore::new(&format!("redis://127.0.0.1:{port}")).unwrap());
    let err = store.take_once("k", Duration::from_secs(5)).await.unwrap_err().to_string();
    assert!(err.contains(&format!("127.0.0.1:{port}")) && err.contains("unavailable"), "{err}");
    assert!(store.revocation_events().await.is_err());

    let server = RedisServer::start_on(port).await;
    assert!(store.take_once("k", Duration::from_secs(5)).await.unwrap(), "connects once it is up");
    let mut events = store.revocation_events().await.unwrap();
    drop(server);
    let ended = tokio::time::timeout(Duration::from_secs(10), events.next()).await.expect("the stream ends");
    assert!(ended.is_none(), "a lost connection ends the event stream");
    assert!(store.take_once("k2", Duration::from_secs(5)).await.is_err(), "down again: an error, not a yes");

    let _back = RedisServer::start_on(port).await;
    let mut ok = false;
    for _ in 0..40 {
        if store.take_once("k3", Duration::from_secs(5)).await.is_ok() {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ok, "reconnects after the server comes back");
}
