//! The same contract for both stores: the in-process one and a real `redis-server` (Debian's
//! package, which scripts/setup installs), started here on a free port of loopback.

use std::sync::Arc;
use std::time::Duration;

use fundament_shared_store::testing::{RedisServer, free_port};
use fundament_shared_store::{InProcess, LogBounds, LogRecord, RedisStore, Revoked, SharedStore, now_unix};
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
    // A lease that is not renewed lapses: a crashed replica gives its slots back. Held for 1 s,
    // so that the next call, which must still find it held, comes well within its lifetime
    // however loaded the machine; past it by half a second when asked again.
    let lapsing = sid();
    assert!(a.lease(&lapsing, "crashed", 1, Duration::from_secs(1)).await.unwrap());
    assert!(!b.lease(&lapsing, "other", 1, ttl).await.unwrap());
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(b.lease(&lapsing, "other", 1, ttl).await.unwrap(), "lapsed");
    assert_eq!(a.leases(&lapsing).await.unwrap(), 1);
}

fn record(subs: &[&str], text: &str) -> LogRecord {
    LogRecord { subs: subs.iter().map(|s| s.to_string()).collect(), bytes: text.as_bytes().to_vec() }
}

async fn texts(
    store: &dyn SharedStore,
    log: &str,
    sub: Option<&str>,
    below: u64,
    count: usize,
) -> Vec<(u64, String)> {
    let read = store.read_log(log, sub, below, count).await.unwrap();
    read.into_iter().map(|r| (r.number, String::from_utf8_lossy(&r.bytes).into_owned())).collect()
}

async fn numbers(store: &dyn SharedStore, log: &str, sub: Option<&str>) -> Vec<u64> {
    texts(store, log, sub, u64::MAX, 100).await.into_iter().map(|(n, _)| n).collect()
}

async fn bounded_logs(a: &dyn SharedStore, b: &dyn SharedStore) {
    let log = sid();
    let bounds = LogBounds { keep: 3, idle: Duration::from_secs(60) };
    assert_eq!(a.log_head(&log).await.unwrap(), 0, "a new log has no head");
    assert!(b.read_log(&log, None, u64::MAX, 10).await.unwrap().is_empty());
    // Two replicas append in turn: one numbering, in the order of appending.
    let first = [record(&["alice", "prod"], "one"), record(&["bob", "prod"], "two")];
    assert_eq!(a.append(&log, &sid(), &first, bounds).await.unwrap(), 2);
    assert_eq!(b.append(&log, &sid(), &[record(&["alice"], "three with spaces")], bounds).await.unwrap(), 3);
    assert_eq!(
        b.append(&log, &sid(), &[], bounds).await.unwrap(),
        3,
        "nothing appended: the head is unchanged"
    );
    assert_eq!(
        texts(a, &log, None, u64::MAX, 10).await,
        [(3, "three with spaces".to_string()), (2, "two".into()), (1, "one".into())],
        "newest first"
    );
    assert_eq!(
        texts(b, &log, Some("alice"), u64::MAX, 10).await,
        [(3, "three with spaces".to_string()), (1, "one".into())]
    );
    assert_eq!(numbers(b, &log, Some("prod")).await, [2, 1]);
    assert!(b.read_log(&log, Some("carol"), u64::MAX, 10).await.unwrap().is_empty());
    // Pages: below the last number read, so many at a time.
    assert_eq!(texts(b, &log, None, 3, 1).await, [(2, "two".to_string())]);
    assert_eq!(texts(b, &log, None, 2, 5).await, [(1, "one".to_string())]);
    assert!(b.read_log(&log, None, 1, 5).await.unwrap().is_empty());
    assert_eq!(texts(b, &log, Some("alice"), 3, 5).await, [(1, "one".to_string())]);
    // Binary records come back as they went in.
    let bytes = vec![0u8, 255, b' ', b'\n', 7];
    a.append(&log, &sid(), &[LogRecord { subs: vec!["bob".into()], bytes: bytes.clone() }], bounds)
        .await
        .unwrap();
    assert_eq!(b.read_log(&log, Some("bob"), u64::MAX, 1).await.unwrap()[0].bytes, bytes);
    // The newest `keep` are kept; a sub-log shows only what the log still keeps.
    for i in 0..3 {
        a.append(&log, &sid(), &[record(&["alice"], &format!("more {i}"))], bounds).await.unwrap();
    }
    assert_eq!(b.log_head(&log).await.unwrap(), 7);
    assert_eq!(numbers(b, &log, None).await, [7, 6, 5]);
    assert_eq!(numbers(b, &log, Some("alice")).await, [7, 6, 5]);
    assert!(numbers(b, &log, Some("bob")).await.is_empty(), "bob's are gone from the log");
    assert!(numbers(b, &log, Some("prod")).await.is_empty());
    // Idle past its bound, a log's records go; its numbering goes on. Idle for 1 s: the reads
    // after the second append, which must still find it, come well within that however loaded
    // the machine; the pause is half a second past it.
    let quiet = sid();
    let short = LogBounds { keep: 10, idle: Duration::from_secs(1) };
    a.append(&quiet, &sid(), &[record(&["alice"], "soon gone")], short).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(numbers(b, &quiet, None).await.is_empty(), "gone when idle");
    assert!(numbers(b, &quiet, Some("alice")).await.is_empty(), "its sub-logs too");
    assert_eq!(
        b.append(&quiet, &sid(), &[record(&["alice"], "next")], short).await.unwrap(),
        2,
        "numbers never repeat"
    );
    assert_eq!(numbers(a, &quiet, Some("alice")).await, [2]);

    // A batch appended again (a retry after a lost answer) is not listed twice.
    let retried = sid();
    let batch = sid();
    let again = [record(&["carol"], "retried")];
    assert_eq!(a.append(&retried, &batch, &again, bounds).await.unwrap(), 1);
    assert_eq!(
        b.append(&retried, &batch, &again, bounds).await.unwrap(),
        1,
        "the same batch: nothing appended"
    );
    assert_eq!(numbers(b, &retried, Some("carol")).await, [1]);
    assert_eq!(b.append(&retried, &sid(), &again, bounds).await.unwrap(), 2, "another batch is appended");
}

#[tokio::test]
async fn in_process_keeps_the_contract() {
    let store = InProcess::new();
    single_use_keys(&store, &store).await;
    revocations(&store, &store).await;
    leases(&store, &store).await;
    bounded_logs(&store, &store).await;
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
    bounded_logs(&a, &b).await;
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
